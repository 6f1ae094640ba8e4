// embed.c: a program that embeds hvm4g through its library (hvm4g.h).
//
//   cc embed.c $(pkg-config --cflags --libs hvm4g) -o embed
//   ./embed                      # a built-in program
//   ./embed FILE.hvm4 [NAME]     # @NAME (default @main) of a file
//   ./embed -C [FILE.hvm4]       # the collapse of @main, as hvm4g -C
//                                # prints it, messages included
//
// Prints the normal form, the interaction count, the collapse of @pairs
// (built-in program only), and shows that errors come back as values (a
// runtime error) and that a runtime is a value (another one, opened after
// the first is closed, runs its own program). Exits with the status of
// the first call that failed (hvm4g.h's codes), as the hvm4g program does.
// examples/threads.c runs two runtimes at once; examples/many.c a
// thousand, one after another.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hvm4g.h>

static const char *DEMO =
  "@add  = λa.λb.(a + b)\n"
  "@main = @add(40, 2)\n"
  "@pairs = &L{#P{1, 2}, #P{3, 4}}\n"
  "@oops = 1(2)\n";

static int fail(hvm4g *h, int rc, const char *what) {
  fprintf(stderr, "embed: %s failed (%d): %s\n", what, rc, hvm4g_error(h));
  return rc;
}

int main(int argc, char **argv) {
  int collapse = argc > 1 && argv[1][0] == '-' && argv[1][1] == 'C' && !argv[1][2];
  if (collapse) {
    argc--;
    argv++;
  }
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.heap_words = 1 << 24;   // 128 MiB is plenty here
  hvm4g *h;
  int rc = hvm4g_open(&h, &c);
  if (rc != HVM4G_OK) {
    fprintf(stderr, "embed: cannot open a runtime (%d): %s\n", rc, hvm4g_error(h));
    hvm4g_close(h);
    return rc;
  }
  const char *name = argc > 2 ? argv[2] : NULL;
  rc = argc > 1 ? hvm4g_load_file(h, argv[1]) : hvm4g_load_string(h, "demo", DEMO);
  if (collapse) {
    // messages and lines as the hvm4g program prints them (-C; the load's
    // warning only under --warn-undefined)
    if (rc == HVM4G_OK) rc = hvm4g_collapse(h, name, -1, HVM4G_CPU, stdout);
    if (rc != HVM4G_OK) fprintf(stderr, "%s\n", hvm4g_error(h));   // before
    fflush(stdout);   // the buffered lines, as HVM4 orders them
    return rc;
  }
  if (rc != HVM4G_OK) return fail(h, rc, "load");
  if (hvm4g_warning(h)) fprintf(stderr, "embed: %s\n", hvm4g_warning(h));

  if ((rc = hvm4g_normalize(h, name, HVM4G_CPU)) != HVM4G_OK) return fail(h, rc, "normalize");
  char small[8];
  long long len = hvm4g_print(h, small, sizeof small);
  char *text = malloc((size_t)len + 1);   // the length, as snprintf gives it
  if (!text || hvm4g_print(h, text, (size_t)len + 1) != len) return fail(h, HVM4G_ERR_HEAP, "print");
  hvm4g_stats s;
  hvm4g_get_stats(h, &s);
  printf("%s\n", text);
  printf("interactions: %llu\n", s.interactions);
  free(text);

  if (argc <= 1) {
    if ((rc = hvm4g_collapse(h, "pairs", -1, HVM4G_CPU, stdout)) != HVM4G_OK) {
      return fail(h, rc, "collapse");
    }
    // A runtime error returns with its message; the process goes on.
    rc = hvm4g_normalize(h, "oops", HVM4G_CPU);
    printf("oops: %d %s\n", rc, hvm4g_error(h));
    if (rc != HVM4G_ERR_RUNTIME) return 1;
  }
  hvm4g_close(h);

  // Another runtime, with a program of its own.
  if ((rc = hvm4g_open(&h, &c)) != HVM4G_OK) return fail(h, rc, "open again");
  char again[8];
  if ((rc = hvm4g_load_string(h, "again", "@main = (λx.(x * 2))(21)")) != HVM4G_OK ||
      (rc = hvm4g_normalize(h, NULL, HVM4G_CPU)) != HVM4G_OK) {
    return fail(h, rc, "run again");
  }
  if (hvm4g_print(h, again, sizeof again) != 2 || strcmp(again, "42") != 0) {
    fprintf(stderr, "embed: the second runtime printed %s, not 42\n", again);
    return 1;
  }
  hvm4g_close(h);
  return 0;
}
