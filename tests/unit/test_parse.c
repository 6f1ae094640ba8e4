// test_parse: unit checks for names, parser and printer.
//
//   test_parse FILE..    parse each program, print every definition's template
//   test_parse           run the checks (from the repository root); with
//                        HVM4_TESTS=dir also parse every dir/*.hvm4: those
//                        with a `//PARSE_ERROR` line must fail, others pass.
//
// Build: make NVCC= BUILD=build-unit build-unit/libhvm4g.a, then
//        cc -std=gnu11 -O1 -g -Isrc -Iinclude -Itests/unit -o /tmp/tp
//        tests/unit/test_parse.c build-unit/libhvm4g.a -lpthread -lm -ldl
// Everything runs on a thread with a 1 GiB stack, as main.c does.

#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "heap/heap.h"
#include "heap/rt.h"
#include "run/api.h"

// The test's runtime context, made before main with the defaults.
// `used`: a test that never reads it must keep it, and its context reachable
__attribute__((used)) static Rt *TEST_RT;
__attribute__((constructor)) static void test_context(void) {
  Options o;
  api_options_default(&o);
  TEST_RT = RT = api_context(&o);
}
#include <malloc.h>
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "lang/lang_rt.h"
#include "heap/rt.h"

static int    ARGC;
static char **ARGV;
static int    RC;
static u32    PASS, FAIL;

static void check(int ok, const char *what, const char *got, const char *want) {
  if (ok) { PASS++; return; }
  FAIL++;
  printf("FAIL %s\n", what);
  if (want) printf("  want: %s\n", want);
  if (got)  printf("  got:  %s\n", got);
}

// Text capture
// ============

static char *slurp(FILE *f) {
  fflush(f);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = 0;
  return buf;
}

static char *show_term(Term t, int quoted) {
  FILE *f = tmpfile();
  if (quoted) print_quoted(f, t);
  else        print_term(f, t);
  char *s = slurp(f);
  fclose(f);
  return s;
}

// Removes ANSI colour sequences in place.
static void strip_ansi(char *s) {
  char *o = s;
  while (*s) {
    if (*s == '\033' && s[1] == '[') {
      s += 2;
      while (*s && *s != 'm') s++;
      if (*s) s++;
      continue;
    }
    *o++ = *s++;
  }
  *o = 0;
}

// Runs parse_text with stderr captured into *err (colours stripped).
// Captures what the parser writes to stderr, between err_begin and err_end
// (which returns it, as written: colour codes included).
typedef struct {
  FILE *tmp;
  int   old;
} ErrCap;

static void err_begin(ErrCap *c) {
  fflush(stderr);
  c->tmp = tmpfile();
  c->old = dup(2);
  dup2(fileno(c->tmp), 2);
}

static char *err_end(ErrCap *c) {
  fflush(stderr);
  dup2(c->old, 2);
  close(c->old);
  char *err = slurp(c->tmp);
  fclose(c->tmp);
  return err;
}

static int parse_capture(const char *file, const char *src, char **err) {
  ErrCap cap;
  err_begin(&cap);
  parse_reset();
  int rc = parse_text(file, src);
  *err = err_end(&cap);
  strip_ansi(*err);
  return rc;
}

static Term main_term(void) {
  u32 id = table_find("main", 4);
  return id == ~0u || !RT->heap.book[id] ? 0 : RT->heap.at[RT->heap.book[id]];
}

// Template validation
// ===================
// Every location word points inside the template; VARs point at LAM nodes,
// DP0/DP1 at DUP nodes of the same label; no SUB bits.

