// test_api_ffi.c: a library of primitives loaded through the library
// (api_open, as the hvm4g program loads --ffi) leaves its warnings to the
// caller: a primitive it overrides is named in hvm4g_warning, in HVM4's
// words, and nothing is written to stderr (issue 63, point 8). The
// library is built here from a few lines of C, with the system's cc.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <hvm4g.h>
#include "check.h"

// Builds, in dir, a library that registers %log (a built-in's name) as
// a primitive answering 9.
static int build_lib(const char *dir, char *so, size_t cap) {
  char src[256], cmd[1024];
  snprintf(src, sizeof src, "%s/over_log.c", dir);
  snprintf(so, cap, "%s/over_log.so", dir);
  FILE *f = fopen(src, "w");
  if (!f) return 0;
  fputs("#include <hvm4g_ffi.h>\n"
        "static const HvmApi *H;\n"
        "static Term nine(Term *args) { (void)args; return H->term_new_num(9); }\n"
        "void hvm_ffi_init(const HvmApi *api) { H = api; H->register_prim(\"log\", 3, 1, nine); }\n",
        f);
  fclose(f);
  const char *cc = getenv("CC") ? getenv("CC") : "cc";
  snprintf(cmd, sizeof cmd, "%s -shared -fPIC -Iinclude -o %s %s", cc, so, src);
  return system(cmd) == 0;
}

int main(void) {
  char dir[] = "/tmp/hvm4g-test-api-ffi.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char so[300];
  int  built = build_lib(dir, so, sizeof so);
  CHECK(built);
  if (built) {
    // stderr to a file, to see that the library wrote nothing there
    char err[320];
    snprintf(err, sizeof err, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2);
    FILE *sink = fopen(err, "w");
    CHECK(sink != NULL);
    if (sink) dup2(fileno(sink), 2);

    Options o;
    api_options_default(&o);
    o.heap      = 1 << 16;
    o.ffi.at[0] = (FfiLoad){ .path = so, .dir = 0 };
    o.ffi.count = 1;
    hvm4g      *h      = NULL;
    int         rc     = api_open(&h, &o);
    const char *w      = hvm4g_warning(h);
    int         warned = w && strcmp(w, "WARNING: overriding primitive '%log'") == 0;
    char        out[64] = "";
    if (rc == HVM4G_OK && hvm4g_load_string(h, "test", "@main = %log(1)\n") == HVM4G_OK &&
        hvm4g_normalize(h, NULL, HVM4G_CPU) == HVM4G_OK) {
      hvm4g_print(h, out, sizeof out);
    }
    hvm4g_close(h);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (sink) fclose(sink);
    struct stat st;
    CHECK(rc == HVM4G_OK);
    CHECK(warned);
    CHECK(strcmp(out, "9") == 0);   // the library's %log ran
    CHECK(stat(err, &st) == 0 && st.st_size == 0);
    unlink(err);
    unlink(so);
  }
  char src[300];
  snprintf(src, sizeof src, "%s/over_log.c", dir);
  unlink(src);
  rmdir(dir);
  return check_done();
}
