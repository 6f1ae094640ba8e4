// step.c: -D, the strong normal form one interaction at a time, the whole
// term printed after each with the name of the rule that ran (as HVM4
// prints it). The WNF core is compiled a second time here, recording each
// rule's id in Wnf.rule (WNF_RULES); only -D runs this copy, so the normal
// one pays nothing for the names.

#define WNF_RULES
#define wnf_run wnf_run_rules
#include <stdio.h>
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "heap/heap.h"
#include "lang/print.h"
#include "core/rules.h"
#include "cpu/step.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

Term eval_wnf_run_rules(Wnf *w, Term t) {
  return wnf_run_rules(w, t);
}

// Rule names
// ==========
// The names HVM4 prints after each step's separator line.

static const char *RULE_NAMES[R_FIXED] = {
  [R_APP_LAM]         = "APP-LAM",         [R_APP_SUP]         = "APP-SUP",
  [R_APP_ERA]         = "APP-ERA",         [R_APP_INC]         = "APP-INC",
  [R_APP_MAT_SUP]     = "APP-MAT-SUP",     [R_MAT_INC]         = "MAT-INC",
  [R_USE_VAL]         = "USE-VAL",         [R_USE_SUP]         = "USE-SUP",
  [R_USE_ERA]         = "USE-ERA",         [R_USE_INC]         = "USE-INC",
  [R_APP_MAT_CTR_MAT] = "APP-MAT-CTR-MAT", [R_APP_MAT_CTR_MIS] = "APP-MAT-CTR-MIS",
  [R_APP_MAT_NUM_MAT] = "APP-MAT-NUM-MAT", [R_APP_MAT_NUM_MIS] = "APP-MAT-NUM-MIS",
  [R_DUP_SUP]         = "DUP-SUP",         [R_OP2_NUM_NUM]     = "OP2-NUM-NUM",
  [R_OP2_SUP]         = "OP2-SUP",         [R_OP2_ERA]         = "OP2-ERA",
  [R_OP2_INC_X]       = "OP2-INC-X",       [R_OP2_NUM_SUP]     = "OP2-NUM-SUP",
  [R_OP2_NUM_ERA]     = "OP2-NUM-ERA",     [R_OP2_INC_Y]       = "OP2-INC-Y",
  [R_EQL_ERA_L]       = "EQL-ERA-L",       [R_EQL_ANY]         = "1",
  [R_EQL_SUP_L]       = "EQL-SUP-L",       [R_EQL_INC_L]       = "EQL-INC-L",
  [R_EQL_ERA_R]       = "EQL-ERA-R",       [R_EQL_SUP_R]       = "EQL-SUP-R",
  [R_EQL_INC_R]       = "EQL-INC-R",
  [R_AND_ZER]         = "AND-ZER",         [R_AND_ONE]         = "AND-ONE",
  [R_OR_ZER]          = "OR-ZER",          [R_OR_ONE]          = "OR-ONE",
  [R_AND_ERA]         = "AND-ERA",         [R_OR_ERA]          = "OR-ERA",
  [R_AND_SUP]         = "AND-SUP",         [R_OR_SUP]          = "OR-SUP",
  [R_AND_INC]         = "AND-INC",         [R_OR_INC]          = "OR-INC",
  [R_DSU_NUM]         = "DSU-NUM",         [R_DDU_NUM]         = "DDU-NUM",
  [R_DSU_SUP]         = "DSU-SUP",         [R_DDU_SUP]         = "DDU-SUP",
  [R_DSU_ERA]         = "DSU-ERA",         [R_DDU_ERA]         = "DDU-ERA",
  [R_DSU_INC]         = "DSU-INC",         [R_DDU_INC]         = "DDU-INC",
  [R_APP_RED_ERA]     = "APP-RED-ERA",     [R_APP_RED_SUP]     = "APP-RED-SUP",
  [R_APP_RED_INC]     = "APP-RED-INC",     [R_APP_RED_LAM]     = "APP-RED-LAM",
  [R_APP_RED_RED]     = "APP-RED-RED",     [R_APP_RED_NAM]     = "APP-RED-NAM",
  [R_APP_RED_DRY]     = "APP-RED-DRY",     [R_APP_RED_CTR]     = "APP-RED-CTR",
  [R_APP_RED_MAT_ERA] = "APP-RED-MAT-ERA", [R_APP_RED_MAT_SUP] = "APP-RED-MAT-SUP",
  [R_APP_RED_MAT_INC] = "APP-RED-MAT-INC",
  [R_APP_RED_MAT_CTR_MAT] = "APP-RED-MAT-CTR-MAT",
  [R_APP_RED_MAT_CTR_MIS] = "APP-RED-MAT-CTR-MIS",
  [R_APP_RED_MAT_NUM_MAT] = "APP-RED-MAT-NUM-MAT",
  [R_APP_RED_MAT_NUM_MIS] = "APP-RED-MAT-NUM-MIS",
  [R_APP_RED_USE_ERA] = "APP-RED-USE-ERA", [R_APP_RED_USE_SUP] = "APP-RED-USE-SUP",
  [R_APP_RED_USE_INC] = "APP-RED-USE-INC", [R_APP_RED_USE_VAL] = "APP-RED-USE-VAL",
  [R_WNF_UNS]         = "WNF-UNS",
};

