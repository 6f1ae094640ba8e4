// prim_task.c: HVM4's handle primitives: byte streams (stdin, files),
// timers and child processes, and the table of handles they share with
// prim_net.c (prim_in.h). A handle is #Strm{id,seq}, #Time{id,seq} or
// #Proc{id,seq}: id names a slot of the table, and seq counts the calls
// made on it, each call taking handle seq and giving back seq+1, so that a
// handle used twice (a duplicated one) is refused as stale (E3) instead of
// reading a byte twice. Results are #OK{..} or #ERR{"ERROR(name): E<n>
// .."} with HVM4's codes: 1 bad argument, 2 bad handle, 3 stale, 4 table
// full, 5 I/O.
//
// These run on the host through prim_io (prim_io.c); a handle argument
// that is &{}, ↑x or &L{x,y} lifts the call (prim_lift).

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "run/prim.h"
#include "run/prim_in.h"
#include "run/journal.h"
#include "cpu/eval.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "heap/rt.h"

#define SLOTS_MAX (1u << 16)   // handles a run may open, of all kinds
#define FAMILIES  5            // kinds that count their ids apart

// Each family of kinds numbers its handles from 1, as HVM4 does (its first
// #Tcp is #Tcp{1,0} whatever was opened before); a handle's id leads to
// its slot through the family's FAMILY_SLOT.
static const u8 FAMILY[] = { [K_STDIN] = 0, [K_FILE] = 0, [K_TIMER] = 1, [K_PROC] = 2,
                             [K_TCP] = 3, [K_HTTP] = 4 };

static Slot            SLOTS[SLOTS_MAX];
static u32             SLOT_NEXT = 1;
static u32             FAMILY_SLOT[FAMILIES][SLOTS_MAX];
static u32             FAMILY_NEXT[FAMILIES] = { 1, 1, 1, 1, 1 };
static pthread_mutex_t SLOT_LOCK = PTHREAD_MUTEX_INITIALIZER;

// The slot of handle id of `kind`'s family, or NULL (SLOT_LOCK held).
static Slot *slot_of(u32 kind, u32 id) {
  u32 f = FAMILY[kind];
  return id != 0 && id < FAMILY_NEXT[f] ? &SLOTS[FAMILY_SLOT[f][id]] : NULL;
}

// Each kind's spelling: its primitives' handle constructor and names.
static const char *HANDLE_NAME[] = { [K_STDIN] = "Strm", [K_FILE] = "Strm",
                                     [K_TIMER] = "Time", [K_PROC] = "Proc",
                                     [K_TCP]   = "Tcp",  [K_HTTP] = "Http" };
static const char *HANDLE_ARG[]  = { [K_STDIN] = "strm", [K_FILE] = "strm",
                                     [K_TIMER] = "time", [K_PROC] = "proc",
                                     [K_TCP]   = "tcp",  [K_HTTP] = "http" };
static const char *KIND_WORD[]   = { [K_STDIN] = "stream", [K_FILE] = "stream",
                                     [K_TIMER] = "timer", [K_PROC] = "process",
                                     [K_TCP]   = "tcp",   [K_HTTP] = "http" };

static u32 nick_named(const char *s) {
  return nick_of(s, (u32)strlen(s));
}

Term prim_coded_err(Wnf *w, Term pri, u32 code, const char *msg) {
  return prim_err(w, "ERROR(%s): E%u %s", prim_name(EXT(pri)), code, msg);
}

Term prim_handle(Wnf *w, u32 kind, u32 id, u32 seq) {
  Term k[2] = { TERM(NUM, 0, id), TERM(NUM, 0, seq) };
  return prim_ctr(w, nick_named(HANDLE_NAME[kind]), 2, k);
}

Term prim_ready(Wnf *w, u32 kind, u32 id, u32 seq, Term payload) {
  Term k[2] = { prim_handle(w, kind, id, seq), payload };
  return prim_ctr(w, nick_named("Rdy"), 2, k);
}

Term prim_pending(Wnf *w, u32 kind, u32 id, u32 seq) {
  return prim_ctr1(w, nick_named("Pend"), prim_handle(w, kind, id, seq));
}

// A new slot of `kind` (its other fields from `init`): its id, or 0 when
// the table is full.
static u32 slot_open(const Slot *init) {
  u32 f  = FAMILY[init->kind], id = 0;
  pthread_mutex_lock(&SLOT_LOCK);
  if (SLOT_NEXT < SLOTS_MAX) {
    id = FAMILY_NEXT[f]++;
    FAMILY_SLOT[f][id] = SLOT_NEXT;
    SLOTS[SLOT_NEXT++] = *init;
  }
  pthread_mutex_unlock(&SLOT_LOCK);
  return id;
}

Term prim_opened(Wnf *w, Term pri, const Slot *init, u32 *id) {
  *id = slot_open(init);
  if (!*id) {
    char msg[64];
    snprintf(msg, sizeof msg, "%s table is full", KIND_WORD[init->kind]);
    return prim_coded_err(w, pri, E_FULL, msg);
  }
  return prim_ok(w, prim_handle(w, init->kind, *id, 0));
}