static int valid_template(u32 id) {
  u32   base = RT->heap.book[id], len = RT->heap.book_len[id];
  u8   *kind = calloc(len, 1);   // 1: LAM node, 2: DUP node
  u32  *labs = calloc(len, sizeof(u32));
  int   ok   = len > 0;
  for (u32 i = 0; i < len && ok; i++) {
    Term t = RT->heap.at[base + i];
    u32  tg = TAG(t);
    if (IS_SUB(t)) ok = 0;
    if (HAS_LOC(tg) && (VAL(t) < base || VAL(t) >= base + len)) ok = 0;
    if (ok && tg == LAM) kind[VAL(t) - base] = 1;
    if (ok && tg == DUP) { kind[VAL(t) - base] = 2; labs[VAL(t) - base] = EXT(t); }
  }
  for (u32 i = 0; i < len && ok; i++) {
    Term t = RT->heap.at[base + i];
    u32  tg = TAG(t);
    if (tg == VAR && kind[VAL(t) - base] != 1) ok = 0;
    if ((tg == DP0 || tg == DP1) &&
        (kind[VAL(t) - base] != 2 || labs[VAL(t) - base] != EXT(t))) ok = 0;
  }
  free(kind);
  free(labs);
  return ok;
}

static int all_valid(void) {
  for (u32 id = 0; id < table_count(); id++) {
    if (RT->heap.book[id] && !valid_template(id)) return 0;
  }
  return 1;
}

// Checks
// ======

static void check_names(void) {
  char buf[8];
  nick_str(nick_of("Foob", 4), buf);
  check(strcmp(buf, "Foob") == 0, "nick of four characters", buf, "Foob");
  nick_str(5, buf);
  check(strcmp(buf, "e") == 0, "nick of label 5", buf, "e");
  nick_str(0x800000, buf);
  check(strcmp(buf, "F___") == 0, "nick of the first fresh label", buf, "F___");
  u32 a = table_id("a_very_long_function_name_1", 27);
  u32 b = table_id("a_very_long_function_name_2", 27);
  check(a != b && table_id("a_very_long_function_name_1", 27) == a,
        "long names do not collide", NULL, NULL);
  check(strcmp(table_name(b), "a_very_long_function_name_2") == 0, "table_name", NULL, NULL);
  // Many names: the table grows and finds them all again.
  char nm[32];
  u32  first = table_count(), bad = 0;
  for (u32 i = 0; i < 100000; i++) {
    int n = snprintf(nm, sizeof nm, "gen_%u", i);
    if (table_id(nm, (u32)n) != first + i) bad++;
  }
  for (u32 i = 0; i < 100000; i++) {
    int n = snprintf(nm, sizeof nm, "gen_%u", i);
    if (table_find(nm, (u32)n) != first + i) bad++;
  }
  check(bad == 0, "100000 table names", NULL, NULL);
  check(prim_id("add", 3) == PRIM_OP + OP_ADD && prim_id("log", 3) == PRIM_LOG &&
        prim_id("nf", 2) == PRIM_NF && prim_id("gnf", 3) == PRIM_GNF &&
        prim_id("ge", 2) == PRIM_OP + OP_GE && prim_id("foo", 3) == ~0u,
        "primitive ids", NULL, NULL);
}

// Runs the "> program / = out / ! err" cases file.
static void check_cases(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) { check(0, "open cases file", path, NULL); return; }
  char  line[8192];
  char *prog = NULL;
  char  want[65536];
  int   is_err = 0;
  want[0] = 0;
  for (int more = 1; more;) {
    more = fgets(line, sizeof line, f) != NULL;
    if (more && (line[0] == '#' || line[0] == '\n')) continue;
    if (more && (line[0] == '=' || line[0] == '!')) {
      is_err = line[0] == '!';
      strncat(want, line + 2, sizeof want - strlen(want) - 1);
      continue;
    }
    if (prog) {
      char *err = NULL;
      int   rc  = parse_capture("t.hvm4", prog, &err);
      char  what[9000];
      snprintf(what, sizeof what, "case: %s", prog);
      what[strcspn(what, "\n")] = 0;
      if (is_err) {
        check(rc != 0 && strcmp(err, want) == 0, what, err, want);
      } else if (rc != 0) {
        check(0, what, err, want);
      } else {
        char *got = show_term(main_term(), 0);
        size_t n = strlen(want);
        if (n && want[n - 1] == '\n') want[n - 1] = 0;
        check(strcmp(got, want) == 0 && all_valid(), what, got, want);
        free(got);
      }
      free(err);
      free(prog);
      prog = NULL;
    }
    if (more && line[0] == '>') {
      prog = strdup(line + 2);
      want[0] = 0;
      is_err = 0;
    }
  }
  fclose(f);
}

