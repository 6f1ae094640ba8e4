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
#include "run/run_rt.h"

#define SLOTS_MAX (1u << 16)   // handles a run may open, of all kinds

// Each family of kinds numbers its handles from 1, as HVM4 does (its first
// #Tcp is #Tcp{1,0} whatever was opened before); a handle's id leads to
// its slot through the family's family_slot (prim.h, PrimHandles).
static const u8 FAMILY[] = { [K_STDIN] = 0, [K_FILE] = 0, [K_TIMER] = 1, [K_PROC] = 2,
                             [K_TCP] = 3, [K_HTTP] = 4 };

// The slot of handle id of `kind`'s family, or NULL (the table's lock held).
static Slot *slot_of(PrimHandles *t, u32 kind, u32 id) {
  u32 f = FAMILY[kind];
  return id != 0 && id < t->family_next[f] ? &t->slots[t->family_slot[f][id]] : NULL;
}

// The table
// =========

int prim_open(void) {
  PrimHandles *t = &RT->run->prim.handles;
  t->slot_next = 1;
  for (u32 f = 0; f < PRIM_FAMILIES; f++) t->family_next[f] = 1;
  return pthread_mutex_init(&t->lock, NULL) == 0 ? 0 : -1;
}

// The children the program did not wait for: each group asked to stop,
// then, those still there after PROC_GRACE_MS, killed; all reaped.
#define PROC_GRACE_MS 100

// Whether slot s is a child not reaped yet; reaps it if it ended (wait: blocking).
static int proc_left(Slot *s, int wait) {
  if (s->kind != K_PROC || s->finished) return 0;
  pid_t got;
  do got = waitpid(s->pid, NULL, wait ? 0 : WNOHANG);
  while (got < 0 && errno == EINTR);
  if (got == 0) return 1;
  s->finished = 1;   // reaped, or not ours to reap (ECHILD)
  return 0;
}

void prim_procs_end(void) {
  PrimHandles *t = &RT->run->prim.handles;
  // an interrupt may come while a thread holds the table: its slots are
  // read all the same (a pid is set once, before the slot is published)
  int locked = pthread_mutex_trylock(&t->lock) == 0;
  u32 left   = 0, ending = 0;
  for (u32 i = 1; i < t->slot_next; i++) {
    Slot *s = &t->slots[i];
    if (s->kind == K_PROC && !s->ending && proc_left(s, 0)) {
      s->ending = 1;
      kill(-s->pid, SIGTERM);
      left++;
      ending++;
    }
  }
  for (u32 ms = 0; left > 0 && ms < PROC_GRACE_MS; ms++) {
    struct timespec pause = { 0, 1000000L };
    nanosleep(&pause, NULL);
    left = 0;
    for (u32 i = 1; i < t->slot_next; i++) left += (u32)proc_left(&t->slots[i], 0);
  }
  // every group asked to stop, its shell gone or not: what the shell
  // started is killed with it
  for (u32 i = 1; i < t->slot_next && ending > 0; i++) {
    Slot *s = &t->slots[i];
    if (s->kind != K_PROC || !s->ending) continue;
    kill(-s->pid, SIGKILL);
    proc_left(s, 1);
  }
  if (locked) pthread_mutex_unlock(&t->lock);
}

// A file, a socket or an exchange the program did not close is closed
// (children: prim_procs_end, before).
static void slot_release(Slot *s) {
  switch (s->kind) {
    case K_FILE:
      if (!s->closed) close(s->fd);
      break;
    case K_TCP:
    case K_HTTP:
      prim_net_release(s);
      break;
    default:
      break;
  }
}

void prim_close(void) {
  PrimHandles *t = &RT->run->prim.handles;
  prim_procs_end();
  for (u32 i = 1; i < t->slot_next; i++) slot_release(&t->slots[i]);
  free(t->slots);
  for (u32 f = 0; f < PRIM_FAMILIES; f++) free(t->family_slot[f]);
  pthread_mutex_destroy(&t->lock);
  *t = (PrimHandles){ 0 };
}

