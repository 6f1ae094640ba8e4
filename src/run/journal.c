// journal.c: the effects and -C lines of a run that may start over, and
// their replay when it does (journal.h).
//
// A result is kept as data: its nodes in preorder, one word each (a number
// or an erasure whole, a constructor as its tag and name with a zero
// value). Read backwards, that order has every node's fields on a stack by
// the time the node comes, the first field on top, so the result is
// rebuilt in one pass with an explicit stack (a file read as a string is a
// list as long as the file).

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/journal.h"
#include "cpu/eval.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "heap/rt.h"

// Past this many words (entries, results and line hashes together: 128
// MiB) the journal stops and the run cannot start over: it bounds the
// memory a long run of effects or lines holds for a restart that rarely
// comes.
#define JOURNAL_MAX_WORDS ((u64)1 << 24)

typedef enum { OFF, RECORD, REPLAY } Mode;

typedef struct {
  u32 prim;   // the primitive's id
  u8  done;   // its result is in DATA
  u64 key;    // the fingerprint of the arguments it read
  u64 at;     // its result: DATA[at .. at + len)
  u64 len;
} Entry;

typedef struct {
  void *at;
  u64   len, cap;
} Vec;

static Mode            MODE   = OFF;
static int             KEPT   = 0;   // this run records (journal_start)
static int             BROKEN = 0;   // something recorded is not data: no replay
static Vec             ENTRIES;      // Entry
static Vec             DATA;         // Term
static Vec             LINES;        // u64: the hashes of the lines printed
static u64             ENTRY_AT, LINE_AT;   // replay's next entry and line
static u64             WORDS;        // DATA and LINES together
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;

// The entry of the call this thread is performing (-1: none).
static _Thread_local long long PENDING = -1;

// 0 when it cannot grow (the journal is then broken, not the run).
static int vec_room(Vec *v, size_t size, u64 more) {
  if (v->len + more <= v->cap) return 1;
  u64 cap = v->cap ? v->cap : 64;
  while (cap < v->len + more) cap *= 2;
  void *at = realloc(v->at, cap * size);
  if (!at) return 0;
  v->at  = at;
  v->cap = cap;
  return 1;
}

static void vec_free(Vec *v) {
  free(v->at);
  *v = (Vec){0};
}

// Stops recording: the run can no longer start over.
static void broken(void) {
  BROKEN = 1;
  MODE   = OFF;
}

