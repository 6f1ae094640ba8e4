/*
** hvm4g.h: the hvm4g runtime as a C library.
**
** Open a runtime, load a program, normalize a definition (on the CPU or
** the device), print or collapse the result, read the counters, close:
**
**   hvm4g_config c;  hvm4g *h;
**   hvm4g_config_init(&c);
**   if (hvm4g_open(&h, &c) != HVM4G_OK) {
**     fprintf(stderr, "%s\n", hvm4g_error(h));  hvm4g_close(h);  return 1;
**   }
**   if (hvm4g_load_string(h, "demo", "@main = (λx.(x * 2))(21)") != HVM4G_OK ||
**       hvm4g_normalize(h, NULL, HVM4G_CPU) != HVM4G_OK) {
**     fprintf(stderr, "%s\n", hvm4g_error(h));  hvm4g_close(h);  return 1;
**   }
**   char buf[256];
**   hvm4g_print(h, buf, sizeof buf);
**   printf("%s\n", buf);   // 42
**   hvm4g_close(h);
**
** Every call returns HVM4G_OK or an error code, and leaves the error's
** message in hvm4g_error(h), whichever of the runtime's threads met it;
** the library never exits the process nor prints a message of its own
** (what it would say goes to hvm4g_error, hvm4g_warning, hvm4g_notice).
** What it writes is the program's output: %log's lines, and a %panic's
** message, on stdout. Link with `pkg-config --libs hvm4g`.
**
** Runtimes: a runtime is a value. A process may open any number of them,
** one after another or at once, each used from one thread at a time (two
** threads may each work with their own runtime at the same time).
** hvm4g_close ends the runtime's threads and frees all it holds; the
** program's open files and connections are closed, and a child process
** it started and did not wait for is left running. All loads come before
** the first normalize or collapse. After an error from a run the heap may
** hold half-reduced terms: close.
**
** The device is one per process: while one runtime's run is on the
** device, another runtime's device run waits for it (its CPU work does
** not).
*/

#ifndef HVM4G_H
#define HVM4G_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HVM4G_VERSION "0.1.0"

/* Status codes, which are also the exit statuses of the hvm4g program. */
#define HVM4G_OK            0
#define HVM4G_ERR_RUNTIME   1    /* RUNTIME_ERROR: a stuck or bad term */
#define HVM4G_ERR_USAGE     2    /* a bad flag, argument or call */
#define HVM4G_ERR_PARSE     3    /* a parse error, or an unreadable file */
#define HVM4G_ERR_HEAP      4    /* the heap is exhausted (see heap_words) */
#define HVM4G_ERR_IO        5    /* the output could not be written */
#define HVM4G_ERR_DEVICE    6    /* the device asked for is not usable */
#define HVM4G_ERR_STATE     7    /* a call out of order (a load after a run) */
/* The hvm4g program's FFI (--ffi, --ffi-dir; docs/ffi.md). */
#define HVM4G_ERR_FFI_FILE  8    /* a library or folder cannot be read */
#define HVM4G_ERR_FFI_LOAD  9    /* not a shared library the system can load */
#define HVM4G_ERR_FFI_INIT  10   /* a library without hvm_ffi_init */
#define HVM4G_ERR_FFI_ABI   11   /* a library refused the runtime in its
                                    hvm_ffi_init (runtime_error: an ABI
                                    version it does not take), or registered
                                    what hvm4g cannot hold */
#define HVM4G_ERR_FFI_PRIM  12   /* a library's primitive raised an error */
#define HVM4G_INTERRUPTED   130  /* the hvm4g program: SIGINT or SIGTERM */

/* Where a normal form is computed. */
#define HVM4G_CPU      0
#define HVM4G_DEVICE   1   /* the device of hvm4g_config.device */

/* The device of HVM4G_DEVICE runs. */
#define HVM4G_DEVICE_AUTO   0   /* a usable GPU, else the CPU */
#define HVM4G_DEVICE_SIM    1   /* the device code on CPU threads */
#define HVM4G_DEVICE_CUDA   2
#define HVM4G_DEVICE_METAL  3

typedef struct hvm4g hvm4g;

typedef struct {
  unsigned           threads;     /* CPU threads (0: 1) */
  unsigned long long heap_words;  /* heap capacity in 64-bit words (0: what
                                     fits this machine) */
  int                device;      /* HVM4G_DEVICE_* */
} hvm4g_config;

typedef struct {
  unsigned long long interactions;    /* all, CPU and device */
  unsigned long long device_interactions;
  double             seconds;         /* the last normalize or collapse */
  unsigned long long heap_words;      /* heap words in use */
  unsigned long long peak_rss_bytes;  /* the process's peak resident memory */
} hvm4g_stats;

void        hvm4g_config_init(hvm4g_config *c);
/* A new runtime in *h. On an error *h holds only why (hvm4g_error), and
** hvm4g_close frees it; *h is NULL only when there was no memory for that. */
int         hvm4g_open(hvm4g **h, const hvm4g_config *c);
void        hvm4g_close(hvm4g *h);

/* Adds the definitions of a file, or of source text (`name` names it in
** messages; its #includes are relative to the current directory).
** A later definition of a name replaces the earlier one. */
int         hvm4g_load_file(hvm4g *h, const char *path);
int         hvm4g_load_string(hvm4g *h, const char *name, const char *src);

/* The strong normal form of @name (NULL: @main) on `where`; the result is
** kept for hvm4g_print. */
int         hvm4g_normalize(hvm4g *h, const char *name, int where);
/* The collapse of @name (NULL: @main): one line per superposition branch,
** at most `limit` lines (-1: all), written to `out`. */
int         hvm4g_collapse(hvm4g *h, const char *name, long long limit,
                           int where, FILE *out);

/* The last normal form as text, NUL-terminated in buf (cut to cap - 1
** bytes); returns its full length, as snprintf does (-1 with none). */
long long   hvm4g_print(hvm4g *h, char *buf, size_t cap);
/* The same to a stream; HVM4G_OK, or HVM4G_ERR_IO. */
int         hvm4g_print_file(hvm4g *h, FILE *out);

void        hvm4g_get_stats(hvm4g *h, hvm4g_stats *s);

/* The message of the last error (empty after success), and a warning the
** last load left (a reference to a name never defined), or NULL; before
** any load, what opening warned of (a library of primitives overriding
** one: the hvm4g program's FFI), a line each. */
const char *hvm4g_error(const hvm4g *h);
const char *hvm4g_warning(const hvm4g *h);
/* What the runtime does otherwise than asked, and goes on with: the
** device asked for is not usable and the CPU runs instead, or a device
** run could not go on (its heap, a copy) and the CPU took it back. NULL
** until then; it stays once set. */
const char *hvm4g_notice(const hvm4g *h);

/* The version and the build, one item a line: "hvm4g 0.1.0", the commit,
** the backends compiled in, the CUDA architectures, Metal. */
const char *hvm4g_version(void);

#ifdef __cplusplus
}
#endif

#endif