static void check_text(const char *src, const char *want) {
  char *err = NULL;
  int   rc  = parse_capture("t.hvm4", src, &err);
  char *got = rc == 0 ? show_term(main_term(), 0) : strdup(err);
  check(rc == 0 && strcmp(got, want) == 0, src, got, want);
  free(got);
  free(err);
}

static void check_errors_format(void) {
  ErrCap cap;
  err_begin(&cap);
  parse_reset();
  int   rc  = parse_text("t.hvm4", "@main = λx.y\n");
  char *err = err_end(&cap);
  // at the use, and no colour: the caller adds it on a terminal
  const char *want = "PARSE_ERROR (t.hvm4:1:12)\n- undefined variable 'y'\n";
  check(rc != 0 && strcmp(err, want) == 0, "error header at the use", err, want);
  free(err);
  rc = parse_capture("t.hvm4", "@main = %add(1)\n", &err);
  check(rc != 0 && strstr(err, "expected: argument"), "%add needs 2 arguments", err, NULL);
  free(err);
  rc = parse_capture("t.hvm4", "@main = %nf\n", &err);
  check(rc != 0 && strstr(err, "primitive application"), "bare %nf", err, NULL);
  free(err);
  check_text("@main = λa.λb.%sub(%gnf(a), b)\n", "λa.λb.%sub(%gnf(a),b)");
  check_text("@main = %log(\"hi\")\n", "%log(\"hi\")");
  check_text("@main = %nf(#P{1,2})\n", "%nf(#P{1,2})");
}

static void check_files(void) {
  parse_reset();
  int rc = parse_file("tests/unit/parse/inc_main.hvm4");
  check(rc == 0, "includes parse", NULL, NULL);
  if (rc == 0) {
    char *got = show_term(main_term(), 0);
    check(strcmp(got, "[@id(1),@sub,@twice]") == 0, "include main", got, "[@id(1),@sub,@twice]");
    free(got);
    u32 tw = table_find("twice", 5);
    got = tw != ~0u && RT->heap.book[tw] ? show_term(RT->heap.at[RT->heap.book[tw]], 0) : strdup("(none)");
    const char *want = "λa.λb.A₀(A₁(b));!A&F___=a;";
    check(strcmp(got, want) == 0, "nested include", got, want);
    free(got);
  }
  ErrCap cap;
  err_begin(&cap);
  parse_reset();
  rc = parse_file("tests/unit/parse/inc_missing.hvm4");
  int   rc2 = parse_file("tests/unit/parse/no/such/file.hvm4");
  char *err = err_end(&cap);
  // the reason, and for an include the line that names it
  check(rc != 0 && rc2 != 0 && strstr(err, "cannot open") &&
        strstr(err, "no_such_file.hvm4") && strstr(err, "No such file") &&
        strstr(err, "inc_missing.hvm4:"), "missing files", err, NULL);
  free(err);
}

