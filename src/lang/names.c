// names.c: nick codec, name tables, primitive names.

#include <stdlib.h>
#include <string.h>
#include "lang/names.h"
#include "lang/lang_rt.h"
#include "lang/parse.h"
#include "lang/print.h"

static const char NICK_ABC[] =
  "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$";

int nick_digit(int c) {
  if (c == '_')              return 0;
  if (c >= 'a' && c <= 'z')  return 1 + (c - 'a');
  if (c >= 'A' && c <= 'Z')  return 27 + (c - 'A');
  if (c >= '0' && c <= '9')  return 53 + (c - '0');
  if (c == '$')              return 63;
  return -1;
}

u32 nick_of(const char *s, u32 len) {
  u32 k = 0;
  for (u32 i = 0; i < len; i++) {
    int d = nick_digit((unsigned char)s[i]);
    k = ((k << 6) + (u32)(d < 0 ? 0 : d)) & EXT_MASK;
  }
  return k;
}

int nick_str(u32 nick, char *buf) {
  char tmp[5];
  int  n = 0;
  nick &= EXT_MASK;
  do { tmp[n++] = NICK_ABC[nick & 63]; nick >>= 6; } while (nick);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = 0;
  return n;
}

void nick_print(FILE *f, u32 nick) {
  char buf[8];
  nick_str(nick, buf);
  for (char *c = buf; *c; c++) putc_unlocked(*c, f);   // print.c holds the lock
}

// Name tables
// ===========

static u32 hash_of(const char *s, u32 len) {
  u32 h = 2166136261u;
  for (u32 i = 0; i < len; i++) h = (h ^ (u8)s[i]) * 16777619u;
  return h;
}

static int grow_slots(Names *t) {
  u32  cap = t->slots ? t->slots * 2 : 1024;
  u32 *ns  = calloc(cap, sizeof(u32));
  if (!ns) return -1;
  for (u32 id = 0; id < t->len; id++) {
    u32 i = hash_of(t->name[id], (u32)strlen(t->name[id])) & (cap - 1);
    while (ns[i]) i = (i + 1) & (cap - 1);
    ns[i] = id + 1;
  }
  free(t->slot);
  t->slot  = ns;
  t->slots = cap;
  return 0;
}

static u32 lookup(const Names *t, const char *s, u32 len, u32 *slot) {
  if (!t->slots) { *slot = 0; return ~0u; }
  u32 i = hash_of(s, len) & (t->slots - 1);
  while (t->slot[i]) {
    const char *n = t->name[t->slot[i] - 1];
    if (strncmp(n, s, len) == 0 && n[len] == 0) return t->slot[i] - 1;
    i = (i + 1) & (t->slots - 1);
  }
  *slot = i;
  return ~0u;
}

static u32 limit_of(const Names *t) {
  return t->limit && t->limit < NAMES_LIMIT ? t->limit : NAMES_LIMIT;
}

