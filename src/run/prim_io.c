// prim_io.c: the I/O primitives of HVM4 that run on the host: the
// program's arguments, the environment, the working directory, files and
// random numbers. Each result is HVM4's: #OK{value} or #ERR{"ERROR(name):
// ..."} (docs/language.md lists the shapes). A path or name argument is a
// string read by prim_str_arg, so a superposition in it splits the call.
//
// Every effect of a program goes through prim_host (prim.c), on the CPU:
// a device run that meets one of these stops and hands it back. Each asks
// the journal (journal.h) just before its effect, which answers a call the
// run made before it started over; %argv, the same in any run, does not.

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void prim_set_args(int argc, char **argv) {
  RT->run->prim.argc = argc;
  RT->run->prim.argv = argv;
}

// Arguments
// =========

// The string argument `arg` of pri as a NUL-terminated UTF-8 string in *s
// (malloc'd): 1. Otherwise 0, and *out is the result: the call lifted over
// a SUP/INC/ERA, or #ERR naming the primitive and the argument. n as
// prim_str_utf8's: NULL for a C string, which may hold no NUL.
static int str_arg(Wnf *w, Term pri, u32 arg, const char *what, char **s, size_t *n, Term *out) {
  u32    *codes = NULL, len;
  StrRead r     = prim_str_arg(w, pri, arg, &codes, &len, out);
  if (r == STR_LIFTED) return 0;
  return prim_str_utf8(w, r, prim_name(EXT(pri)), what, codes, len, s, n, out);
}

int prim_str_path(Wnf *w, Term pri, char **s, Term *out) {
  return str_arg(w, pri, 0, EXT(pri) == PRIM_PROCESS_SPAWN ? "cmd" : "path", s, NULL, out);
}

static Term err_errno(Wnf *w, const char *prim, const char *doing, const char *path, int e) {
  return prim_err(w, "ERROR(%s): %s '%s': %s (errno=%d)", prim, doing, path, strerror(e), e);
}

// Files
// =====

// A read takes at most this many bytes, and no more than a string of them
// could fit the heap (three words a character or byte: its cell and its
// #CHR/#BYT): past it, an endless file (/dev/zero) or a huge one is an
// error, not gigabytes of memory first (docs/language.md).
#define READ_MAX ((size_t)1 << 28)

static size_t read_max(void) {
  u64 fit = RT->heap.cap / 3;
  return fit < READ_MAX ? (size_t)fit : READ_MAX;
}

// The file's bytes (malloc'd, *n of them), or NULL with errno set (EFBIG:
// more than `max` bytes) and *opened saying whether the open or the read
// failed.
static u8 *file_bytes(const char *path, size_t max, size_t *n, int *opened) {
  FILE *f = fopen(path, "rb");
  *opened = f != NULL;
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  u8    *buf = malloc(cap);
  int    e   = 0;
  while (buf) {
    if (len == cap) {
      u8 *more = realloc(buf, cap *= 2);
      if (!more) free(buf);
      buf = more;
      if (!buf) break;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len > max) {
      e = EFBIG;
      break;
    }
    if (got == 0) break;
  }
  if (!e) e = !buf ? ENOMEM : ferror(f) ? errno : 0;
  fclose(f);
  if (e) {
    free(buf);
    errno = e;
    return NULL;
  }
  *n = len;
  return buf;
}

