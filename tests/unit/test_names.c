// test_names.c: the name tables (lang/names.h). The builtin constructors
// sit at their fixed ids, in order; every spelling gets its own id and
// prints back; a table that is full is a parse error naming the count and
// the limit (the limit lowered through Names.limit); labels and `^name`s
// longer than their field are parse errors; threads find and add names at
// once (as libraries of primitives do from the -T pool).
// Prints one line per failure; last line "N passed, N failed".

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heap/heap.h"
#include "heap/rt.h"
#include "lang/lang_rt.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"

#include "check.h"

// Parses src; what the parser printed, in a string to free.
static char *parse_err(const char *src, int *rc) {
  char  *msg = NULL;
  size_t len = 0;
  FILE  *f   = open_memstream(&msg, &len);
  parse_set_errors(f);
  parse_reset();
  *rc = parse_text("t.hvm4", src);
  parse_set_errors(NULL);
  fclose(f);
  return msg;
}

static int has(const char *s, const char *part) {
  return s && strstr(s, part) != NULL;
}

static void test_builtins(void) {
  static const char *const want[CTR_BUILTINS] = CTR_BUILTIN_NAMES;
  const u32 ids[CTR_BUILTINS] = {CTR_NIL, CTR_CON, CTR_CHR, CTR_ZER, CTR_SUC,
                                 CTR_OK, CTR_ERR, CTR_BYT, CTR_T, CTR_F};
  CHECK(ctr_count() == CTR_BUILTINS);   // an open runtime starts with them alone
  for (u32 i = 0; i < CTR_BUILTINS; i++) {
    CHECK(ids[i] == i);
    CHECK(ctr_find(want[i], (u32)strlen(want[i])) == i);
    CHECK(ctr_name(i) && strcmp(ctr_name(i), want[i]) == 0);
  }
}

static void test_spellings(void) {
  u32 hello = ctr_id("Hello", 5), xello = ctr_id("Xello", 5), ello = ctr_id("ello", 4);
  CHECK(hello != xello && hello != ello && xello != ello);
  CHECK(hello >= CTR_BUILTINS && ctr_id("Hello", 5) == hello && ctr_find("Xello", 5) == xello);
  CHECK(strcmp(ctr_name(hello), "Hello") == 0 && strcmp(ctr_name(ello), "ello") == 0);
  CHECK(ctr_find("Nope", 4) == ~0u && ctr_name(ctr_count()) == NULL);
  // constructors and references have tables of their own: a constructor
  // spends no book id
  u32 refs = table_count();
  ctr_id("Only_a_ctr", 10);
  CHECK(table_count() == refs && table_find("Only_a_ctr", 10) == ~0u);
}

// A table that is full: the next new name fails, found names still work,
// and the parser says how many and what the field holds.
static void test_limit(void) {
  Names *t = &RT->lang->ctrs;
  u32    n = ctr_count();
  t->limit = n + 2;
  CHECK(ctr_id("Lim_a", 5) == n && ctr_id("Lim_b", 5) == n + 1);
  CHECK(ctr_id("Lim_c", 5) == ~0u && ctr_id("Lim_a", 5) == n);
  int   rc;
  char *err = parse_err("@main = [#Lim_a{}, #Lim_b{}, #Lim_c{}]\n", &rc);
  char  want[160];
  snprintf(want, sizeof want, "'#Lim_c' would be distinct name number %u, and the name field holds %u",
           n + 3, n + 2);
  CHECK(rc != 0 && has(err, "PARSE_ERROR (t.hvm4:1:31)") && has(err, "too many constructor names") &&
        has(err, want));
  if (!has(err, want)) printf("got: %s\n", err ? err : "(none)");
  free(err);
  t->limit = 0;
  CHECK(ctr_limit() == NAMES_LIMIT && NAMES_LIMIT == EXT_MASK + 1);
  // the references' table the same way
  Names *r = &RT->lang->names;
  r->limit = table_count() + 1;
  err = parse_err("@main = @ref_one\n@two = @ref_two\n", &rc);
  CHECK(rc != 0 && has(err, "too many definitions: '@two' would be distinct name number"));
  free(err);
  r->limit = 0;
}

// Labels and `^name`s keep their spelling in the field: four characters.
static void test_nicks(void) {
  int   rc;
  char *err = parse_err("@main = &abcd{1,2}\n", &rc);
  CHECK(rc == 0);
  free(err);
  err = parse_err("@main = &abcde{1,2}\n", &rc);
  CHECK(rc != 0 && has(err, "(t.hvm4:1:10)") &&
        has(err, "label 'abcde' is too long: a label holds at most 4 characters"));
  free(err);
  err = parse_err("@main = !x&Lab5x = 1; x₀\n", &rc);
  CHECK(rc != 0 && has(err, "label 'Lab5x' is too long"));
  free(err);
  err = parse_err("@main = ^named\n", &rc);
  CHECK(rc != 0 && has(err, "name 'named' is too long"));
  free(err);
  char buf[8];
  nick_str(nick_of("Zz_9", 4), buf);
  CHECK(strcmp(buf, "Zz_9") == 0);
}

// Variables: full spellings, in lookups and in messages.
static void test_vars(void) {
  int   rc;
  char *err = parse_err("@main = λx_ret. λy_ret. [x_ret, y_ret, y_ret]\n", &rc);
  CHECK(rc != 0 && has(err, "variable 'y_ret' used 2 times") && has(err, "as '&y_ret' to allow"));
  free(err);
  err = parse_err("@main = λlong_name. other_name\n", &rc);
  CHECK(rc != 0 && has(err, "undefined variable 'other_name'"));
  free(err);
  err = parse_err("@main = ! x_ret &T = &T{1,2}; ! y_ret &T = &T{3,4}; [x_ret₀, x_ret₁, y_ret₀, y_ret₁]\n", &rc);
  CHECK(rc == 0);
  free(err);
}

// Threads that find and add overlapping names at once: each spelling gets
// one id, and each id its spelling.
#define THREADS 8
#define PER     2000
static u32 GOT[THREADS][PER];

static void *adder(void *arg) {
  RT = TEST_RT;
  u32  k = (u32)(uintptr_t)arg;
  char nm[32];
  for (u32 i = 0; i < PER; i++) {
    u32 j = (i + k * 97) % PER;   // each thread in its own order
    int n = snprintf(nm, sizeof nm, "Thr_%u", j);
    GOT[k][j] = ctr_id(nm, (u32)n);
    (void)ctr_name(GOT[k][j]);
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t th[THREADS];
  u32       before = ctr_count();
  for (u32 k = 0; k < THREADS; k++) pthread_create(&th[k], NULL, adder, (void *)(uintptr_t)k);
  for (u32 k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
  u32  bad = 0;
  char nm[32];
  for (u32 j = 0; j < PER; j++) {
    snprintf(nm, sizeof nm, "Thr_%u", j);
    for (u32 k = 0; k < THREADS; k++) bad += GOT[k][j] != GOT[0][j];
    bad += !ctr_name(GOT[0][j]) || strcmp(ctr_name(GOT[0][j]), nm) != 0;
  }
  CHECK(bad == 0 && ctr_count() == before + PER);
}

int main(void) {
  if (heap_init(1u << 20) != 0 || lang_rt_open() != 0) {
    printf("setup failed\n");
    return 1;
  }
  test_builtins();
  test_spellings();
  test_limit();
  test_nicks();
  test_vars();
  test_threads();
  return check_done();
}
