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
#include "run/run_rt.h"

// Past this many words (entries, results and line hashes together: 128
// MiB) the journal stops and the run cannot start over: it bounds the
// memory a long run of effects or lines holds for a restart that rarely
// comes.
#define JOURNAL_MAX_WORDS ((u64)1 << 24)

typedef enum { OFF, RECORD, REPLAY } Mode;

// Why the journal cannot replay (Journal.broken).
typedef enum { WHOLE, FULL, NOT_DATA, UNFINISHED } Broken;

typedef struct {
  u32 prim;   // the primitive's id
  u8  done;   // its result is in DATA
  u64 key;    // the fingerprint of the arguments it read
  u64 at;     // its result: DATA[at .. at + len)
  u64 len;
} Entry;

typedef JournalVec Vec;

// The entry of the call this thread is performing (-1: none): per thread,
// since the pool's threads perform calls at once.
static _Thread_local long long PENDING = -1;

int journal_open(void) {
  return pthread_mutex_init(&RT->run->journal.lock, NULL) == 0 ? 0 : -1;
}

void journal_close(void) {
  journal_end();
  pthread_mutex_destroy(&RT->run->journal.lock);
}

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

// Stops recording: the run can no longer start over, for `why`.
static void broken(Broken why) {
  Journal *J = &RT->run->journal;
  if (!J->broken) J->broken = why;
  J->mode = OFF;
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
  Journal *J = &RT->run->journal;
  journal_end();
  J->kept = record;
  J->mode = record ? RECORD : OFF;
}

int journal_replay(void) {
  Journal *J = &RT->run->journal;
  Entry *e = J->entries.at;
  for (u64 i = 0; i < J->entries.len; i++) {
    if (!e[i].done && !J->broken) J->broken = UNFINISHED;   // the first run did not finish it
  }
  if (!J->kept || J->broken) return 0;
  J->mode     = REPLAY;
  J->entry_at = 0;
  J->line_at  = 0;
  return 1;
}

const char *journal_refusal(void) {
  switch (RT->run->journal.broken) {
    case FULL:       return "the effects and lines it journaled passed the journal's "
                            "bound of 128 MiB";
    case NOT_DATA:   return "an effect's result is not data, and cannot be replayed";
    case UNFINISHED: return "an effect was under way";
    default:         return NULL;
  }
}

void journal_check_done(void) {
  Journal *J = &RT->run->journal;
  if (J->mode != REPLAY || (J->entry_at == J->entries.len && J->line_at == J->lines.len)) return;
  char msg[256];
  snprintf(msg, sizeof msg,
           "the run that started over copying the book lazily did not repeat what the "
           "first run did (%llu of its %llu effects, %llu of its %llu lines)",
           (unsigned long long)J->entry_at, (unsigned long long)J->entries.len,
           (unsigned long long)J->line_at, (unsigned long long)J->lines.len);
  J->mode = OFF;
  eval_die(msg);
}

void journal_end(void) {
  Journal *J = &RT->run->journal;
  vec_free(&J->entries);
  vec_free(&J->data);
  vec_free(&J->lines);
  J->mode     = OFF;
  J->kept     = 0;
  J->broken   = 0;
  J->entry_at = 0;
  J->line_at  = 0;
  J->words    = 0;
  PENDING  = -1;
}

// Results as data
// ===============

// Appends t's preorder to the journal's data: WHOLE, or why not (a node
// that is not data, or no room).
static Broken save(Term t) {
  Journal *J = &RT->run->journal;
  Vec    todo = {0};
  Broken why  = WHOLE;
  u64    from = J->data.len;
  if (!vec_room(&todo, sizeof(Term), 1)) return FULL;
  ((Term *)todo.at)[todo.len++] = t;
  while (!why && todo.len > 0) {
    Term cur = ((Term *)todo.at)[--todo.len];
    u32  tag = TAG(cur);
    if (tag != NUM && tag != ERA && !(tag >= C00 && tag <= C16)) {
      why = NOT_DATA;
      break;
    }
    u32 ari = tag >= C00 ? tag - C00 : 0;
    if (J->words + 1 > JOURNAL_MAX_WORDS || !vec_room(&J->data, sizeof(Term), 1) ||
        !vec_room(&todo, sizeof(Term), ari)) {
      why = FULL;
      break;
    }
    J->words++;
    ((Term *)J->data.at)[J->data.len++] = tag >= C00 ? TERM(tag, EXT(cur), 0) : cur;
    // the last field first on the stack, so the first one comes out next
    for (u32 i = ari; i > 0; i--) ((Term *)todo.at)[todo.len++] = RT->heap.at[VAL(cur) + i - 1];
  }
  vec_free(&todo);
  if (why) J->data.len = from;
  return why;
}