// The byte index of the first malformed UTF-8 sequence, or -1, and whether
// it is cut short by the end (HVM4 says "truncated" then).
static long utf8_bad(const u8 *s, size_t n, int *cut) {
  size_t i = 0;
  while (i < n) {
    u8  b    = s[i];
    u32 need = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2
             : (b & 0xF8) == 0xF0 ? 3 : 4;
    if (need == 4) { *cut = 0; return (long)i; }
    if (i + need >= n && need > 0) {
      // the sequence runs past the end: cut short if what is there fits
      for (size_t k = i + 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) { *cut = 0; return (long)i; }
      }
      *cut = 1;
      return (long)i;
    }
    u32 cp = need == 0 ? b : need == 1 ? b & 0x1F : need == 2 ? b & 0x0F : b & 0x07;
    for (u32 k = 1; k <= need; k++) {
      if ((s[i + k] & 0xC0) != 0x80) { *cut = 0; return (long)i; }
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static const u32 MIN[4] = { 0, 0x80, 0x800, 0x10000 };
    if (cp < MIN[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      *cut = 0;
      return (long)i;
    }
    i += need + 1;
  }
  return -1;
}

static Term read_file(Wnf *w, Term pri, int bytes) {
  const char *prim = bytes ? "read_bytes" : "read_file";
  char       *path;
  Term        out;
  if (!str_arg(w, pri, 0, "path", &path, NULL, &out)) return out;
  if (journal_effect_text(w, pri, path, &out)) return out;
  size_t n, max = read_max();
  int    opened;
  u8    *buf = file_bytes(path, max, &n, &opened);
  if (!buf && errno == EFBIG) {
    out = prim_err(w, "ERROR(%s): '%s' is longer than a read takes (%zu bytes: %s)", prim, path,
                   max, max == READ_MAX ? "the limit of one read" : "what the heap could hold");
    free(path);
    return out;
  }
  if (!buf) {
    out = err_errno(w, prim, opened ? "I/O error while reading" : "failed to open path", path,
                    errno);
    free(path);
    return out;
  }
  free(path);
  if (bytes) {
    out = prim_bytes_list(w, buf, n);
  } else {
    int  cut;
    long bad = utf8_bad(buf, n, &cut);
    if (bad >= 0) {
      free(buf);
      return prim_err(w, cut ? "ERROR(read_file): truncated UTF-8 sequence at byte index %ld"
                             : "ERROR(read_file): invalid UTF-8 at byte index %ld", bad);
    }
    out = prim_string(w, (const char *)buf, n);
  }
  free(buf);
  return prim_ok(w, out);
}

// The bytes of a list of #BYT{n} (malloc'd, *n of them), or NULL with the
// #ERR in *out.
static u8 *bytes_arg(Wnf *w, Term list, size_t *n, Term *out) {
  u8 *buf = NULL;
  u32 bad;
  switch (prim_bytes_arg(w, list, (size_t)-1, &buf, n, &bad)) {
    case BYTES_DONE:
      if (!buf && !(buf = malloc(1))) eval_die("out of memory reading bytes");
      return buf;
    case BYTES_RANGE:
      *out = prim_err(w, "ERROR(write_bytes): invalid byte %u at `data` index %zu; expected 0..255",
                      bad, *n);
      return NULL;
    default:
      *out = prim_err(w, "ERROR(write_bytes): invalid `data`; expected #NIL or #CON(#BYT{NUM}, tail)");
      return NULL;
  }
}

// %write_file(path, text) and %write_bytes(path, data): #OK{[]}. The data
// is read before the file is opened, so a malformed one leaves it as it was.
static Term write_file(Wnf *w, Term pri, int bytes) {
  const char *prim = bytes ? "write_bytes" : "write_file";
  char       *path, *text = NULL;
  u8         *data;
  size_t      n;
  Term        out;
  if (!str_arg(w, pri, 0, "path", &path, NULL, &out)) return out;
  if (bytes) {
    data = bytes_arg(w, RT->heap.at[VAL(pri) + 1], &n, &out);
  } else {
    data = str_arg(w, pri, 1, "data", &text, &n, &out) ? (u8 *)text : NULL;
  }
  if (!data) {
    free(path);
    return out;
  }
  u64 key = journal_hash(journal_hash(JOURNAL_SEED, path, strlen(path) + 1), data, n);
  if (journal_effect(w, pri, key, &out)) {
    free(data);
    free(path);
    return out;
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    out = err_errno(w, prim, "failed to open path", path, errno);
  } else if (fwrite(data, 1, n, f) != n || fflush(f) != 0) {
    out = err_errno(w, prim, "I/O error while writing", path, errno);
    fclose(f);
  } else if (fclose(f) != 0) {
    out = err_errno(w, prim, "failed to close", path, errno);
  } else {
    out = prim_ok_nil(w);
  }
  free(data);
  free(path);
  return out;
}

// The process
// ===========

static Term prim_argv(Wnf *w) {
  const PrimRt *p    = &RT->run->prim;
  Term          list = TERM(C00, CTR_NIL, 0);
  for (int i = p->argc; i > 0; i--) {
    Term ht[2] = { prim_string(w, p->argv[i - 1], strlen(p->argv[i - 1])), list };
    list = prim_ctr(w, CTR_CON, 2, ht);
  }
  return list;
}

static Term prim_env(Wnf *w, Term pri) {
  char *name;
  Term  out;
  if (!str_arg(w, pri, 0, "name", &name, NULL, &out)) return out;
  if (journal_effect_text(w, pri, name, &out)) return out;
  const char *value = getenv(name);
  if (value) {
    out = prim_ok(w, prim_string(w, value, strlen(value)));
  } else {
    out = prim_err(w, "ERROR(env): variable '%s' not found", name);
  }
  free(name);
  return out;
}

static Term prim_cwd(Wnf *w, Term pri) {
  Term replay;
  if (journal_effect(w, pri, JOURNAL_SEED, &replay)) return replay;
  char *dir = getcwd(NULL, 0);
  if (!dir) return prim_err(w, "ERROR(cwd): %s (errno=%d)", strerror(errno), errno);
  Term out = prim_ok(w, prim_string(w, dir, strlen(dir)));
  free(dir);
  return out;
}

static Term prim_chdir(Wnf *w, Term pri) {
  char *path;
  Term  out;
  if (!str_arg(w, pri, 0, "path", &path, NULL, &out)) return out;
  if (journal_effect_text(w, pri, path, &out)) return out;
  out = chdir(path) == 0 ? prim_ok_nil(w)
                         : err_errno(w, "chdir", "failed to change directory to", path, errno);
  free(path);
  return out;
}

// A 31-bit number, as C's rand() gives HVM4: xorshift64* on one word of
// the runtime that every thread advances, seeded from the clock and the
// process.
static Term prim_rand(Wnf *w, Term pri) {
  _Atomic u64 *state = &RT->run->prim.rand;
  Term replay;
  if (journal_effect(w, pri, JOURNAL_SEED, &replay)) return replay;
  u64 cur = atomic_load(state), x;
  do {
    x = cur;
    if (x == 0) {
      struct timespec t;
      clock_gettime(CLOCK_REALTIME, &t);
      x = ((u64)t.tv_sec * 1000000007u) ^ (u64)t.tv_nsec ^ ((u64)getpid() << 32);
      if (x == 0) x = 1;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
  } while (!atomic_compare_exchange_weak(state, &cur, x));
  return TERM(NUM, 0, (u32)((x * 0x2545F4914F6CDD1Dull) >> 33));
}

Term prim_io(Wnf *w, Term pri) {
  switch (EXT(pri)) {
    case PRIM_ARGV:        return prim_argv(w);
    case PRIM_ENV:         return prim_env(w, pri);
    case PRIM_CWD:         return prim_cwd(w, pri);
    case PRIM_CHDIR:       return prim_chdir(w, pri);
    case PRIM_READ_FILE:   return read_file(w, pri, 0);
    case PRIM_READ_BYTES:  return read_file(w, pri, 1);
    case PRIM_WRITE_FILE:  return write_file(w, pri, 0);
    case PRIM_WRITE_BYTES: return write_file(w, pri, 1);
    case PRIM_RAND:        return prim_rand(w, pri);
    default: {
      Term r = prim_task(w, pri);
      if (!r) r = prim_net(w, pri);
      if (r) return r;
      char msg[128];
      snprintf(msg, sizeof msg, "unknown primitive '%%%s'", prim_name(EXT(pri)));
      eval_die(msg);
      return 0;
    }
  }
}