// Templates: exact words of small ones.
static void check_layout(void) {
  char *err = NULL;
  parse_capture("t.hvm4", "@main = λx.λy.x\n", &err);
  free(err);
  u32  id = table_find("main", 4), b = RT->heap.book[id];
  Term r  = RT->heap.at[b];
  int  ok = TAG(r) == LAM && EXT(r) == 0 && TAG(RT->heap.at[VAL(r)]) == LAM &&
            EXT(RT->heap.at[VAL(r)]) == LAM_ERA && RT->heap.at[VAL(RT->heap.at[VAL(r)])] == TERM(VAR, 0, VAL(r));
  check(ok, "layout: λx.λy.x (VAR to body slot, LAM_ERA)", NULL, NULL);
  parse_capture("t.hvm4", "@main = λx.!X&L=x;#P{X₁,X₀}\n", &err);
  free(err);
  b = RT->heap.book[id];
  r = RT->heap.at[b];
  Term dup = RT->heap.at[VAL(r)];
  u32  dl  = VAL(dup);
  Term ctr = RT->heap.at[dl + 1];
  ok = TAG(dup) == DUP && EXT(dup) == nick_of("L", 1) && RT->heap.at[dl] == TERM(VAR, 0, VAL(r)) &&
       TAG(ctr) == C00 + 2 && RT->heap.at[VAL(ctr)] == TERM(DP1, EXT(dup), dl) &&
       RT->heap.at[VAL(ctr) + 1] == TERM(DP0, EXT(dup), dl);
  check(ok, "layout: DUP node [expr, body], DP0/DP1 to expr slot", NULL, NULL);
  parse_capture("t.hvm4", "@main = λa.! f = λ v ; #P{f, v, a}\n", &err);
  free(err);
  b = RT->heap.book[id];
  Term uns = RT->heap.at[VAL(RT->heap.at[b])];
  Term lf  = TAG(uns) == UNS ? RT->heap.at[VAL(uns)] : 0;
  Term lv  = TAG(lf) == LAM ? RT->heap.at[VAL(lf)] : 0;
  Term bd  = TAG(lv) == LAM ? RT->heap.at[VAL(lv)] : 0;
  ok = TAG(bd) == C00 + 3 && RT->heap.at[VAL(bd)] == TERM(VAR, 0, VAL(lf)) &&
       RT->heap.at[VAL(bd) + 1] == TERM(VAR, 0, VAL(lv));
  check(ok, "layout: UNS [λf.λv.body]", NULL, NULL);
  parse_capture("t.hvm4", "@main = λa.!X&(a)=7;#P{X₁,X₀}\n", &err);
  free(err);
  b = RT->heap.book[id];
  Term ddu = RT->heap.at[VAL(RT->heap.at[b])];
  u32  nl  = VAL(ddu);
  Term l0  = RT->heap.at[nl + 2];
  Term l1  = TAG(l0) == LAM ? RT->heap.at[VAL(l0)] : 0;
  Term bd2 = TAG(l1) == LAM ? RT->heap.at[VAL(l1)] : 0;
  ok = TAG(ddu) == DDU && RT->heap.at[nl] == TERM(VAR, 0, VAL(RT->heap.at[b])) && RT->heap.at[nl + 1] == TERM(NUM, 0, 7) &&
       TAG(bd2) == C00 + 2 && RT->heap.at[VAL(bd2)] == TERM(VAR, 0, VAL(l1)) &&
       RT->heap.at[VAL(bd2) + 1] == TERM(VAR, 0, VAL(l0));
  check(ok, "layout: DDU [lab, val, λx₀.λx₁.body]", NULL, NULL);
  parse_capture("t.hvm4", "@main = λ{#A:1;2}\n", &err);
  free(err);
  r = RT->heap.at[RT->heap.book[id]];
  ok = TAG(r) == MAT && EXT(r) == ctr_find("A", 1) && RT->heap.at[VAL(r)] == TERM(NUM, 0, 1) &&
       RT->heap.at[VAL(r) + 1] == TERM(NUM, 0, 2);
  check(ok, "layout: MAT [hit, miss]", NULL, NULL);
}

static Term *H(u32 n, u32 *loc) {
  *loc = heap_alloc(n);
  return &RT->heap.at[*loc];
}

