// tls.c: TLS client connections through the system's OpenSSL, loaded with
// dlopen on first use (tls.h). Only the few libssl/libcrypto entry points
// below are used, declared here by their stable C signatures, so building
// needs no OpenSSL headers and running without libssl only makes https
// unavailable.

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "run/tls.h"

// OpenSSL's constants (ssl.h, x509_vfy.h), stable across 1.1 and 3.x.
#define SSL_ERROR_WANT_READ          2
#define SSL_ERROR_WANT_WRITE         3
#define SSL_ERROR_SYSCALL            5
#define SSL_ERROR_ZERO_RETURN        6
#define SSL_VERIFY_NONE              0
#define SSL_VERIFY_PEER              1
#define SSL_CTRL_SET_TLSEXT_HOSTNAME 55
#define TLSEXT_NAMETYPE_HOST_NAME    0
#define X509_V_OK                    0

typedef struct {
  const void *(*client_method)(void);
  void       *(*ctx_new)(const void *method);
  int         (*ctx_default_paths)(void *ctx);
  void       *(*ssl_new)(void *ctx);
  int         (*set_fd)(void *ssl, int fd);
  void        (*set_verify)(void *ssl, int mode, void *callback);
  int         (*set1_host)(void *ssl, const char *host);
  long        (*ctrl)(void *ssl, int cmd, long larg, void *parg);
  int         (*connect)(void *ssl);
  int         (*read)(void *ssl, void *buf, int n);
  int         (*write)(void *ssl, const void *buf, int n);
  int         (*get_error)(const void *ssl, int ret);
  long        (*verify_result)(const void *ssl);
  void        (*ssl_free)(void *ssl);
  const char *(*verify_string)(long code);
  unsigned long (*err_get)(void);
  unsigned long (*err_peek)(void);
  void        (*err_string)(unsigned long e, char *buf, size_t n);
} SslApi;

struct TlsConn {
  void *ssl;
  char  error[256];
};

// Per process: the library is loaded once (dlopen), and its one client
// context holds no runtime's state (certificate roots and defaults), so
// every connection of every runtime shares them.
static struct {
  pthread_once_t loaded;
  SslApi         api;
  void          *ctx;       // SSL_CTX
  const char    *missing;   // why TLS cannot be used, or NULL
} LIBSSL = { .loaded = PTHREAD_ONCE_INIT };

static void load(void) {
  static const char *NAMES[] = { "libssl.so.3", "libssl.so.1.1", "libssl.so", "libssl.dylib" };
  void *lib = NULL;
  for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES && !lib; i++) {
    lib = dlopen(NAMES[i], RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) {
    LIBSSL.missing = "https needs OpenSSL's libssl, which could not be loaded";
    return;
  }
  // each entry point by name, into the table's slots in order
  static const char *SYMBOLS[] = {
    "TLS_client_method", "SSL_CTX_new", "SSL_CTX_set_default_verify_paths", "SSL_new",
    "SSL_set_fd", "SSL_set_verify", "SSL_set1_host", "SSL_ctrl", "SSL_connect", "SSL_read",
    "SSL_write", "SSL_get_error", "SSL_get_verify_result", "SSL_free",
    "X509_verify_cert_error_string", "ERR_get_error", "ERR_peek_error", "ERR_error_string_n",
  };
  void **slot = (void **)&LIBSSL.api;
  for (size_t i = 0; i < sizeof SYMBOLS / sizeof *SYMBOLS; i++) {
    slot[i] = dlsym(lib, SYMBOLS[i]);
    if (!slot[i]) {
      LIBSSL.missing = "https needs OpenSSL 1.1 or later, and the libssl found lacks an entry point";
      return;
    }
  }
  LIBSSL.ctx = LIBSSL.api.ctx_new(LIBSSL.api.client_method());
  if (!LIBSSL.ctx) {
    LIBSSL.missing = "OpenSSL could not make a TLS context";
    return;
  }
  LIBSSL.api.ctx_default_paths(LIBSSL.ctx);
}

const char *tls_missing(void) {
  pthread_once(&LIBSSL.loaded, load);
  return LIBSSL.missing;
}

// The why of a failed call: a certificate's rejection, OpenSSL's queued
// error, or the system's.
static int failed(TlsConn *c, int code) {
  long verify = LIBSSL.api.verify_result(c->ssl);
  unsigned long e = LIBSSL.api.err_get();
  if (verify != X509_V_OK) {
    snprintf(c->error, sizeof c->error, "SSL certificate problem: %s", LIBSSL.api.verify_string(verify));
  } else if (e) {
    LIBSSL.api.err_string(e, c->error, sizeof c->error);
  } else if (code == SSL_ERROR_SYSCALL && errno) {
    snprintf(c->error, sizeof c->error, "TLS: %s", strerror(errno));
  } else {
    snprintf(c->error, sizeof c->error, "TLS connection ended unexpectedly");
  }
  while (LIBSSL.api.err_get()) {}   // the queue is the thread's: leave it empty
  return TLS_FAILED;
}

// A call's result as tls.h's: its count, or what to wait for.
static int outcome(TlsConn *c, int r) {
  if (r > 0) return r;
  int code = LIBSSL.api.get_error(c->ssl, r);
  if (code == SSL_ERROR_WANT_READ) return TLS_WANT_READ;
  if (code == SSL_ERROR_WANT_WRITE) return TLS_WANT_WRITE;
  if (code == SSL_ERROR_ZERO_RETURN) return TLS_EOF;
  // a peer that closes without TLS's close_notify (common with
  // `Connection: close`) ends the stream too
  if (code == SSL_ERROR_SYSCALL && LIBSSL.api.err_peek() == 0 && errno == 0) return TLS_EOF;
  return failed(c, code);
}

TlsConn *tls_open(int fd, const char *host, int verify, char *err, size_t cap) {
  const char *why = tls_missing();
  if (why) {
    snprintf(err, cap, "%s", why);
    return NULL;
  }
  TlsConn *c = calloc(1, sizeof *c);
  if (!c || !(c->ssl = LIBSSL.api.ssl_new(LIBSSL.ctx))) {
    free(c);
    snprintf(err, cap, "OpenSSL could not make a TLS connection");
    return NULL;
  }
  LIBSSL.api.set_fd(c->ssl, fd);
  LIBSSL.api.ctrl(c->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_HOST_NAME, (void *)host);
  LIBSSL.api.set_verify(c->ssl, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
  if (verify) LIBSSL.api.set1_host(c->ssl, host);
  return c;
}

int tls_handshake(TlsConn *c) {
  errno = 0;
  int r = outcome(c, LIBSSL.api.connect(c->ssl));
  return r == TLS_EOF ? failed(c, 0) : r;
}

int tls_read(TlsConn *c, void *buf, size_t n) {
  errno = 0;
  return outcome(c, LIBSSL.api.read(c->ssl, buf, n > 0x40000000 ? 0x40000000 : (int)n));
}

// A write to a peer that has gone raises SIGPIPE, which would end the
// program: it is held back for the call, and taken if it came.
int tls_write(TlsConn *c, const void *buf, size_t n) {
  sigset_t pipe, old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  errno = 0;
  int r = outcome(c, LIBSSL.api.write(c->ssl, buf, n > 0x40000000 ? 0x40000000 : (int)n));
  struct timespec now = { 0, 0 };
  while (sigtimedwait(&pipe, NULL, &now) > 0) {}
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return r;
}

const char *tls_error(TlsConn *c) {
  return c->error;
}

void tls_close(TlsConn *c) {
  if (!c) return;
  LIBSSL.api.ssl_free(c->ssl);
  free(c);
}
