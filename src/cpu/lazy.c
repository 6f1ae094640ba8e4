// lazy.c: the WNF core compiled a third time, copying the book a node at a
// time as HVM4 does (wnf.h, "Copying the book lazily"). Only a run that
// started over after meeting a DUP again while reducing it uses this copy
// (eval_lazy_book), so the normal one copies whole definitions.

#define WNF_LAZY_BOOK
#define WNF_LAZY_MOVED(w, from, to) snf_lazy_moved(from, to)
#define wnf_run wnf_run_lazy
#include "cpu/snf.h"   // before the core, whose moves it watches
#include "cpu/cpu.h"
#include "cpu/eval.h"

Term eval_wnf_run_lazy(Wnf *w, Term t) {
  return wnf_run_lazy(w, t);
}