// Quoted terms and SUB following, built by hand.
static void check_print(void) {
  u32  l1, l2, l3, l4;
  Term *a = H(1, &l1), *b = H(2, &l2), *c = H(1, &l3);
  // λa.λb.a(b, _) with a dangling level
  a[0] = TERM(LAM, 2, l3);
  c[0] = TERM(APP, 0, l2);
  Term *ap = H(2, &l4);
  ap[0] = TERM(BJV, 0, 1);
  ap[1] = TERM(BJV, 0, 2);
  b[0] = TERM(APP, 0, l4);
  b[1] = TERM(BJV, 0, 7);
  char *got = show_term(TERM(LAM, 1, l1), 1);
  check(strcmp(got, "λa.λb.a(b,_)") == 0, "quoted lambdas", got, "λa.λb.a(b,_)");
  free(got);
  // BJ0/BJ1 by level, SUP label, numbers.
  Term *s = H(2, &l1);
  s[0] = TERM(BJ0, 3, 1);
  s[1] = TERM(BJ1, 3, 1);
  Term *l = H(1, &l2);
  l[0] = TERM(SUP, nick_of("L", 1), l1);
  got = show_term(TERM(LAM, 1, l2), 1);
  check(strcmp(got, "λa.&L{A₀,A₁}") == 0, "quoted dup vars", got, "λa.&L{A₀,A₁}");
  free(got);
  // A VAR whose slot holds a SUB word prints the substituted term.
  Term *lam = H(1, &l1);
  Term *pr  = H(2, &l2);
  pr[0] = TERM(VAR, 0, l1);
  pr[1] = TERM(NUM, 0, 5);
  lam[0] = AS_SUB(TERM(NUM, 0, 42));
  got = show_term(TERM(C00 + 2, ctr_id("P", 1), l2), 0);
  check(strcmp(got, "#P{42,5}") == 0, "SUB following", got, "#P{42,5}");
  free(got);
  // Escapes.
  check_text("@main = \"a\\\"b\\\\c\\nd'\"\n", "\"a\\\"b\\\\c\\nd'\"");
  check_text("@main = '\\''\n", "'\\''");
  check_text("@main = #CHR{7}\n", "#CHR{7}");
  check_text("@main = [#CHR{65},#CHR{7}]\n", "['A',#CHR{7}]");
  check_text("@main = λx.↑x\n", "λa.↑a");
  check_text("@main = λx.λy.&(x){y,2}\n", "λa.λb.&(a){b,2}");
}

static void *too_deep(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  (void)arg;
  u32   n   = 4000000;
  char *src = malloc((size_t)n + 64);
  char *p   = src + sprintf(src, "@main = ");
  memset(p, '(', n);
  strcpy(p + n, "1\n");
  char *err = NULL;
  int   rc  = parse_capture("t.hvm4", src, &err);
  check(rc != 0 && strstr(err, "nested too deeply"), "4M-deep parentheses", err, NULL);
  free(err);
  free(src);
  return NULL;
}

// Deep and long terms must neither crash nor take long.
static void check_deep(void) {
  u32   n   = 200000;
  char *src = malloc(n * 2 + 64);
  char *p   = src + sprintf(src, "@main = ");
  for (u32 i = 0; i < n; i++) *p++ = '(';
  *p++ = '7';
  for (u32 i = 0; i < n; i++) *p++ = ')';
  strcpy(p, "\n");
  check_text(src, "7");
  free(src);
  // 200000 nested constructors round-trip.
  src = malloc(n * 8 + 64);
  p   = src + sprintf(src, "@main = ");
  for (u32 i = 0; i < n; i++) p += sprintf(p, "#S{");
  *p++ = '0';
  for (u32 i = 0; i < n; i++) *p++ = '}';
  *p = 0;
  char *want = strdup(src + 8);
  strcat(p, "\n");
  check_text(src, want);
  free(want);
  free(src);
  // A list of a million elements.
  u32 m = 1000000;
  src = malloc((size_t)m * 8 + 64);
  p   = src + sprintf(src, "@main = [");
  for (u32 i = 0; i < m; i++) p += sprintf(p, i ? ",%u" : "%u", i % 10);
  strcpy(p, "]\n");
  want = strdup(src + 8);
  want[strlen(want) - 1] = 0;
  check_text(src, want);
  free(want);
  // An improper list and a nat of a million.
  p = src + sprintf(src, "@main = λx.");
  for (u32 i = 0; i < m; i++) p += sprintf(p, "1<>");
  strcpy(p, "x\n");
  char *err = NULL;
  int   rc  = parse_capture("t.hvm4", src, &err);
  char *got = rc == 0 ? show_term(main_term(), 0) : strdup(err);
  size_t gl = strlen(got);
  check(rc == 0 && gl == 3 * (size_t)m + 5 && strncmp(got, "λa.1<>1<>", 10) == 0 &&
        strcmp(got + gl - 4, "1<>a") == 0, "improper list of a million", rc ? got : NULL, NULL);
  free(got);
  free(err);
  check_text("@main = 1000000n\n", "1000000n");
  // 20000 nested cloned lets, each used twice: auto-dup stays linear.
  p = src + sprintf(src, "@main = !&a0 = 1;\n");
  for (u32 i = 1; i < 20000; i++) p += sprintf(p, "!&a%u = a%u + a%u;\n", i, i - 1, i - 1);
  sprintf(p, "a19999 + a19999\n");
  rc = parse_capture("t.hvm4", src, &err);
  got = rc == 0 ? show_term(main_term(), 0) : strdup(err);
  check(rc == 0 && strncmp(got, "(λa.(λb.", 10) == 0 && strstr(got, "!A&Fd3E=a;") && all_valid(),
        "20000 cloned lets", NULL, NULL);
  free(got);
  free(err);
  free(src);
  // Too deep for the stack (a 64 MiB one here): a clear error, no crash.
  pthread_attr_t at;
  pthread_t      th;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 64u << 20);
  pthread_create(&th, &at, too_deep, NULL);
  pthread_join(th, NULL);
}

