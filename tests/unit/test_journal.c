// test_journal.c: the journal of a run that may start over (run/journal.c).
// A program cannot make its run started over ask for other effects than
// the first run did (both evaluate the same program in the same order), so
// the mismatch errors are provoked here, on the journal itself: effects
// and lines recorded, then replayed with a call or a line that differs.
// Also: results rebuilt as data (a string), a result that is not data
// refusing the replay, and what a replay left unasked.

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include "heap/heap.h"
#include "cpu/eval.h"
#include "lang/names.h"
#include "lang/print.h"
#include "run/journal.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"
#include "run/run_rt.h"

static jmp_buf CAUGHT;
static char    MSG[512];

static void on_fatal(const char *kind, const char *msg) {
  snprintf(MSG, sizeof MSG, "%s%s", kind ? kind : "", msg);
  longjmp(CAUGHT, 1);
}

static Term pri(u32 id) {
  return TERM(PRI, id, 0);
}

// One effect call as prim_host makes it: the result `r` when performed.
static Term call(Wnf *w, u32 id, u64 key, Term r) {
  Term out;
  journal_call();
  if (journal_effect(w, pri(id), key, &out)) return journal_result(out);
  return journal_result(r);
}

static Term cell(u32 tag, u32 ext, Term a, Term b) {
  u32 at = nodes(2);
  RT->heap.at[at + 0] = a;
  RT->heap.at[at + 1] = b;
  return TERM(tag, ext, at);
}

// The string "ok" built by hand: [#Chr{111}, #Chr{107}].
static Term ok_string(void) {
  u32 c1 = nodes(1), c2 = nodes(1);
  RT->heap.at[c1] = TERM(NUM, 0, 'o');
  RT->heap.at[c2] = TERM(NUM, 0, 'k');
  Term tail = cell(C00 + 2, CTR_CON, TERM(C00 + 1, CTR_CHR, c2), TERM(C00, CTR_NIL, 0));
  return cell(C00 + 2, CTR_CON, TERM(C00 + 1, CTR_CHR, c1), tail);
}

static int printed_as(Term t, const char *want) {
  char  *text = NULL;
  size_t len  = 0;
  FILE  *f    = open_memstream(&text, &len);
  print_term(f, t);
  fclose(f);
  int same = strcmp(text, want) == 0;
  if (!same) printf("printed %s, wanted %s\n", text, want);
  free(text);
  return same;
}

// Records: %log("x") -> [], %rand -> 7, %read_file -> #OK{"ok"}; the lines
// "1" and "2".
static void record(Wnf *w) {
  journal_start(1);
  call(w, PRIM_LOG, journal_hash(JOURNAL_SEED, "x", 1), TERM(C00, CTR_NIL, 0));
  call(w, PRIM_RAND, JOURNAL_SEED, TERM(NUM, 0, 7));
  Term ok = TERM(C00 + 1, CTR_OK, nodes(1));
  RT->heap.at[VAL(ok)] = ok_string();
  call(w, PRIM_READ_FILE, journal_hash(JOURNAL_SEED, "f", 1), ok);
  CHECK(journal_line("1", 1) == 1);
  CHECK(journal_line("2", 1) == 1);
}

int main(void) {
  if (heap_init(1u << 20) != 0 || journal_open() != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  RT->cpu->conf.threads = 1;
  eval_init();
  eval_set_fatal(on_fatal);
  Wnf *w = eval_worker(0);

  // Replayed: the same calls get the journaled results, rebuilt; the lines
  // are not printed again; past the journal, calls are performed.
  record(w);
  CHECK(journal_replay() == 1);
  CHECK(call(w, PRIM_LOG, journal_hash(JOURNAL_SEED, "x", 1), TERM(NUM, 0, 99)) ==
        TERM(C00, CTR_NIL, 0));
  CHECK(call(w, PRIM_RAND, JOURNAL_SEED, TERM(NUM, 0, 99)) == TERM(NUM, 0, 7));
  CHECK(printed_as(call(w, PRIM_READ_FILE, journal_hash(JOURNAL_SEED, "f", 1), TERM(NUM, 0, 99)),
                   "#OK{\"ok\"}"));
  CHECK(journal_line("1", 1) == 0);
  CHECK(journal_line("2", 1) == 0);
  CHECK(journal_line("3", 1) == 1);
  CHECK(call(w, PRIM_RAND, JOURNAL_SEED, TERM(NUM, 0, 99)) == TERM(NUM, 0, 99));
  MSG[0] = 0;
  if (setjmp(CAUGHT) == 0) journal_check_done();
  CHECK(MSG[0] == 0);
  journal_end();

  // Another primitive where the journal has %log.
  record(w);
  CHECK(journal_replay() == 1);
  MSG[0] = 0;
  if (setjmp(CAUGHT) == 0) call(w, PRIM_RAND, JOURNAL_SEED, TERM(NUM, 0, 1));
  CHECK(strstr(MSG, "asked for an effect the first run did not do: effect 1 is %rand") != NULL);
  journal_end();

  // The same primitive with other arguments.
  record(w);
  CHECK(journal_replay() == 1);
  MSG[0] = 0;
  if (setjmp(CAUGHT) == 0) call(w, PRIM_LOG, journal_hash(JOURNAL_SEED, "y", 1), TERM(NUM, 0, 1));
  CHECK(strstr(MSG, "effect 1 is %log with other arguments") != NULL);
  journal_end();

  // A line collapsed to other text than the one printed.
  record(w);
  CHECK(journal_replay() == 1);
  MSG[0] = 0;
  if (setjmp(CAUGHT) == 0) journal_line("9", 1);
  CHECK(strstr(MSG, "collapsed line 1 to other text") != NULL);
  journal_end();

  // A replay that ends before it asked for everything the first run did.
  record(w);
  CHECK(journal_replay() == 1);
  call(w, PRIM_LOG, journal_hash(JOURNAL_SEED, "x", 1), TERM(NUM, 0, 1));
  MSG[0] = 0;
  if (setjmp(CAUGHT) == 0) journal_check_done();
  CHECK(strstr(MSG, "did not repeat what the first run did (1 of its 3 effects, 0 of its 2 lines)") !=
        NULL);
  journal_end();

  // A result that is not data (a lambda) cannot be replayed: no restart.
  journal_start(1);
  call(w, PRIM_LOG, JOURNAL_SEED, TERM(LAM, 0, nodes(1)));
  CHECK(journal_replay() == 0);
  journal_end();

  // A run that does not record (-D, unscoped binders) cannot start over.
  journal_start(0);
  call(w, PRIM_LOG, JOURNAL_SEED, TERM(NUM, 0, 1));
  CHECK(journal_replay() == 0);
  journal_end();

  // The journal is the runtime's: another runtime's keeps nothing of it.
  Options o;
  api_options_default(&o);
  static Rt *other;   // kept, as TEST_RT is, for the leak check
  other = api_context(&o);
  record(w);
  RT = other;
  CHECK(journal_open() == 0);
  CHECK(journal_replay() == 0);
  journal_close();
  RT = TEST_RT;
  CHECK(journal_replay() == 1);
  journal_close();

  return check_done();
}