int prim_handle_of(Wnf *w, Term pri, Term v, u32 kind, u32 *id, u32 *seq, Term *out) {
  char msg[96];
  snprintf(msg, sizeof msg, "invalid `%s`; expected #%s{id,seq}", HANDLE_ARG[kind],
           HANDLE_NAME[kind]);
  if (TAG(v) != C00 + 2 || EXT(v) != nick_named(HANDLE_NAME[kind])) {
    *out = prim_coded_err(w, pri, E_BAD_HANDLE, msg);
    return 0;
  }
  Term a = eval_wnf(w, RT->heap.at[VAL(v) + 0]);
  Term b = eval_wnf(w, RT->heap.at[VAL(v) + 1]);
  if (TAG(a) != NUM || TAG(b) != NUM) {
    *out = prim_coded_err(w, pri, E_BAD_HANDLE, msg);
    return 0;
  }
  *id  = VAL(a);
  *seq = VAL(b);
  pthread_mutex_lock(&SLOT_LOCK);
  int known = slot_of(kind, *id) != NULL;
  pthread_mutex_unlock(&SLOT_LOCK);
  if (known) return 1;
  snprintf(msg, sizeof msg, "unknown %s id", KIND_WORD[kind]);
  *out = prim_coded_err(w, pri, E_BAD_HANDLE, msg);
  return 0;
}

int prim_take(Wnf *w, Term pri, u32 kind, u32 id, u32 seq, Slot *s, Term *out) {
  // replayed before the claim: the first run already moved the slot's seq on
  u64 key = journal_hash_word(journal_hash_word(journal_hash_word(JOURNAL_SEED, kind), id), seq);
  if (journal_effect(w, pri, key, out)) return 0;
  pthread_mutex_lock(&SLOT_LOCK);
  Slot *sl    = slot_of(kind, id);
  int   fresh = sl && sl->seq == seq;
  if (fresh) {
    sl->seq++;
    *s = *sl;
  }
  pthread_mutex_unlock(&SLOT_LOCK);
  if (!fresh) {
    char msg[64];
    snprintf(msg, sizeof msg, "stale %s handle", KIND_WORD[kind]);
    *out = prim_coded_err(w, pri, E_STALE, msg);
  }
  return fresh;
}

int prim_claim(Wnf *w, Term pri, u32 kind, Slot *s, u32 *id, u32 *seq, Term *out) {
  Term v;
  if (prim_lift(w, pri, 0, &v, out)) return 0;
  if (!prim_handle_of(w, pri, v, kind, id, seq, out)) return 0;
  return prim_take(w, pri, kind, *id, *seq, s, out);
}

void prim_slot_update(u32 id, const Slot *s) {
  pthread_mutex_lock(&SLOT_LOCK);
  Slot *sl  = slot_of(s->kind, id);
  u32   seq = sl->seq;
  *sl     = *s;
  sl->seq = seq;
  pthread_mutex_unlock(&SLOT_LOCK);
}

// Streams
// =======

static Term stream_open(Wnf *w, Term pri, int file) {
  Term out;
  Slot s = { .kind = K_STDIN, .fd = 0 };
  if (file) {
    char *path;
    if (!prim_str_path(w, pri, &path, &out)) return out;
    if (journal_effect_text(w, pri, path, &out)) return out;
    s.kind = K_FILE;
    s.fd   = open(path, O_RDONLY | O_CLOEXEC);
    int e  = errno;
    free(path);
    if (s.fd < 0) return prim_coded_err(w, pri, E_IO, strerror(e));
  } else {
    Term v;
    if (prim_lift(w, pri, 0, &v, &out)) return out;
    if (journal_effect(w, pri, JOURNAL_SEED, &out)) return out;
  }
  u32  id;
  Term r = prim_opened(w, pri, &s, &id);
  if (!id && file) close(s.fd);
  return r;
}

// One byte of a stream: 1 with *byte (or *eof), 0 when none is there yet
// (only when wait_ms is 0), -1 on an error (errno).
static int stream_read(int fd, int wait_ms, u8 *byte, int *eof) {
  struct pollfd p = { .fd = fd, .events = POLLIN };
  *eof = 0;
  for (;;) {
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return 0;
    ssize_t n = read(fd, byte, 1);
    if (n == 1) return 1;
    if (n == 0) { *eof = 1; return 1; }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (wait_ms == 0) return 0;
      continue;
    }
    return -1;
  }
}

static Term stream_next(Wnf *w, Term pri, int wait) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_STDIN, &s, &id, &seq, &out)) return out;
  if (s.closed) return prim_coded_err(w, pri, E_BAD_HANDLE, "stream is closed");
  // stdout first, so that a prompt printed before the read is seen
  fflush(stdout);
  u8  byte = 0;
  int eof;
  int r = stream_read(s.fd, wait ? -1 : 0, &byte, &eof);
  if (r < 0) return prim_coded_err(w, pri, E_IO, strerror(errno));
  if (r == 0) return prim_ok(w, prim_pending(w, s.kind, id, seq + 1));
  Term payload = eof ? TERM(C00, nick_named("Eof"), 0)
                     : prim_ctr1(w, nick_named("Byt"), TERM(NUM, 0, byte));
  return prim_ok(w, prim_ready(w, s.kind, id, seq + 1, payload));
}