// Contexts
// ========
// A runtime's lang part holds all of the layer's state: runtimes opened and
// closed one after another leave no memory behind, and two of them parse
// and print on two threads at once without touching each other's.

static const char *CTX_PROG =
  "@id = λx.x\n"
  "@main = λ{#A: λ&x. &L{x, [x, 3n]}; λv. !d&L = v; @id(d₀, \"hi\", d₁)}\n";

// (a fresh context's first automatic label is the first, F___)
static const char *CTX_WANT =
  "λ{#A:λa.&L{A₀,[A₁,3n]};λb.@id(B₀,\"hi\",B₁)};!A&F___=a;!B&L=b;";

// A context of its own (lang part and heap), made current.
typedef struct {
  Rt     rt;
  LangRt lang;
} Ctx;

static Ctx *ctx_open(void) {
  Ctx *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->rt.lang = &c->lang;
  RT = &c->rt;
  if (heap_init(1u << 16) != 0 || lang_rt_open() != 0) {
    free(c);
    return NULL;
  }
  return c;
}

static void ctx_close(Ctx *c) {
  lang_rt_close();
  heap_free();
  free(c);
  RT = NULL;
}

// Parses CTX_PROG (and a program with an error) in the current context and
// prints @main; 1 when all went as expected.
static int ctx_work(void) {
  char  *msg = NULL;
  size_t len = 0;
  FILE  *errs = open_memstream(&msg, &len);
  parse_set_errors(errs);
  int bad = parse_text("bad.hvm4", "@x = λa.&L{a, a}");
  int ok  = bad != 0 && parse_text("ctx.hvm4", CTX_PROG) == 0;
  parse_set_errors(NULL);
  fclose(errs);
  ok = ok && strstr(msg, "used 2 times") != NULL;
  free(msg);
  Term t = main_term();
  if (!ok || !t) return 0;
  char *got = show_term(t, 0);
  ok = strcmp(got, CTX_WANT) == 0;
  free(got);
  return ok;
}

static void check_contexts_serial(void) {
  Rt    *was = RT;
  int    ok  = 1;
  size_t warm = 0, after = 0;
  for (int i = 0; i < 1000 && ok; i++) {
    Ctx *c = ctx_open();
    ok = c && ctx_work();
    if (c) ctx_close(c);
    if (i == 9) warm = mallinfo2().uordblks;
  }
  after = mallinfo2().uordblks;
  RT = was;
  check(ok, "1000 contexts parse and print", NULL, NULL);
  char got[64];
  snprintf(got, sizeof got, "%zu bytes more", after > warm ? after - warm : 0);
  check(after <= warm, "1000 contexts leave memory flat", got, "0 bytes more");
}

static void *ctx_thread(void *arg) {
  int *ok = arg;
  for (int i = 0; i < 200 && *ok; i++) {
    Ctx *c = ctx_open();
    *ok = c && ctx_work();
    if (c) ctx_close(c);
  }
  return NULL;
}