static u32 find_or_add(Names *t, const char *s, u32 len) {
  u32 slot;
  u32 id = lookup(t, s, len, &slot);
  if (id != ~0u) return id;
  if (t->len >= limit_of(t)) return ~0u;
  if ((t->len + 1) * 2 > t->slots) {
    if (grow_slots(t) != 0) return ~0u;
    lookup(t, s, len, &slot);
  }
  if (t->len == t->cap) {
    u32    cap = t->cap ? t->cap * 2 : 256;
    char **nn  = realloc(t->name, cap * sizeof(char *));
    if (!nn) return ~0u;
    t->name = nn;
    t->cap  = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return ~0u;
  memcpy(copy, s, len);
  copy[len] = 0;
  id            = t->len++;
  t->name[id]   = copy;
  t->slot[slot] = id + 1;
  return id;
}

static void names_free(Names *t) {
  for (u32 id = 0; id < t->len; id++) free(t->name[id]);
  free(t->name);
  free(t->slot);
  *t = (Names){0};
}

// References

u32 table_find(const char *s, u32 len) {
  u32 slot;
  return lookup(&RT->lang->names, s, len, &slot);
}

u32 table_id(const char *s, u32 len) {
  return find_or_add(&RT->lang->names, s, len);
}

const char *table_name(u32 id) {
  const Names *t = &RT->lang->names;
  return id < t->len ? t->name[id] : NULL;
}

u32 table_count(void) {
  return RT->lang->names.len;
}

u32 table_limit(void) {
  return limit_of(&RT->lang->names);
}

// Constructors

static const char *const CTR_BUILTIN[CTR_BUILTINS] = CTR_BUILTIN_NAMES;

// The builtins at their ids, when the table is empty (a part that was
// never opened gets them on first use); 0, or -1: out of memory.
static int seed_ctrs(Names *t) {
  for (u32 i = t->len; i < CTR_BUILTINS; i++) {
    if (find_or_add(t, CTR_BUILTIN[i], (u32)strlen(CTR_BUILTIN[i])) != i) return -1;
  }
  return 0;
}

u32 ctr_id(const char *s, u32 len) {
  LangRt *l = RT->lang;
  pthread_mutex_lock(&l->ctr_lock);
  u32 id = seed_ctrs(&l->ctrs) == 0 ? find_or_add(&l->ctrs, s, len) : ~0u;
  pthread_mutex_unlock(&l->ctr_lock);
  return id;
}

u32 ctr_find(const char *s, u32 len) {
  LangRt *l = RT->lang;
  u32     slot;
  pthread_mutex_lock(&l->ctr_lock);
  u32 id = seed_ctrs(&l->ctrs) == 0 ? lookup(&l->ctrs, s, len, &slot) : ~0u;
  pthread_mutex_unlock(&l->ctr_lock);
  return id;
}

const char *ctr_name(u32 id) {
  if (id < CTR_BUILTINS) return CTR_BUILTIN[id];
  LangRt *l = RT->lang;
  pthread_mutex_lock(&l->ctr_lock);
  const char *n = id < l->ctrs.len ? l->ctrs.name[id] : NULL;   // a name never moves
  pthread_mutex_unlock(&l->ctr_lock);
  return n;
}

u32 ctr_count(void) {
  LangRt *l = RT->lang;
  pthread_mutex_lock(&l->ctr_lock);
  u32 n = l->ctrs.len > CTR_BUILTINS ? l->ctrs.len : CTR_BUILTINS;
  pthread_mutex_unlock(&l->ctr_lock);
  return n;
}

u32 ctr_limit(void) {
  return limit_of(&RT->lang->ctrs);
}

// Operators
// =========
// Each OP_x's infix spelling: the parser reads it, the printer writes it.

static const char *const OP_NAMES[OP_COUNT] = {
  [OP_EQ]  = "==", [OP_NE]  = "!=", [OP_LT]  = "<",  [OP_LE]  = "<=",
  [OP_GT]  = ">",  [OP_GE]  = ">=", [OP_ADD] = "+",  [OP_SUB] = "-",
  [OP_MUL] = "*",  [OP_DIV] = "/",  [OP_MOD] = "%",  [OP_AND] = "&&",
  [OP_OR]  = "||", [OP_XOR] = "^",  [OP_LSH] = "<<", [OP_RSH] = ">>",
  [OP_NOT] = "~",
};

const char *op_name(u32 op) {
  return op < OP_COUNT ? OP_NAMES[op] : NULL;
}

// Primitives
// ==========

static const char *const PRIM_NAMES[PRIM_COUNT] = {
  [PRIM_LOG]          = "log", [PRIM_GNF]          = "gnf",
  [PRIM_NF]           = "nf",
  [PRIM_ARGV]         = "argv",        [PRIM_ENV]          = "env",
  [PRIM_CWD]          = "cwd",         [PRIM_CHDIR]        = "chdir",
  [PRIM_READ_FILE]    = "read_file",   [PRIM_READ_BYTES]   = "read_bytes",
  [PRIM_WRITE_FILE]   = "write_file",  [PRIM_WRITE_BYTES]  = "write_bytes",
  [PRIM_PANIC]        = "panic",       [PRIM_RAND]         = "rand",
  [PRIM_COMPACT]      = "compact",
  [PRIM_STREAM_STDIN_OPEN] = "stream_stdin_open",
  [PRIM_STREAM_FILE_OPEN]  = "stream_file_open",
  [PRIM_STREAM_POLL]       = "stream_poll",   [PRIM_STREAM_WAIT]   = "stream_wait",
  [PRIM_STREAM_CLOSE]      = "stream_close",
  [PRIM_TIMER_START]       = "timer_start",   [PRIM_TIMER_POLL]    = "timer_poll",
  [PRIM_TIMER_WAIT]        = "timer_wait",
  [PRIM_PROCESS_SPAWN]     = "process_spawn", [PRIM_PROCESS_POLL]  = "process_poll",
  [PRIM_PROCESS_WAIT]      = "process_wait",  [PRIM_PROCESS_KILL]  = "process_kill",
  [PRIM_TCP_CONNECT]       = "tcp_connect",
  [PRIM_TCP_CONNECT_POLL]  = "tcp_connect_poll", [PRIM_TCP_CONNECT_WAIT] = "tcp_connect_wait",
  [PRIM_TCP_RECV_POLL]     = "tcp_recv_poll",    [PRIM_TCP_RECV_WAIT]    = "tcp_recv_wait",
  [PRIM_TCP_SEND_POLL]     = "tcp_send_poll",    [PRIM_TCP_SEND_WAIT]    = "tcp_send_wait",
  [PRIM_TCP_CLOSE]         = "tcp_close",
  [PRIM_HTTP_REQUEST]      = "http_request",     [PRIM_HTTP_POLL]        = "http_poll",
  [PRIM_HTTP_WAIT]         = "http_wait",        [PRIM_HTTP_CANCEL]      = "http_cancel",
  [PRIM_OP + OP_ADD]  = "add", [PRIM_OP + OP_SUB]  = "sub",
  [PRIM_OP + OP_MUL]  = "mul", [PRIM_OP + OP_DIV]  = "div",
  [PRIM_OP + OP_MOD]  = "mod", [PRIM_OP + OP_AND]  = "and",
  [PRIM_OP + OP_OR]   = "or",  [PRIM_OP + OP_XOR]  = "xor",
  [PRIM_OP + OP_LSH]  = "lsh", [PRIM_OP + OP_RSH]  = "rsh",
  [PRIM_OP + OP_NOT]  = "not", [PRIM_OP + OP_EQ]   = "eq",
  [PRIM_OP + OP_NE]   = "ne",  [PRIM_OP + OP_LT]   = "lt",
  [PRIM_OP + OP_LE]   = "le",  [PRIM_OP + OP_GT]   = "gt",
  [PRIM_OP + OP_GE]   = "ge",
};

u32 prim_id(const char *s, u32 len) {
  const PrimHooks *h = RT && RT->lang ? RT->lang->prims : NULL;
  u32 id;
  if (h && h->find(s, len, &id)) return id;
  for (u32 i = 0; i < PRIM_COUNT; i++) {
    if (strlen(PRIM_NAMES[i]) == len && memcmp(PRIM_NAMES[i], s, len) == 0) {
      return i;
    }
  }
  return ~0u;
}

const char *prim_name(u32 id) {
  if (PRIM_IS_FFI(id)) {
    const PrimHooks *h = RT && RT->lang ? RT->lang->prims : NULL;
    return h ? h->name(id) : NULL;
  }
  return id < PRIM_COUNT ? PRIM_NAMES[id] : NULL;
}

void names_set_prims(const PrimHooks *h) {
  RT->lang->prims = h;
}

// The part
// =
int lang_rt_open(void) {
  LangRt *l = RT->lang;
  if (pthread_mutex_init(&l->ctr_lock, NULL) != 0) return -1;
  if (seed_ctrs(&l->ctrs) == 0) return 0;
  pthread_mutex_destroy(&l->ctr_lock);
  names_free(&l->ctrs);
  return -1;
}

void lang_rt_close(void) {
  LangRt *l = RT->lang;
  names_free(&l->names);
  names_free(&l->ctrs);
  pthread_mutex_destroy(&l->ctr_lock);
  parse_free();
  print_free();
}