static Term stream_close(Wnf *w, Term pri) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_STDIN, &s, &id, &seq, &out)) return out;
  if (s.closed) return prim_coded_err(w, pri, E_BAD_HANDLE, "stream is closed");
  int bad = s.kind == K_FILE && close(s.fd) != 0 ? errno : 0;
  s.closed = 1;
  prim_slot_update(id, &s);
  if (bad) return prim_coded_err(w, pri, E_IO, strerror(bad));
  return prim_ok_nil(w);
}

// Timers
// ======

u64 prim_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (u64)t.tv_sec * 1000000000ull + (u64)t.tv_nsec;
}

static Term timer_start(Wnf *w, Term pri) {
  Term v, out;
  if (prim_lift(w, pri, 0, &v, &out)) return out;
  if (TAG(v) != NUM) return prim_coded_err(w, pri, E_BAD_ARG, "invalid `ms`; expected NUM");
  if (journal_effect(w, pri, journal_hash_word(JOURNAL_SEED, VAL(v)), &out)) return out;
  Slot s  = { .kind = K_TIMER, .due_ns = prim_now_ns() + (u64)VAL(v) * 1000000ull };
  u32  id;
  return prim_opened(w, pri, &s, &id);
}

static Term timer_next(Wnf *w, Term pri, int wait) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_TIMER, &s, &id, &seq, &out)) return out;
  u64 now = prim_now_ns();
  if (now < s.due_ns && !wait) return prim_ok(w, prim_pending(w, K_TIMER, id, seq + 1));
  while (now < s.due_ns) {
    u64 left = s.due_ns - now;
    struct timespec t = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
    nanosleep(&t, NULL);
    now = prim_now_ns();
  }
  return prim_ok(w, prim_ready(w, K_TIMER, id, seq + 1, TERM(C00, nick_named("None"), 0)));
}

// Processes
// =========

static Term process_spawn(Wnf *w, Term pri) {
  char *cmd;
  Term  out;
  if (!prim_str_path(w, pri, &cmd, &out)) return out;
  if (journal_effect_text(w, pri, cmd, &out)) return out;
  // the child starts with an empty stdout buffer, and its output follows ours
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  int e = errno;
  free(cmd);
  if (pid < 0) return prim_coded_err(w, pri, E_IO, strerror(e));
  Slot s  = { .kind = K_PROC, .pid = pid };
  u32  id;
  Term r = prim_opened(w, pri, &s, &id);
  if (!id) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  return r;
}

// %process_poll (how 0), %process_wait (1), %process_kill (2: SIGTERM,
// then a look as poll's).
static Term process_next(Wnf *w, Term pri, int how) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_PROC, &s, &id, &seq, &out)) return out;
  if (!s.finished) {
    if (how == 2 && kill(s.pid, SIGTERM) < 0 && errno != ESRCH) {
      return prim_coded_err(w, pri, E_IO, strerror(errno));
    }
    int   status;
    pid_t got;
    do got = waitpid(s.pid, &status, how == 1 ? 0 : WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got < 0) return prim_coded_err(w, pri, E_IO, strerror(errno));
    if (got == 0) return prim_ok(w, prim_pending(w, K_PROC, id, seq + 1));
    s.finished = 1;
    s.signaled = WIFSIGNALED(status) != 0;
    s.code     = WIFEXITED(status) ? (u32)WEXITSTATUS(status)
               : WIFSIGNALED(status) ? (u32)WTERMSIG(status) : 255;
    prim_slot_update(id, &s);
  }
  Term how_ended = prim_ctr1(w, nick_named(s.signaled ? "Sig" : "Exit"), TERM(NUM, 0, s.code));
  return prim_ok(w, prim_ready(w, K_PROC, id, seq + 1, how_ended));
}

Term prim_task(Wnf *w, Term pri) {
  switch (EXT(pri)) {
    case PRIM_STREAM_STDIN_OPEN: return stream_open(w, pri, 0);
    case PRIM_STREAM_FILE_OPEN:  return stream_open(w, pri, 1);
    case PRIM_STREAM_POLL:       return stream_next(w, pri, 0);
    case PRIM_STREAM_WAIT:       return stream_next(w, pri, 1);
    case PRIM_STREAM_CLOSE:      return stream_close(w, pri);
    case PRIM_TIMER_START:       return timer_start(w, pri);
    case PRIM_TIMER_POLL:        return timer_next(w, pri, 0);
    case PRIM_TIMER_WAIT:        return timer_next(w, pri, 1);
    case PRIM_PROCESS_SPAWN:     return process_spawn(w, pri);
    case PRIM_PROCESS_POLL:      return process_next(w, pri, 0);
    case PRIM_PROCESS_WAIT:      return process_next(w, pri, 1);
    case PRIM_PROCESS_KILL:      return process_next(w, pri, 2);
    default:                     return 0;
  }
}