static void check_contexts_parallel(void) {
  pthread_t th[2];
  int       ok[2] = {1, 1};
  for (int i = 0; i < 2; i++) {
    if (pthread_create(&th[i], NULL, ctx_thread, &ok[i]) != 0) ok[i] = 0;
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  check(ok[0] && ok[1], "two contexts at once, on two threads", NULL, NULL);
}

// Parser memory is bounded by the heap (issue 11): on a heap of 64K words a
// nat literal or a string far larger than it fails at once with a message,
// within an address-space limit of 256 MiB above what is mapped now (left
// out under ASan, whose shadow memory needs room of its own). Before the
// bound, the nat built its 10^12 #SUCs in the scratch and the string its
// 24 bytes a character. Run last: it replaces the heap.
static void check_bounded(void) {
  heap_free();
  if (heap_init(1u << 16) != 0) { check(0, "small heap", NULL, NULL); return; }
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f && fscanf(f, "%lu", &pages) == 1) {
    struct rlimit r = {0, 0};
    getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256ul << 20);
    setrlimit(RLIMIT_AS, &r);
  }
  if (f) fclose(f);
#endif
  char *err;
  int   rc = parse_capture("t.hvm4", "@main = 999999999999n\n", &err);
  check(rc != 0 && strstr(err, "t.hvm4:1:") && strstr(err, "nat literal"), "nat literal beyond the heap", err, "nat literal");
  free(err);
  u32   n   = 64u << 20;
  char *src = malloc(n + 16);
  memcpy(src, "@main = \"", 9);
  memset(src + 9, 'x', n);
  strcpy(src + 9 + n, "\"\n");
  rc = parse_capture("t.hvm4", src, &err);
  check(rc != 0 && strstr(err, "heap exhausted while loading"), "64 MiB string on a 64K-word heap", err, "heap exhausted");
  free(err);
  free(src);
}

// Every test program of a directory: parse errors exactly where marked.
static void check_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) { check(0, "open HVM4_TESTS", dir, NULL); return; }
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".hvm4") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[4096];
    int  want_err = 0;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "//PARSE_ERROR", 13) == 0) want_err = 1;
    }
    fclose(f);
    ErrCap cap;
    err_begin(&cap);
    parse_reset();
    int   rc  = parse_file(path);
    char *err = err_end(&cap);
    strip_ansi(err);
    check((rc != 0) == want_err && (rc != 0 || all_valid()), path, err, want_err ? "PARSE_ERROR" : "parses");
    free(err);
  }
  closedir(d);
}

static void *run(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  (void)arg;
  if (heap_init(1ull << 30) != 0) { fprintf(stderr, "heap_init failed\n"); RC = 1; return NULL; }
  if (ARGC > 1) {
    for (int i = 1; i < ARGC; i++) {
      parse_reset();
      if (parse_file(ARGV[i]) != 0) { RC = 1; continue; }
      for (u32 id = 0; id < table_count(); id++) {
        if (!RT->heap.book[id]) continue;
        printf("@%s = ", table_name(id));
        print_term(stdout, RT->heap.at[RT->heap.book[id]]);
        printf("\n");
        RT->heap.book[id] = 0;
      }
    }
    return NULL;
  }
  check_names();
  check_cases("tests/unit/parse/cases.txt");
  check_errors_format();
  check_files();
  check_layout();
  check_print();
  check_deep();
  const char *dir = getenv("HVM4_TESTS");
  if (dir && *dir) check_dir(dir);
  check_contexts_serial();
  check_contexts_parallel();
  check_bounded();
  printf("%u passed, %u failed\n", PASS, FAIL);
  RC = FAIL != 0;
  return NULL;
}

int main(int argc, char **argv) {
  ARGC = argc;
  ARGV = argv;
  pthread_attr_t at;
  pthread_t      th;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 1ull << 30);
  if (pthread_create(&th, &at, run, NULL) != 0) { fprintf(stderr, "no thread\n"); return 1; }
  pthread_join(th, NULL);
  return RC;
}
