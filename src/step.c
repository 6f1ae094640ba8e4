// step.c: the WNF core compiled a second time, recording in Wnf.rule the id
// of each interaction it runs (WNF_RULES), for -D. Only -D runs this copy,
// so the normal one pays nothing for the names.

#define WNF_RULES
#define wnf_run wnf_run_rules
#include "cpu.h"
#include "eval.h"

Term eval_wnf_run_rules(Wnf *w, Term t) {
  return wnf_run_rules(w, t);
}