// Eight bytes a step (a -C line is hashed as it is printed), the rest one
// by one as FNV-1a.
u64 journal_hash(u64 h, const void *bytes, size_t n) {
  const u8 *b = bytes;
  size_t    i = 0;
  for (; i + 8 <= n; i += 8) {
    u64 word;
    memcpy(&word, b + i, 8);
    h = (h ^ word) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

u64 journal_hash_word(u64 h, u64 word) {
  return journal_hash(h, &word, sizeof word);
}

// The run
// =======

void journal_start(int record) {
  journal_end();
  KEPT = record;
  MODE = record ? RECORD : OFF;
}

int journal_replay(void) {
  Entry *e = ENTRIES.at;
  for (u64 i = 0; i < ENTRIES.len; i++) {
    if (!e[i].done) BROKEN = 1;   // a call the first run did not finish
  }
  if (!KEPT || BROKEN) return 0;
  MODE     = REPLAY;
  ENTRY_AT = 0;
  LINE_AT  = 0;
  return 1;
}

void journal_check_done(void) {
  if (MODE != REPLAY || (ENTRY_AT == ENTRIES.len && LINE_AT == LINES.len)) return;
  char msg[256];
  snprintf(msg, sizeof msg,
           "the run that started over copying the book lazily did not repeat what the "
           "first run did (%llu of its %llu effects, %llu of its %llu lines)",
           (unsigned long long)ENTRY_AT, (unsigned long long)ENTRIES.len,
           (unsigned long long)LINE_AT, (unsigned long long)LINES.len);
  MODE = OFF;
  eval_die(msg);
}

void journal_end(void) {
  vec_free(&ENTRIES);
  vec_free(&DATA);
  vec_free(&LINES);
  MODE     = OFF;
  KEPT     = 0;
  BROKEN   = 0;
  ENTRY_AT = 0;
  LINE_AT  = 0;
  WORDS    = 0;
  PENDING  = -1;
}

// Results as data
// ===============

// Appends t's preorder to DATA: 0 if a node is not data.
static int save(Term t) {
  Vec todo = {0};
  int ok   = 1;
  u64 from = DATA.len;
  if (!vec_room(&todo, sizeof(Term), 1)) return 0;
  ((Term *)todo.at)[todo.len++] = t;
  while (ok && todo.len > 0) {
    Term cur = ((Term *)todo.at)[--todo.len];
    u32  tag = TAG(cur);
    if (tag != NUM && tag != ERA && !(tag >= C00 && tag <= C16)) {
      ok = 0;
      break;
    }
    u32 ari = tag >= C00 ? tag - C00 : 0;
    if (WORDS + 1 > JOURNAL_MAX_WORDS || !vec_room(&DATA, sizeof(Term), 1) ||
        !vec_room(&todo, sizeof(Term), ari)) {
      ok = 0;
      break;
    }
    WORDS++;
    ((Term *)DATA.at)[DATA.len++] = tag >= C00 ? TERM(tag, EXT(cur), 0) : cur;
    // the last field first on the stack, so the first one comes out next
    for (u32 i = ari; i > 0; i--) ((Term *)todo.at)[todo.len++] = RT->heap.at[VAL(cur) + i - 1];
  }
  vec_free(&todo);
  if (!ok) DATA.len = from;
  return ok;
}

// The result DATA[at .. at + len) rebuilt on w's arena.
static Term rebuild(Wnf *w, u64 at, u64 len) {
  Term *data  = DATA.at;
  Term *stack = malloc((len ? len : 1) * sizeof *stack);
  u64   top   = 0;
  if (!stack) eval_die("out of memory replaying an effect");
  for (u64 i = len; i > 0; i--) {
    Term t   = data[at + i - 1];
    u32  tag = TAG(t);
    if (tag > C00 && tag <= C16) {
      u32 ari = tag - C00;
      u32 loc = eval_alloc(w, ari);
      for (u32 k = 0; k < ari; k++) RT->heap.at[loc + k] = stack[--top];
      t = TERM(tag, EXT(t), loc);
    }
    stack[top++] = t;
  }
  Term r = stack[0];
  free(stack);
  return r;
}

// Host primitives
// ===============

void journal_call(void) {
  PENDING = -1;
}

static const char *name_of(u32 prim) {
  const char *name = prim_name(prim);
  return name ? name : "?";
}

int journal_effect(Wnf *w, Term pri, u64 key, Term *out) {
  if (MODE == OFF) return 0;
  u32 prim = EXT(pri);
  pthread_mutex_lock(&LOCK);
  if (MODE == RECORD) {
    u64 words = sizeof(Entry) / sizeof(u64);
    if (WORDS + words > JOURNAL_MAX_WORDS || !vec_room(&ENTRIES, sizeof(Entry), 1)) {
      broken();
    } else {
      WORDS  += words;
      PENDING = (long long)ENTRIES.len;
      ((Entry *)ENTRIES.at)[ENTRIES.len++] = (Entry){ .prim = prim, .key = key };
    }
    pthread_mutex_unlock(&LOCK);
    return 0;
  }
  if (ENTRY_AT == ENTRIES.len) {   // past the journal: performed
    pthread_mutex_unlock(&LOCK);
    return 0;
  }
  Entry e = ((Entry *)ENTRIES.at)[ENTRY_AT];
  if (e.prim != prim || e.key != key) {
    char msg[320];
    snprintf(msg, sizeof msg,
             "the run that started over copying the book lazily asked for an effect the "
             "first run did not do: effect %llu is %%%s%s, where the first run did %%%s",
             (unsigned long long)ENTRY_AT + 1, name_of(prim),
             e.prim == prim ? " with other arguments" : "", name_of(e.prim));
    MODE = OFF;
    pthread_mutex_unlock(&LOCK);
    eval_die(msg);
    return 0;
  }
  ENTRY_AT++;
  pthread_mutex_unlock(&LOCK);
  *out = rebuild(w, e.at, e.len);
  return 1;
}

int journal_effect_text(Wnf *w, Term pri, char *s, Term *out) {
  if (!journal_effect(w, pri, journal_hash(JOURNAL_SEED, s, strlen(s)), out)) return 0;
  free(s);
  return 1;
}

Term journal_result(Term r) {
  if (PENDING < 0) return r;
  pthread_mutex_lock(&LOCK);
  if (MODE == RECORD) {
    Entry *e = &((Entry *)ENTRIES.at)[PENDING];
    e->at    = DATA.len;
    if (save(r)) {
      e->len  = DATA.len - e->at;
      e->done = 1;
    } else {
      broken();
    }
  }
  PENDING = -1;
  pthread_mutex_unlock(&LOCK);
  return r;
}

// Collapse lines
// ==============

// Only the thread that prints -C's lines calls it (collapse.c, collapse_use).
int journal_line(const char *text, size_t n) {
  u64 h = journal_hash(JOURNAL_SEED, text, n);
  if (MODE == RECORD) {
    if (WORDS + 1 > JOURNAL_MAX_WORDS || !vec_room(&LINES, sizeof(u64), 1)) {
      broken();
    } else {
      WORDS++;
      ((u64 *)LINES.at)[LINES.len++] = h;
    }
    return 1;
  }
  if (MODE != REPLAY || LINE_AT == LINES.len) return 1;
  if (((u64 *)LINES.at)[LINE_AT] != h) {
    char msg[192];
    snprintf(msg, sizeof msg,
             "the run that started over copying the book lazily collapsed line %llu to "
             "other text than the first run printed",
             (unsigned long long)LINE_AT + 1);
    MODE = OFF;
    eval_die(msg);
  }
  LINE_AT++;
  return 0;
}