// DUP of a value: named by the value's tag.
static const char *dup_name(u32 t) {
  switch (t) {
    case SUP: return "DUP-SUP";
    case LAM: return "DUP-LAM";
    case DRY: return "DUP-DRY";
    case RED: return "DUP-RED";
    default:  return wnf_is_nam(t) ? "DUP-NAM" : "DUP-NOD";
  }
}

// (a === b) of two values: named by both tags.
static const char *eql_name(u32 a, u32 b) {
  if (a == ANY || b == ANY)                     return "1";
  if (a == NUM && b == NUM)                     return "EQL-NUM";
  if (a == LAM && b == LAM)                     return "EQL-LAM";
  if (IS_CTR(a) && IS_CTR(b))                   return "EQL-CTR-MIS";
  if ((a == MAT || a == SWI) && (b == MAT || b == SWI)) return "EQL-MAT-MIS";
  if (a == USE && b == USE)                     return "EQL-USE";
  if (wnf_is_nam(a) && wnf_is_nam(b))           return "-";
  if (a == DRY && b == DRY)                     return "EQL-DRY";
  return "EQL-NOT";
}

static const char *rule_name(u32 rule) {
  if (rule >= R_EQL) return eql_name((rule - R_EQL) >> 7, (rule - R_EQL) & 0x7F);
  if (rule >= R_DUP) return dup_name(rule - R_DUP);
  return rule < R_FIXED ? RULE_NAMES[rule] : NULL;
}

// Stepping
// ========

int step_begin(u32 root) {
  Step *s = &RT->cpu->step;
  if (s->root) return 0;
  s->root = root;
  if (!RT->cpu->conf.silent) {
    print_term(stdout, RT->heap.at[root]);
    putchar('\n');
  }
  return 1;
}

void step_end(void) {
  RT->cpu->step.root = 0;
}

// A budget of one interaction per eval_wnf call.
void step_wnf_at(Wnf *w, u32 loc) {
  for (;;) {
    u64 before = w->itrs;
    w->budget = before + 1;
    Term r = eval_wnf_named(w, RT->heap.at[loc]);
    w->budget = ~0ull;
    RT->heap.at[loc] = r;
    if (w->itrs == before) return;
    u32 root = RT->cpu->step.root;
    if (!RT->cpu->conf.silent && root) {
      const char *name = rule_name(w->rule);
      for (int i = 0; i < 40; i++) putchar('-');
      if (name) printf(" %s", name);
      putchar('\n');
      print_term(stdout, RT->heap.at[root]);
      putchar('\n');
    }
  }
}