// Room for n entries of `size` bytes in *at (holding *cap): 0 when the
// memory is not there.
static int room(void **at, u32 *cap, u32 n, size_t size) {
  if (n <= *cap) return 1;
  u32   want = *cap ? *cap * 2 : 16;
  while (want < n) want *= 2;
  void *more = realloc(*at, (size_t)want * size);
  if (!more) return 0;
  *at  = more;
  *cap = want;
  return 1;
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

Term prim_coded_err(Wnf *w, Term pri, u32 code, const char *msg) {
  return prim_err(w, "ERROR(%s): E%u %s", prim_name(EXT(pri)), code, msg);
}

Term prim_handle(Wnf *w, u32 kind, u32 id, u32 seq) {
  Term k[2] = { TERM(NUM, 0, id), TERM(NUM, 0, seq) };
  return prim_ctr(w, prim_ctr_id(HANDLE_NAME[kind]), 2, k);
}

Term prim_ready(Wnf *w, u32 kind, u32 id, u32 seq, Term payload) {
  Term k[2] = { prim_handle(w, kind, id, seq), payload };
  return prim_ctr(w, prim_ctr_id("Rdy"), 2, k);
}

Term prim_pending(Wnf *w, u32 kind, u32 id, u32 seq) {
  return prim_ctr1(w, prim_ctr_id("Pend"), prim_handle(w, kind, id, seq));
}

// A new slot of `kind` (its other fields from `init`): its id, or 0 when
// the table is full.
static u32 slot_open(const Slot *init) {
  PrimHandles *t = &RT->run->prim.handles;
  u32 f  = FAMILY[init->kind], id = 0;
  pthread_mutex_lock(&t->lock);
  if (t->slot_next < SLOTS_MAX &&
      room((void **)&t->slots, &t->slot_cap, t->slot_next + 1, sizeof(Slot)) &&
      room((void **)&t->family_slot[f], &t->family_cap[f], t->family_next[f] + 1, sizeof(u32))) {
    id = t->family_next[f]++;
    t->family_slot[f][id]      = t->slot_next;
    t->slots[t->slot_next++] = *init;
  }
  pthread_mutex_unlock(&t->lock);
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
  if (TAG(v) != C00 + 2 || EXT(v) != prim_ctr_id(HANDLE_NAME[kind])) {
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
  PrimHandles *t = &RT->run->prim.handles;
  pthread_mutex_lock(&t->lock);
  int known = slot_of(t, kind, *id) != NULL;
  pthread_mutex_unlock(&t->lock);
  if (known) return 1;
  snprintf(msg, sizeof msg, "unknown %s id", KIND_WORD[kind]);
  *out = prim_coded_err(w, pri, E_BAD_HANDLE, msg);
  return 0;
}

int prim_take(Wnf *w, Term pri, u32 kind, u32 id, u32 seq, Slot *s, Term *out) {
  // replayed before the claim: the first run already moved the slot's seq on
  u64 key = journal_hash_word(journal_hash_word(journal_hash_word(JOURNAL_SEED, kind), id), seq);
  if (journal_effect(w, pri, key, out)) return 0;
  PrimHandles *t = &RT->run->prim.handles;
  pthread_mutex_lock(&t->lock);
  Slot *sl    = slot_of(t, kind, id);
  int   fresh = sl && sl->seq == seq;
  if (fresh) {
    sl->seq++;
    *s = *sl;
  }
  pthread_mutex_unlock(&t->lock);
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
  PrimHandles *t = &RT->run->prim.handles;
  pthread_mutex_lock(&t->lock);
  Slot *sl  = slot_of(t, s->kind, id);
  u32   seq = sl->seq;
  *sl     = *s;
  sl->seq = seq;
  pthread_mutex_unlock(&t->lock);
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
  Term payload = eof ? TERM(C00, prim_ctr_id("Eof"), 0)
                     : prim_ctr1(w, prim_ctr_id("Byt"), TERM(NUM, 0, byte));
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
  return prim_ok(w, prim_ready(w, K_TIMER, id, seq + 1, TERM(C00, prim_ctr_id("None"), 0)));
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
    setpgid(0, 0);   // its own group, which prim_procs_end ends whole
    // the runtime's threads block SIGINT and SIGTERM (hvm4g's watcher takes
    // them): the child starts with none blocked, so that they reach it
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid);   // before any kill: either call may come first
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
  Term how_ended = prim_ctr1(w, prim_ctr_id(s.signaled ? "Sig" : "Exit"), TERM(NUM, 0, s.code));
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
