// tls.h: TLS client connections over a non-blocking socket, for https
// (prim_net.c). The system's OpenSSL (libssl) is loaded when the first one
// is opened, not linked: hvm4g builds and runs without it, and https then
// fails with the reason tls_missing gives.

#ifndef HVM4G_TLS_H
#define HVM4G_TLS_H

#include <stddef.h>

typedef struct TlsConn TlsConn;

// What an operation did: a count (> 0), or one of these.
enum {
  TLS_EOF        = 0,    // the peer ended the stream
  TLS_FAILED     = -1,   // an error: its message in tls_error(c)
  TLS_WANT_READ  = -2,   // retry once the socket is readable
  TLS_WANT_WRITE = -3,   // or writable
};

// Why TLS cannot be used (libssl not found), or NULL when it can.
const char *tls_missing(void);

// A client on connected socket fd for `host` (its name is sent, and, with
// verify, checked against the certificate, which must chain to the
// system's roots); NULL with why in err.
TlsConn *tls_open(int fd, const char *host, int verify, char *err, size_t cap);

int  tls_handshake(TlsConn *c);                      // 1 when done
int  tls_read(TlsConn *c, void *buf, size_t n);
int  tls_write(TlsConn *c, const void *buf, size_t n);
const char *tls_error(TlsConn *c);                   // the last TLS_FAILED's why
void tls_close(TlsConn *c);                          // frees c; the socket stays open

#endif