// The result data[at .. at + len) rebuilt on w's arena.
static Term rebuild(Wnf *w, u64 at, u64 len) {
  Journal *J = &RT->run->journal;
  Term *data  = J->data.at;
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
  Journal *J = &RT->run->journal;
  if (J->mode == OFF) return 0;
  u32 prim = EXT(pri);
  pthread_mutex_lock(&J->lock);
  if (J->mode == RECORD) {
    u64 words = sizeof(Entry) / sizeof(u64);
    if (J->words + words > JOURNAL_MAX_WORDS || !vec_room(&J->entries, sizeof(Entry), 1)) {
      broken(FULL);
    } else {
      J->words  += words;
      PENDING = (long long)J->entries.len;
      ((Entry *)J->entries.at)[J->entries.len++] = (Entry){ .prim = prim, .key = key };
    }
    pthread_mutex_unlock(&J->lock);
    return 0;
  }
  if (J->entry_at == J->entries.len) {   // past the journal: performed
    pthread_mutex_unlock(&J->lock);
    return 0;
  }
  Entry e = ((Entry *)J->entries.at)[J->entry_at];
  if (e.prim != prim || e.key != key) {
    char msg[320];
    snprintf(msg, sizeof msg,
             "the run that started over copying the book lazily asked for an effect the "
             "first run did not do: effect %llu is %%%s%s, where the first run did %%%s",
             (unsigned long long)J->entry_at + 1, name_of(prim),
             e.prim == prim ? " with other arguments" : "", name_of(e.prim));
    J->mode = OFF;
    pthread_mutex_unlock(&J->lock);
    eval_die(msg);
    return 0;
  }
  J->entry_at++;
  pthread_mutex_unlock(&J->lock);
  *out = rebuild(w, e.at, e.len);
  return 1;
}

int journal_effect_text(Wnf *w, Term pri, char *s, Term *out) {
  if (!journal_effect(w, pri, journal_hash(JOURNAL_SEED, s, strlen(s)), out)) return 0;
  free(s);
  return 1;
}

Term journal_result(Term r) {
  Journal *J = &RT->run->journal;
  if (PENDING < 0) return r;
  pthread_mutex_lock(&J->lock);
  if (J->mode == RECORD) {
    Entry *e = &((Entry *)J->entries.at)[PENDING];
    e->at    = J->data.len;
    Broken why = save(r);
    if (!why) {
      e->len  = J->data.len - e->at;
      e->done = 1;
    } else {
      broken(why);
    }
  }
  PENDING = -1;
  pthread_mutex_unlock(&J->lock);
  return r;
}

// Collapse lines
// ==============

// Only the thread that prints -C's lines calls it (collapse.c, collapse_use).
int journal_line(const char *text, size_t n) {
  Journal *J = &RT->run->journal;
  u64 h = journal_hash(JOURNAL_SEED, text, n);
  if (J->mode == RECORD) {
    if (J->words + 1 > JOURNAL_MAX_WORDS || !vec_room(&J->lines, sizeof(u64), 1)) {
      broken(FULL);
    } else {
      J->words++;
      ((u64 *)J->lines.at)[J->lines.len++] = h;
    }
    return 1;
  }
  if (J->mode != REPLAY || J->line_at == J->lines.len) return 1;
  if (((u64 *)J->lines.at)[J->line_at] != h) {
    char msg[192];
    snprintf(msg, sizeof msg,
             "the run that started over copying the book lazily collapsed line %llu to "
             "other text than the first run printed",
             (unsigned long long)J->line_at + 1);
    J->mode = OFF;
    eval_die(msg);
  }
  J->line_at++;
  return 0;
}
