// journal.h: the effects of a run that may start over, recorded so that
// the run started over replays them instead of doing them twice.
//
// A run that meets a DUP again while reducing it starts over from the
// program with the lazy core (api.c, run). While the first run goes, the
// journal records, in order, each effect a host primitive performs (which
// primitive, a fingerprint of the arguments it read, its result as data)
// and a hash of each line -C prints. Started over, the run's first effects
// are checked against the journal in the same order and answered with the
// journaled result, rebuilt in the new heap, and its first lines are
// checked against the hashes and not printed again; past the journal,
// effects are performed and lines printed. A call or a line that differs
// from its entry ends the run with a runtime error: an effect is never
// performed twice.

#ifndef HVM4G_JOURNAL_H
#define HVM4G_JOURNAL_H

#include <pthread.h>
#include <stddef.h>
#include "core/core.h"

// A growing array (journal.c).
typedef struct {
  void *at;
  u64   len, cap;
} JournalVec;

// A runtime's journal (RT->run->journal): the run's entries, results and
// line hashes, and where a replay is.
typedef struct {
  int             mode;       // journal.c's Mode: off, recording, replaying
  int             kept;       // this run records (journal_start)
  int             broken;     // no replay, and why (journal.c's Broken)
  JournalVec      entries;    // journal.c's Entry
  JournalVec      data;       // Term
  JournalVec      lines;      // u64: the hashes of the lines printed
  u64             entry_at;   // replay's next entry
  u64             line_at;    // and line
  u64             words;      // data and lines together
  pthread_mutex_t lock;
} Journal;

// The runtime's journal from its open (0, or -1) to its close (run_rt.h).
int  journal_open(void);
void journal_close(void);

// The run
// =======

// A run begins: records into a fresh journal when `record`, else keeps none.
void journal_start(int record);
// The run starts over: 1 when everything it did was recorded as data, and
// the journal now replays it; 0 when it cannot be replayed (a result that
// is not data, or a journal past its bound).
int  journal_replay(void);
// Why journal_replay refused, in words for a message (NULL: it did not).
const char *journal_refusal(void);
// After the run started over ended well: a runtime error if it left some
// of the journaled effects or lines unasked (the output would show what it
// never did).
void journal_check_done(void);
// The run ended: the journal is freed and nothing is recorded.
void journal_end(void);

// Host primitives (prim.c's dispatch)
// ===================================

// prim_host, before it runs a primitive: no effect of that call yet.
void journal_call(void);
// A primitive, once its arguments are read and just before its effect:
// 1 when the call is replayed (*out: the journaled result, rebuilt on w's
// arena; the primitive returns it and does nothing); 0 when the primitive
// performs its effect (recorded when prim_host passes its result through
// journal_result). `key` is the fingerprint of the arguments it read.
int  journal_effect(Wnf *w, Term pri, u64 key, Term *out);
// journal_effect for a call whose one argument is the string s (malloc'd):
// on a replay s is freed.
int  journal_effect_text(Wnf *w, Term pri, char *s, Term *out);
// prim_host, with the result of the call: recorded if the call performed
// an effect; returned as is.
Term journal_result(Term r);

// Fingerprints: journal_hash(JOURNAL_SEED, ..) then more pieces.
#define JOURNAL_SEED 0xcbf29ce484222325ull   // FNV-1a's offset basis
u64 journal_hash(u64 h, const void *bytes, size_t n);
u64 journal_hash_word(u64 h, u64 word);

// Collapse lines (-C)
// ===================

// A line -C is about to print (its text without the -s count): 1 to print
// it; 0 when the run printed it before it started over.
int journal_line(const char *text, size_t n);

#endif
