// prim_net.c: HVM4's network primitives, run on the host without blocking
// it unless a *_wait asks: tcp connections (#Tcp{id,seq}) and plain http
// requests (#Http{id,seq}) made over the same sockets. Both use the handle
// table of prim_task.c (prim_in.h), so each call takes handle seq and
// gives back seq+1, and a handle used twice is refused as stale (E3).
//
// A tcp connection is a state: connecting -> open -> remote end (after an
// #Eof) -> closed, or failed. Results are #OK{#Pend{h}} (not yet, from a
// *_poll) or #OK{#Rdy{h, event}}, the event #Conn, #Recv{bytes},
// #Sent{n}, #Eof, #Closed or #Fail{reason, message}; malformed arguments
// give #ERR{"ERROR(name): E<n> .."}.
//
// An http exchange is a state machine over one socket: connect -> send
// the request -> receive the response (until the peer closes or the body
// it announced is whole) -> done, each *_poll moving it as far as it goes
// without waiting. Its outcome is #Resp{status, [#Hdr{name,value}..],
// body bytes}, #Fail{reason, message} or #Canceled; it is kept, and every
// later poll of the handle gives it again. An https exchange adds a TLS
// handshake after the connect (tls.c, the system's OpenSSL loaded when
// first needed; without it, reason #Tls).

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include "run/prim.h"
#include "run/prim_in.h"
#include "run/journal.h"
#include "cpu/eval.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "run/tls.h"
#include "heap/rt.h"

#define RECV_MAX   (1u << 20)   // HVM4's bound on one %tcp_recv
#define SEND_MAX   (1u << 20)   // and on one %tcp_send
#define BODY_MAX   (1u << 24)   // HVM4's bound on an http body
#define BODY_DEF   (1u << 20)
#define HEAD_MAX   (1u << 16)   // response headers past this are malformed

// TCP_UNRESOLVED: the host's name did not resolve (the resolver's error in
// the slot's code); the connect's poll or wait says so, #Fail{#Dns, ..}.
enum { TCP_CONNECTING = 1, TCP_OPEN, TCP_REMOTE_EOF, TCP_CLOSED, TCP_FAILED, TCP_UNRESOLVED };

static Term ctr0(const char *name) {
  return TERM(C00, prim_ctr_id(name), 0);
}

// Time and sockets
// ================

// Milliseconds left of `limit_ms` counted from start_ns: -1 without a
// limit (0), 0 once it has passed.
static int ms_left(u64 start_ns, u32 limit_ms) {
  if (limit_ms == 0) return -1;
  u64 spent = (prim_now_ns() - start_ns) / 1000000ull;
  if (spent >= limit_ms) return 0;
  return (int)(limit_ms - spent);
}

static int poll_fd(int fd, short events, int ms) {
  struct pollfd p = { .fd = fd, .events = events };
  for (;;) {
    int r = poll(&p, 1, ms);
    if (r >= 0 || errno != EINTR) return r;
  }
}

static void close_fd(int fd) {
  if (fd >= 0) close(fd);
}

// Starts a non-blocking connection to host:port: the socket, *connected
// saying whether it is already up; or -1 with *gai (a resolver error) or
// *err (an errno) set.
static int dial(const char *host, u32 port, int nodelay, int keepalive, int *connected, int *gai,
                int *err) {
  char            service[16];
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                            .ai_protocol = IPPROTO_TCP };
  struct addrinfo *found = NULL;
  snprintf(service, sizeof service, "%u", port);
  *gai = getaddrinfo(host, service, &hints, &found);
  *err = 0;
  if (*gai != 0) return -1;
  int fd = -1, on = 1;
  for (struct addrinfo *a = found; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      *err = errno;
      continue;
    }
    if ((nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) < 0) ||
        (keepalive && setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) < 0)) {
      *err = errno;
    } else if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      *connected = 1;
      break;
    } else if (errno == EINPROGRESS || errno == EAGAIN) {
      *connected = 0;
      break;
    } else {
      *err = errno;
    }
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0 && *err == 0) *err = EIO;
  return fd;
}

// The error of a finished non-blocking connect: 0 when it is up.
static int connect_error(int fd) {
  int       e = 0;
  socklen_t n = sizeof e;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &n) < 0) return errno;
  return e;
}

// Arguments
// =========

static int num_field(Wnf *w, Term t, u32 *out) {
  Term v = eval_wnf(w, t);
  if (TAG(v) != NUM) return 0;
  *out = VAL(v);
  return 1;
}

// #T{} or #F{}
static int bool_field(Wnf *w, Term t, u32 *out) {
  Term v = eval_wnf(w, t);
  if (TAG(v) != C00) return 0;
  if (EXT(v) == CTR_T) { *out = 1; return 1; }
  if (EXT(v) == CTR_F) { *out = 0; return 1; }
  return 0;
}

// `v` is the constructor #name with `ari` fields.
static int is_ctr(Term v, const char *name, u32 ari) {
  return TAG(v) == C00 + ari && EXT(v) == prim_ctr_id(name);
}

// For a call of two arguments, a handle and a value: lifts both over
// SUP/INC/ERA, the first then the second (its value in *second), and reads
// the first as a `kind` handle: 1 with *id and *seq; else 0 with the
// result in *out. The slot is claimed after the second is checked.
static int handle_args(Wnf *w, Term pri, u32 kind, u32 *id, u32 *seq, Term *second, Term *out) {
  Term v;
  if (prim_lift(w, pri, 0, &v, out)) return 0;
  if (prim_lift(w, pri, 1, second, out)) return 0;
  return prim_handle_of(w, pri, v, kind, id, seq, out);
}

// tcp events
// ==========

static Term fail_event(Wnf *w, Term reason, Term msg) {
  Term k[2] = { reason, msg };
  return prim_ctr(w, prim_ctr_id("Fail"), 2, k);
}

// HVM4's reasons for an errno; #Sys{errno} for the others.
static Term errno_reason(Wnf *w, int e) {
  switch (e) {
    case ETIMEDOUT:       return ctr0("Timeout");
    case ECONNREFUSED:    return ctr0("Refused");
    case EHOSTUNREACH:
    case ENETUNREACH:     return ctr0("Unreachable");
    case ECONNRESET:      return ctr0("Reset");
    case EPIPE:           return ctr0("BrokenPipe");
    case ENOTCONN:        return ctr0("NotConnected");
    case EPROTO:
    case EPROTONOSUPPORT:
    case EPROTOTYPE:      return ctr0("Protocol");
    default:              return prim_ctr1(w, prim_ctr_id("Sys"), TERM(NUM, 0, (u32)e));
  }
}

static Term errno_fail(Wnf *w, const char *op, int e) {
  return fail_event(w, errno_reason(w, e), prim_stringf(w, "%s: %s (errno=%d)", op, strerror(e), e));
}

static Term timeout_fail(Wnf *w, const char *op) {
  return fail_event(w, ctr0("Timeout"), prim_stringf(w, "%s timeout", op));
}

static Term not_connected(Wnf *w) {
  return fail_event(w, ctr0("NotConnected"), prim_stringf(w, "socket is not connected"));
}

// Closes a claimed connection that failed, and says so with errno e.
static Term tcp_broke(Wnf *w, u32 id, Slot *s, const char *op, int e) {
  close_fd(s->fd);
  s->fd    = -1;
  s->state = TCP_FAILED;
  prim_slot_update(id, s);
  return errno_fail(w, op, e);
}

// tcp
// ===

// %tcp_connect(#TcpReq{host, port, #TcpOpts{connect_timeout_ms,
// read_timeout_ms, write_timeout_ms, nodelay, keepalive}}): #OK{#Tcp{id,0}},
// the connection started; a timeout of 0 waits without limit.
static Term tcp_connect(Wnf *w, Term pri) {
  static const char *LIMIT[3] = { "connect_timeout_ms", "read_timeout_ms", "write_timeout_ms" };
  Term req, out;
  if (prim_lift(w, pri, 0, &req, &out)) return out;
  if (!is_ctr(req, "TcpReq", 3)) {
    return prim_coded_err(w, pri, E_BAD_ARG, "invalid `req`; expected #TcpReq{host,port,opts}");
  }
  char *host;
  if (!prim_str_field(w, RT->heap.at[VAL(req) + 0], "tcp_connect", "host", &host, NULL, &out)) {
    return out;
  }
  Slot s = { .kind = K_TCP, .fd = -1 };
  u32  port = 0, flag[2] = { 0, 0 };
  char msg[160];
  Term opts = eval_wnf(w, RT->heap.at[VAL(req) + 2]);
  out = 0;
  if (!num_field(w, RT->heap.at[VAL(req) + 1], &port) || port == 0 || port > 65535) {
    out = prim_coded_err(w, pri, E_BAD_ARG, "invalid `port`; expected NUM in [1,65535]");
  } else if (!is_ctr(opts, "TcpOpts", 5)) {
    out = prim_coded_err(w, pri, E_BAD_ARG, "invalid `opts`; expected #TcpOpts{connect_timeout_ms,"
                         "read_timeout_ms,write_timeout_ms,nodelay,keepalive}");
  }
  for (u32 i = 0; i < 5 && !out; i++) {
    Term field = RT->heap.at[VAL(opts) + i];
    if (i < 3 && !num_field(w, field, &s.limit_ms[i])) {
      snprintf(msg, sizeof msg, "invalid `%s`; expected NUM", LIMIT[i]);
      out = prim_coded_err(w, pri, E_BAD_ARG, msg);
    } else if (i >= 3 && !bool_field(w, field, &flag[i - 3])) {
      snprintf(msg, sizeof msg, "invalid `%s`; expected #T{}|#F{}", i == 3 ? "nodelay" : "keepalive");
      out = prim_coded_err(w, pri, E_BAD_ARG, msg);
    }
  }
  u64 key = journal_hash_word(journal_hash(JOURNAL_SEED, host, strlen(host)), port);
  if (out || journal_effect(w, pri, key, &out)) {
    free(host);
    return out;
  }
  int connected = 0, gai, err;
  s.fd = dial(host, port, (int)flag[0], (int)flag[1], &connected, &gai, &err);
  free(host);
  if (gai == 0 && s.fd < 0) return prim_coded_err(w, pri, E_IO, strerror(err));
  // a name that does not resolve is a failed operation, an event as the
  // others (docs/language.md), which the connect's poll or wait gives
  s.state  = gai != 0 ? TCP_UNRESOLVED : connected ? TCP_OPEN : TCP_CONNECTING;
  s.code   = (u32)gai;
  s.due_ns = prim_now_ns();
  u32 id;
  out = prim_opened(w, pri, &s, &id);
  if (!id) close(s.fd);
  return out;
}

// %tcp_connect_poll(tcp), %tcp_connect_wait(tcp): #Conn once the
// connection is up.
static Term tcp_connected(Wnf *w, Term pri, int wait) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_TCP, &s, &id, &seq, &out)) return out;
  Term event;
  if (s.state == TCP_OPEN || s.state == TCP_REMOTE_EOF) {
    event = ctr0("Conn");
  } else if (s.state == TCP_UNRESOLVED) {
    event = fail_event(w, ctr0("Dns"), prim_stringf(w, "tcp_connect: cannot resolve the host: %s",
                                                    gai_strerror((int)s.code)));
    s.state = TCP_FAILED;
    prim_slot_update(id, &s);
  } else if (s.state != TCP_CONNECTING) {
    event = not_connected(w);
  } else {
    int left = ms_left(s.due_ns, s.limit_ms[0]);
    int got  = left == 0 ? 0 : poll_fd(s.fd, POLLOUT, wait ? left : 0);
    if (got < 0) return prim_coded_err(w, pri, E_IO, strerror(errno));
    if (got == 0 && !wait && left != 0) return prim_ok(w, prim_pending(w, K_TCP, id, seq + 1));
    if (got == 0) {
      event = timeout_fail(w, "tcp_connect");
    } else {
      int e = connect_error(s.fd);
      if (e) return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, tcp_broke(w, id, &s, "tcp_connect", e)));
      s.state = TCP_OPEN;
      prim_slot_update(id, &s);
      event = ctr0("Conn");
    }
  }
  return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, event));
}

// Waits (wait) for fd to be ready for `events` within limit_ms counted
// from start: 1 ready, 0 timed out or (not wait) not ready, -1 error.
static int ready_within(int fd, short events, int wait, u64 start, u32 limit_ms) {
  if (!wait) return 0;
  int left = ms_left(start, limit_ms);
  return left == 0 ? 0 : poll_fd(fd, events, left);
}

// The receive (into buf, n bytes) or send (of buf's n) of claimed
// connection s, id: the call's result, #Pend when it would wait and may
// not, else #Rdy with the event. Frees buf.
static Term tcp_transfer(Wnf *w, Term pri, u32 id, u32 seq, Slot *s, int wait, int sending,
                         u8 *buf, size_t n) {
  const char *op    = sending ? "tcp_send" : "tcp_recv";
  u64         start = prim_now_ns();
  Term        event = 0, out = 0;
  while (!event && !out) {
    ssize_t got = sending ? send(s->fd, buf, n, MSG_NOSIGNAL) : recv(s->fd, buf, n, 0);
    if (got >= 0 && sending) {
      event = prim_ctr1(w, prim_ctr_id("Sent"), TERM(NUM, 0, (u32)got));
    } else if (got > 0) {
      event = prim_ctr1(w, prim_ctr_id("Recv"), prim_bytes_list(w, buf, (size_t)got));
    } else if (got == 0) {
      s->state = TCP_REMOTE_EOF;
      prim_slot_update(id, s);
      event = ctr0("Eof");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int r = ready_within(s->fd, sending ? POLLOUT : POLLIN, wait, start,
                           s->limit_ms[sending ? 2 : 1]);
      if (r < 0) out = prim_coded_err(w, pri, E_IO, strerror(errno));
      else if (r == 0 && !wait) out = prim_ok(w, prim_pending(w, K_TCP, id, seq + 1));
      else if (r == 0) event = timeout_fail(w, op);
    } else if (errno != EINTR) {
      event = tcp_broke(w, id, s, op, errno);
    }
  }
  free(buf);
  return out ? out : prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, event));
}

// %tcp_recv_poll(tcp, max), %tcp_recv_wait(tcp, max): #Recv{bytes}, at
// most max of them, or #Eof once the peer has closed its side.
static Term tcp_recv(Wnf *w, Term pri, int wait) {
  Slot s;
  u32  id, seq;
  Term out, max;
  if (!handle_args(w, pri, K_TCP, &id, &seq, &max, &out)) return out;
  if (TAG(max) != NUM || VAL(max) == 0 || VAL(max) > RECV_MAX) {
    return prim_err(w, "ERROR(tcp_recv): E%u invalid `max_bytes`; expected NUM in [1,%u]",
                    E_BAD_ARG, RECV_MAX);
  }
  if (!prim_take(w, pri, K_TCP, id, seq, &s, &out)) return out;
  if (s.state == TCP_REMOTE_EOF) return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, ctr0("Eof")));
  if (s.state != TCP_OPEN) return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, not_connected(w)));
  u8 *buf = malloc(VAL(max));
  if (!buf) return prim_coded_err(w, pri, E_IO, "out of memory");
  return tcp_transfer(w, pri, id, seq, &s, wait, 0, buf, VAL(max));
}

// %tcp_send_poll(tcp, bytes), %tcp_send_wait(tcp, bytes): #Sent{n}, the
// first n bytes handed to the system (n may be less than all of them).
static Term tcp_send(Wnf *w, Term pri, int wait) {
  Slot   s;
  u32    id, seq, bad;
  Term   out, list;
  u8    *buf = NULL;
  size_t n;
  if (!handle_args(w, pri, K_TCP, &id, &seq, &list, &out)) return out;
  const char *why = NULL;
  switch (prim_bytes_arg(w, list, SEND_MAX, &buf, &n, &bad)) {
    case BYTES_DONE:  break;
    case BYTES_NUM:   why = "expected #BYT{NUM}"; break;
    case BYTES_RANGE: why = "byte must be in [0,255]"; break;
    case BYTES_LONG:  why = "payload too large"; break;
    default:          why = "expected List<#BYT{n}>"; break;
  }
  if (why) return prim_err(w, "ERROR(tcp_send): E%u invalid `bytes`; %s", E_BAD_ARG, why);
  if (!prim_take(w, pri, K_TCP, id, seq, &s, &out)) {
    free(buf);
    return out;
  }
  if (s.state != TCP_OPEN && s.state != TCP_REMOTE_EOF) {
    free(buf);
    return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, not_connected(w)));
  }
  return tcp_transfer(w, pri, id, seq, &s, wait, 1, buf, n);
}

// %tcp_close(tcp): #Closed.
static Term tcp_close(Wnf *w, Term pri) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_TCP, &s, &id, &seq, &out)) return out;
  if (s.state == TCP_CLOSED || s.state == TCP_FAILED || s.state == TCP_UNRESOLVED) {
    return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, not_connected(w)));
  }
  int bad = close(s.fd) != 0 && errno != EINTR ? errno : 0;
  s.fd    = -1;
  s.state = bad ? TCP_FAILED : TCP_CLOSED;
  prim_slot_update(id, &s);
  if (bad) return prim_coded_err(w, pri, E_IO, strerror(bad));
  return prim_ok(w, prim_ready(w, K_TCP, id, seq + 1, ctr0("Closed")));
}

// http: the exchange
// ==================

enum { H_CONNECT = 1, H_HANDSHAKE, H_SEND, H_RECV, H_DONE };

typedef struct {
  u8     phase;
  u8     canceled;
  u8     head_only;     // a HEAD request: its response has no body
  u8     verify;        // https: check the server's certificate
  int    fd;
  TlsConn *tls;         // https, once connected
  char  *tls_host;      // https: the name to ask for and check (NULL: http)
  u64    start_ns;
  u32    timeout_ms;    // the whole exchange; 0: none
  u32    connect_ms;    // its connection; 0: none
  u32    body_max;
  u32    redirects;     // left to follow (0: a 3xx is the outcome)
  char  *method;        // malloc'd, with the request's headers and body,
  char  *headers;       // kept for a redirect
  u8    *body;
  size_t body_len;
  int    has_body;
  char  *out;           // the request on the wire
  size_t out_len, out_sent;
  u8    *in;            // the response as received
  size_t in_len, in_cap;
  // the outcome, once phase is H_DONE
  u32    status;
  char  *resp_head;     // header lines, NUL-terminated, after the status line
  u8    *resp_body;
  size_t resp_len;
  const char *fail;     // a failure's reason (a constructor name), or NULL
  u32    fail_arg;      // its field, where fail_has_arg
  int    fail_has_arg;
  char  *fail_msg;
} Http;

static void http_fail(Http *h, const char *reason, int has_arg, u32 arg, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));

static void http_disconnect(Http *h) {
  tls_close(h->tls);
  h->tls = NULL;
  close_fd(h->fd);
  h->fd = -1;
}

static void http_fail(Http *h, const char *reason, int has_arg, u32 arg, const char *fmt, ...) {
  char    msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  http_disconnect(h);
  h->phase        = H_DONE;
  h->fail         = reason;
  h->fail_has_arg = has_arg;
  h->fail_arg     = arg;
  h->fail_msg     = strdup(msg);
}

// Splits "http[s]://host[:port][/path]" (host may be [v6]): 1 with the
// host in host, the port, *tls for https, and the path (with its query) at
// *path; 0 with why.
static int url_split(const char *url, char *host, size_t cap, u32 *port, int *tls,
                     const char **path, const char **why) {
  const char *p = strstr(url, "://");
  if (!p) { *why = "URL has no scheme"; return 0; }
  size_t scheme = (size_t)(p - url);
  *tls = scheme == 5 && strncasecmp(url, "https", 5) == 0;
  if (!*tls && !(scheme == 4 && strncasecmp(url, "http", 4) == 0)) {
    *why = "unsupported URL scheme";
    return 0;
  }
  p += 3;
  const char *end = p + strcspn(p, "/?#");
  const char *colon = NULL;
  if (*p == '[') {
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (!close) { *why = "malformed IPv6 host"; return 0; }
    if (close + 1 < end && close[1] == ':') colon = close + 1;
    else if (close + 1 != end) { *why = "malformed URL"; return 0; }
    if ((size_t)(close - p - 1) >= cap) { *why = "host too long"; return 0; }
    memcpy(host, p + 1, (size_t)(close - p - 1));
    host[close - p - 1] = 0;
  } else {
    colon = memchr(p, ':', (size_t)(end - p));
    const char *stop = colon ? colon : end;
    if ((size_t)(stop - p) >= cap) { *why = "host too long"; return 0; }
    memcpy(host, p, (size_t)(stop - p));
    host[stop - p] = 0;
  }
  if (host[0] == 0) { *why = "URL has no host"; return 0; }
  *port = *tls ? 443 : 80;
  if (colon) {
    char *stop;
    unsigned long n = strtoul(colon + 1, &stop, 10);
    if (stop != end || stop == colon + 1 || n == 0 || n > 65535) { *why = "malformed port"; return 0; }
    *port = (u32)n;
  }
  *path = end;
  return 1;
}

// Whether the header lines `lines` (each "Name: value\r\n") name `name`.
static int has_header(const char *lines, const char *name) {
  size_t n = strlen(name);
  for (const char *l = lines; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    if (strncasecmp(l, name, n) == 0 && l[n] == ':') return 1;
  }
  return 0;
}

// Starts the exchange on `url`: connects and writes the request into
// h->out; a URL, name or connection that fails ends it at once.
static void http_start(Http *h, const char *url) {
  char        host[1024];
  u32         port;
  int         tls;
  const char *path, *why;
  free(h->out);
  free(h->tls_host);
  h->out      = NULL;
  h->tls_host = NULL;
  h->in_len = h->out_len = h->out_sent = 0;
  h->fd = -1;
  if (!url_split(url, host, sizeof host, &port, &tls, &path, &why)) {
    http_fail(h, "Protocol", 0, 0, "%s: %s", why, url);
    return;
  }
  if (tls && (why = tls_missing()) != NULL) {
    http_fail(h, "Tls", 0, 0, "%s", why);
    return;
  }
  if (tls && !(h->tls_host = strdup(host))) eval_die("out of memory starting an http request");
  int connected = 0, gai, err;
  h->fd = dial(host, port, 1, 0, &connected, &gai, &err);
  if (gai != 0) {
    http_fail(h, "Dns", 0, 0, "Could not resolve host: %s (%s)", host, gai_strerror(gai));
    return;
  }
  if (h->fd < 0) {
    http_fail(h, "Connect", 0, 0, "Failed to connect to %s port %u: %s", host, port, strerror(err));
    return;
  }
  int         v6    = strchr(host, ':') != NULL;
  const char *query = *path == '?' ? "/" : "";
  size_t      plen  = strcspn(path, "#");
  size_t      cap   = strlen(host) + plen + strlen(h->headers) + 512;
  char       *out   = malloc(cap + h->body_len);
  if (!out) eval_die("out of memory building an http request");
  int n = snprintf(out, cap, "%s %s%.*s HTTP/1.1\r\nHost: %s%s%s", h->method, plen ? query : "/",
                   (int)plen, path, v6 ? "[" : "", host, v6 ? "]" : "");
  if (port != (tls ? 443u : 80u)) n += snprintf(out + n, cap - (size_t)n, ":%u", port);
  n += snprintf(out + n, cap - (size_t)n, "\r\n%s", h->headers);
  if (!has_header(h->headers, "User-Agent")) n += snprintf(out + n, cap - (size_t)n, "User-Agent: hvm4g\r\n");
  if (!has_header(h->headers, "Accept")) n += snprintf(out + n, cap - (size_t)n, "Accept: */*\r\n");
  if (h->has_body) {
    if (!has_header(h->headers, "Content-Type")) {
      n += snprintf(out + n, cap - (size_t)n, "Content-Type: application/x-www-form-urlencoded\r\n");
    }
    n += snprintf(out + n, cap - (size_t)n, "Content-Length: %zu\r\n", h->body_len);
  }
  n += snprintf(out + n, cap - (size_t)n, "Connection: close\r\n\r\n");
  if (h->body_len) memcpy(out + n, h->body, h->body_len);
  h->out     = out;
  h->out_len = (size_t)n + h->body_len;
  h->phase   = H_CONNECT;
  (void)connected;   // a connect that is done shows as writable at once
}

// Reads a line of the response at *at (ending "\n", a "\r" before it
// dropped): its length, *at moved past it; -1 when it is not all there.
static long line_at(const u8 *in, size_t len, size_t *at) {
  const u8 *nl = memchr(in + *at, '\n', len - *at);
  if (!nl) return -1;
  size_t n = (size_t)(nl - (in + *at));
  size_t start = *at;
  *at = (size_t)(nl - in) + 1;
  if (n > 0 && in[start + n - 1] == '\r') n--;
  return (long)n;
}

// The value of header `name` in the head in[from..to), or NULL; its
// length in *n.
static const u8 *header_value(const u8 *in, size_t from, size_t to, const char *name, size_t *n) {
  size_t k = strlen(name), at = from;
  while (at < to) {
    size_t start = at;
    long   len   = line_at(in, to, &at);
    if (len < 0) break;
    if ((size_t)len > k && strncasecmp((const char *)in + start, name, k) == 0 &&
        in[start + k] == ':') {
      const u8 *v = in + start + k + 1, *e = in + start + len;
      while (v < e && (*v == ' ' || *v == '\t')) v++;
      while (e > v && (e[-1] == ' ' || e[-1] == '\t')) e--;
      *n = (size_t)(e - v);
      return v;
    }
  }
  return NULL;
}

// Decodes a chunked body at in[at..len): 1 with it in *body (malloc'd),
// 0 when it is not all there, -1 when malformed.
static int unchunk(const u8 *in, size_t len, size_t at, u8 **body, size_t *n) {
  size_t cap = 256, got = 0;
  u8    *out = malloc(cap);
  if (!out) eval_die("out of memory reading an http body");
  for (;;) {
    size_t start = at;
    long   l     = line_at(in, len, &at);
    if (l < 0) break;
    char *stop;
    unsigned long size = strtoul((const char *)in + start, &stop, 16);
    if (stop == (const char *)in + start) { free(out); return -1; }
    if (size == 0) {
      *body = out;
      *n    = got;
      return 1;   // trailers, if any, are not read
    }
    if (size > BODY_MAX || len - at < size + 2) break;
    if (got + size > cap) {
      while (got + size > cap) cap *= 2;
      u8 *more = realloc(out, cap);
      if (!more) eval_die("out of memory reading an http body");
      out = more;
    }
    memcpy(out + got, in + at, size);
    got += size;
    at  += size;
    if (line_at(in, len, &at) != 0) { free(out); return -1; }
  }
  free(out);
  return 0;
}

// Reads the response in h->in (eof: the peer closed): 1 when it is whole
// (the outcome set), 0 when more is to come.
static int http_response(Http *h, int eof) {
  const u8 *in  = h->in;
  size_t    len = h->in_len, at = 0, head;
  u32       status;
  for (;;) {   // informational (1xx) responses come before the real one
    size_t start = at;
    long   l     = line_at(in, len, &at);
    if (l < 0 && !eof && len < HEAD_MAX) return 0;
    if (len == 0) {
      http_fail(h, "Protocol", 0, 0, "Empty reply from server");
      return 1;
    }
    if (l < 12 || strncmp((const char *)in + start, "HTTP/", 5) != 0) {
      http_fail(h, "Parse", 0, 0, "malformed HTTP status line");
      return 1;
    }
    const char *code = memchr(in + start, ' ', (size_t)l);
    status = code ? (u32)strtoul(code + 1, NULL, 10) : 0;
    head   = at;
    while ((l = line_at(in, len, &at)) > 0) {}
    if (l < 0) {
      if (!eof && len < HEAD_MAX) return 0;
      http_fail(h, "Parse", 0, 0, "malformed HTTP response headers");
      return 1;
    }
    if (status >= 200 || status < 100) break;
  }
  size_t     vlen;
  const u8  *te  = header_value(in, head, at, "Transfer-Encoding", &vlen);
  const u8  *cl  = header_value(in, head, at, "Content-Length", &vlen);
  u8        *body = NULL;
  size_t     n    = 0;
  int        none = h->head_only || status == 204 || status == 304;
  if (!none && te && vlen >= 7 && strncasecmp((const char *)te + vlen - 7, "chunked", 7) == 0) {
    int r = unchunk(in, len, at, &body, &n);
    if (r == 0 && !eof) return 0;
    if (r <= 0) {
      http_fail(h, "Parse", 0, 0, "malformed or cut short chunked body");
      return 1;
    }
  } else {
    size_t want = len - at;
    if (!none && cl) {
      want = (size_t)strtoull((const char *)cl, NULL, 10);
      if (len - at < want) {
        if (!eof) return 0;
        http_fail(h, "Parse", 0, 0, "response body cut short (%zu of %zu bytes)", len - at, want);
        return 1;
      }
    } else if (!none && !eof) {
      return 0;   // the body runs to the end of the connection
    }
    if (none) want = 0;
    body = malloc(want + 1);
    if (!body) eval_die("out of memory reading an http body");
    memcpy(body, in + at, want);
    n = want;
  }
  if (n > h->body_max) {
    free(body);
    http_fail(h, "BodyTooLarge", 1, h->body_max, "response body too large (limit=%u bytes)",
              h->body_max);
    return 1;
  }
  http_disconnect(h);
  const u8 *loc = header_value(in, head, at, "Location", &vlen);
  if (status >= 300 && status < 400 && loc && h->redirects > 0) {
    char *next = strndup((const char *)loc, vlen);
    free(body);
    if (!next) eval_die("out of memory following an http redirect");
    h->redirects--;
    if (next[0] == '/') {   // a path on the same host: keep scheme, host and port
      char  *prev = h->out, *host = strstr(prev, "\r\nHost: ");
      size_t hl   = host ? strcspn(host + 8, "\r") : 0;
      char  *url  = malloc(hl + strlen(next) + 16);
      if (!url) eval_die("out of memory following an http redirect");
      sprintf(url, "%s://%.*s%s", h->tls_host ? "https" : "http", (int)hl, host ? host + 8 : "",
              next);
      free(next);
      next = url;
    }
    http_start(h, next);
    free(next);
    return h->phase == H_DONE;
  }
  h->status    = status;
  h->resp_head = strndup((const char *)in + head, at - head);
  h->resp_body = body;
  h->resp_len  = n;
  h->phase     = H_DONE;
  free(h->in);
  h->in     = NULL;
  h->in_len = h->in_cap = 0;
  return 1;
}

// A byte count from a send or receive, plain or TLS: > 0 moved, 0 the
// peer's end, -1 failed (the exchange ended), or POLLIN/POLLOUT negated: wait.
static long http_io(Http *h, int sending) {
  void  *at  = sending ? (void *)(h->out + h->out_sent) : (void *)(h->in + h->in_len);
  size_t len = sending ? h->out_len - h->out_sent : h->in_cap - h->in_len;
  if (h->tls) {
    int r = sending ? tls_write(h->tls, at, len) : tls_read(h->tls, at, len);
    if (r == TLS_WANT_READ) return -POLLIN;
    if (r == TLS_WANT_WRITE) return -POLLOUT;
    if (r == TLS_FAILED) {
      http_fail(h, "Tls", 0, 0, "%s", tls_error(h->tls));
      return -1;
    }
    return r;
  }
  ssize_t r = sending ? send(h->fd, at, len, MSG_NOSIGNAL) : recv(h->fd, at, len, 0);
  if (r >= 0) return (long)r;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return sending ? -POLLOUT : -POLLIN;
  http_fail(h, "Io", 1, (u32)errno, "%s: %s", sending ? "sending the request" : "receiving the response",
            strerror(errno));
  return -1;
}

// One move of the exchange without waiting: 0 when it moved (or ended),
// else the poll events it waits for.
static short http_move(Http *h) {
  switch (h->phase) {
    case H_CONNECT: {
      if (poll_fd(h->fd, POLLOUT, 0) == 0) return POLLOUT;
      int e = connect_error(h->fd);
      if (e) {
        http_fail(h, "Connect", 0, 0, "Failed to connect: %s", strerror(e));
        return 0;
      }
      if (!h->tls_host) {
        h->phase = H_SEND;
        return 0;
      }
      char why[256];
      h->tls = tls_open(h->fd, h->tls_host, h->verify, why, sizeof why);
      if (!h->tls) http_fail(h, "Tls", 0, 0, "%s", why);
      else h->phase = H_HANDSHAKE;
      return 0;
    }
    case H_HANDSHAKE: {
      int r = tls_handshake(h->tls);
      if (r == TLS_WANT_READ) return POLLIN;
      if (r == TLS_WANT_WRITE) return POLLOUT;
      if (r == TLS_FAILED) http_fail(h, "Tls", 0, 0, "%s", tls_error(h->tls));
      else h->phase = H_SEND;
      return 0;
    }
    case H_SEND: {
      long n = http_io(h, 1);
      if (n < -1) return (short)-n;
      if (n == 0) http_fail(h, "Io", 0, 0, "the server closed the connection during the request");
      if (n > 0) h->out_sent += (size_t)n;
      if (n > 0 && h->out_sent == h->out_len) h->phase = H_RECV;
      return 0;
    }
    default: {
      if (h->in_cap - h->in_len < 4096) {
        h->in_cap = h->in_cap ? h->in_cap * 2 : 8192;
        u8 *more  = realloc(h->in, h->in_cap);
        if (!more) eval_die("out of memory reading an http response");
        h->in = more;
      }
      long n = http_io(h, 0);
      if (n < -1) return (short)-n;
      if (n < 0) return 0;
      h->in_len += (size_t)n;
      // a chunked body's framing costs at most twice its size, plus the head
      if (h->in_len > 2 * (size_t)h->body_max + HEAD_MAX + 64) {
        http_fail(h, "BodyTooLarge", 1, h->body_max, "response body too large (limit=%u bytes)",
                  h->body_max);
        return 0;
      }
      http_response(h, n == 0);
      return 0;
    }
  }
}

// Moves the exchange on: as far as it goes without waiting, or (wait)
// until it is done, within its timeouts.
static void http_step(Http *h, int wait) {
  while (h->phase != H_DONE) {
    int left  = ms_left(h->start_ns, h->timeout_ms);
    u32 limit = h->timeout_ms;
    if (h->phase == H_CONNECT || h->phase == H_HANDSHAKE) {
      int c = ms_left(h->start_ns, h->connect_ms);
      if (c >= 0 && (left < 0 || c < left)) left = c, limit = h->connect_ms;
    }
    if (left == 0) {
      http_fail(h, "Timeout", 0, 0, "%s timed out after %u milliseconds",
                h->phase == H_CONNECT ? "connection" : "operation", limit);
      return;
    }
    short events = http_move(h);
    if (!events) continue;
    int got = poll_fd(h->fd, events, wait ? left : 0);
    if (got < 0) {
      http_fail(h, "Io", 1, (u32)errno, "poll: %s", strerror(errno));
      return;
    }
    if (got == 0 && !wait) return;
  }
}

// The outcome of a finished exchange, built anew for every poll that asks.
static Term http_outcome(Wnf *w, Http *h) {
  if (h->canceled) return ctr0("Canceled");
  if (h->fail) {
    Term reason = h->fail_has_arg ? prim_ctr1(w, prim_ctr_id(h->fail), TERM(NUM, 0, h->fail_arg))
                                  : ctr0(h->fail);
    return fail_event(w, reason, prim_string(w, h->fail_msg, strlen(h->fail_msg)));
  }
  // the header list, built from its end
  const char *lines[256];
  u32         count = 0;
  for (const char *l = h->resp_head; *l && count < 256; l += strcspn(l, "\n"), l += *l == '\n') {
    if (strcspn(l, ":\n") < strcspn(l, "\n")) lines[count++] = l;
  }
  Term list = TERM(C00, CTR_NIL, 0);
  while (count > 0) {
    const char *l     = lines[--count];
    size_t      name  = strcspn(l, ":");
    const char *v     = l + name + 1;
    size_t      vlen  = strcspn(v, "\r\n");
    while (vlen > 0 && (*v == ' ' || *v == '\t')) v++, vlen--;
    while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t')) vlen--;
    Term nv[2]  = { prim_string(w, l, name), prim_string(w, v, vlen) };
    Term ht[2]  = { prim_ctr(w, prim_ctr_id("Hdr"), 2, nv), list };
    list = prim_ctr(w, CTR_CON, 2, ht);
  }
  Term k[3] = { TERM(NUM, 0, h->status), list, prim_bytes_list(w, h->resp_body, h->resp_len) };
  return prim_ctr(w, prim_ctr_id("Resp"), 3, k);
}

// http: the primitives
// ====================

static const char *METHODS[] = { "Get", "Post", "Put", "Patch", "Delete", "Head", "Options" };

// The header list of a request as "Name: value\r\n" lines (malloc'd): 1;
// else 0 with the #ERR in *out.
static int request_headers(Wnf *w, Term pri, Term list, char **lines, Term *out) {
  size_t cap = 256, len = 0;
  char  *buf = malloc(cap);
  if (!buf) eval_die("out of memory reading http headers");
  buf[0] = 0;
  for (;;) {
    list = eval_wnf(w, list);
    if (TAG(list) == C00 && EXT(list) == CTR_NIL) break;
    Term hdr = TAG(list) == C00 + 2 && EXT(list) == CTR_CON ? eval_wnf(w, RT->heap.at[VAL(list)]) : 0;
    if (!hdr || !is_ctr(hdr, "Hdr", 2)) {
      free(buf);
      *out = prim_coded_err(w, pri, E_BAD_ARG, "invalid `headers`; expected List<#Hdr{name,value}>");
      return 0;
    }
    char *name, *value;
    if (!prim_str_field(w, RT->heap.at[VAL(hdr) + 0], "http_request", "header_name", &name, NULL,
                        out)) {
      free(buf);
      return 0;
    }
    if (!prim_str_field(w, RT->heap.at[VAL(hdr) + 1], "http_request", "header_value", &value, NULL,
                        out)) {
      free(name);
      free(buf);
      return 0;
    }
    size_t need = strlen(name) + strlen(value) + 5;
    if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n")) {
      free(name);
      free(value);
      free(buf);
      *out = prim_coded_err(w, pri, E_BAD_ARG, "invalid `headers`; a name or value holds a line break");
      return 0;
    }
    while (len + need >= cap) {
      char *more = realloc(buf, cap *= 2);
      if (!more) eval_die("out of memory reading http headers");
      buf = more;
    }
    len += (size_t)sprintf(buf + len, "%s: %s\r\n", name, value);
    free(name);
    free(value);
    list = RT->heap.at[VAL(list) + 1];
  }
  *lines = buf;
  return 1;
}

// A request's body (#NoBody, #BodyText{s} or #BodyBytes{bytes}) into h:
// 1; else 0 with the #ERR in *out.
static int request_body(Wnf *w, Term pri, Term body, Http *h, Term *out) {
  const char *SHAPE = "invalid `body`; expected #NoBody|#BodyText|#BodyBytes";
  Term        v     = eval_wnf(w, body);
  if (is_ctr(v, "NoBody", 0)) return 1;
  h->has_body = 1;
  if (is_ctr(v, "BodyText", 1)) {
    char *text;
    size_t n;
    if (!prim_str_field(w, RT->heap.at[VAL(v)], "http_request", "body_text", &text, &n, out)) {
      return 0;
    }
    h->body     = (u8 *)text;
    h->body_len = n;
    return 1;
  }
  if (!is_ctr(v, "BodyBytes", 1)) {
    *out = prim_coded_err(w, pri, E_BAD_ARG, SHAPE);
    return 0;
  }
  u32         bad;
  const char *why = NULL;
  switch (prim_bytes_arg(w, RT->heap.at[VAL(v)], BODY_MAX, &h->body, &h->body_len, &bad)) {
    case BYTES_DONE:  return 1;
    case BYTES_NUM:   why = "invalid `body`; expected #BYT{NUM}"; break;
    case BYTES_RANGE: why = "invalid `body`; byte must be in [0,255]"; break;
    case BYTES_LONG:  why = "invalid `body`; payload too large"; break;
    default:          why = "invalid `body`; expected List<#BYT{n}>"; break;
  }
  *out = prim_coded_err(w, pri, E_BAD_ARG, why);
  return 0;
}

// A request's options #Opts{timeout_ms, connect_timeout_ms,
// follow_redirects, max_redirects, verify_tls, max_body_bytes} into h.
static int request_opts(Wnf *w, Term pri, Term opts, Http *h, Term *out) {
  static const char *NAME[6] = { "timeout_ms", "connect_timeout_ms", "follow_redirects",
                                 "max_redirects", "verify_tls", "max_body_bytes" };
  Term v = eval_wnf(w, opts);
  if (!is_ctr(v, "Opts", 6)) {
    *out = prim_coded_err(w, pri, E_BAD_ARG, "invalid `opts`; expected #Opts{timeout_ms,"
                          "connect_timeout_ms,follow_redirects,max_redirects,verify_tls,"
                          "max_body_bytes}");
    return 0;
  }
  u32 f[6];
  for (u32 i = 0; i < 6; i++) {
    int flag = i == 2 || i == 4;
    if (flag ? bool_field(w, RT->heap.at[VAL(v) + i], &f[i]) : num_field(w, RT->heap.at[VAL(v) + i], &f[i])) {
      continue;
    }
    char msg[96];
    snprintf(msg, sizeof msg, "invalid `opts.%s`; expected %s", NAME[i], flag ? "#T{}|#F{}" : "NUM");
    *out = prim_coded_err(w, pri, E_BAD_ARG, msg);
    return 0;
  }
  if (f[5] == 0 || f[5] > BODY_MAX) {
    char msg[96];
    snprintf(msg, sizeof msg, "invalid `opts.max_body_bytes`; must be in [1,%u]", BODY_MAX);
    *out = prim_coded_err(w, pri, E_BAD_ARG, msg);
    return 0;
  }
  h->timeout_ms = f[0];
  h->connect_ms = f[1];
  h->redirects  = f[2] ? f[3] : 0;
  h->verify     = (u8)f[4];
  h->body_max   = f[5];
  return 1;
}

static void http_free(Http *h) {
  http_disconnect(h);
  free(h->tls_host);
  free(h->method);
  free(h->headers);
  free(h->body);
  free(h->out);
  free(h->in);
  free(h->resp_head);
  free(h->resp_body);
  free(h->fail_msg);
  free(h);
}

// %http_request(#Req{method, url, headers, body, opts}): #OK{#Http{id,0}},
// the exchange started.
static Term http_request(Wnf *w, Term pri) {
  Term req, out;
  if (prim_lift(w, pri, 0, &req, &out)) return out;
  if (!is_ctr(req, "Req", 5)) {
    return prim_coded_err(w, pri, E_BAD_ARG, "invalid `req`; expected #Req{method,url,headers,body,opts}");
  }
  Term method = eval_wnf(w, RT->heap.at[VAL(req) + 0]);
  u32  m      = 0;
  while (m < 7 && !is_ctr(method, METHODS[m], 0)) m++;
  if (m == 7) {
    return prim_coded_err(w, pri, E_BAD_ARG, "invalid `req.method`; expected "
                          "#Get|#Post|#Put|#Patch|#Delete|#Head|#Options");
  }
  Http *h = calloc(1, sizeof *h);
  char *url = NULL;
  if (!h) eval_die("out of memory starting an http request");
  h->fd       = -1;
  h->body_max = BODY_DEF;
  int ok = prim_str_field(w, RT->heap.at[VAL(req) + 1], "http_request", "url", &url, NULL,
                          &out) &&
           request_headers(w, pri, RT->heap.at[VAL(req) + 2], &h->headers, &out) &&
           request_body(w, pri, RT->heap.at[VAL(req) + 3], h, &out) &&
           request_opts(w, pri, RT->heap.at[VAL(req) + 4], h, &out);
  if (ok && journal_effect(w, pri, journal_hash_word(journal_hash(JOURNAL_SEED, url, strlen(url)), m),
                           &out)) {
    ok = 0;   // replayed: the exchange is not started again
  }
  if (!ok) {
    free(url);
    http_free(h);
    return out;
  }
  h->method = strdup(METHODS[m]);
  if (!h->method) eval_die("out of memory starting an http request");
  for (char *c = h->method; *c; c++) *c = (char)(*c >= 'a' ? *c - 32 : *c);
  h->head_only = m == 5;
  h->start_ns  = prim_now_ns();
  http_start(h, url);
  free(url);
  Slot s = { .kind = K_HTTP, .fd = -1, .data = h };
  u32  id;
  out = prim_opened(w, pri, &s, &id);
  if (!id) http_free(h);
  return out;
}

// %http_poll(http) (how 0), %http_wait(http) (1), %http_cancel(http) (2):
// #Rdy{http', outcome} once the exchange is done (a cancel ends it with
// #Canceled), #Pend{http'} before.
static Term http_next(Wnf *w, Term pri, int how) {
  Slot s;
  u32  id, seq;
  Term out;
  if (!prim_claim(w, pri, K_HTTP, &s, &id, &seq, &out)) return out;
  Http *h = s.data;
  if (how == 2 && h->phase != H_DONE) {
    http_disconnect(h);
    h->canceled = 1;
    h->phase    = H_DONE;
  }
  http_step(h, how == 1);
  if (h->phase != H_DONE) return prim_ok(w, prim_pending(w, K_HTTP, id, seq + 1));
  return prim_ok(w, prim_ready(w, K_HTTP, id, seq + 1, http_outcome(w, h)));
}

void prim_net_release(Slot *s) {
  if (s->kind == K_TCP) close_fd(s->fd);
  if (s->kind == K_HTTP && s->data) http_free(s->data);
  s->fd   = -1;
  s->data = NULL;
}

// Dispatch
// ========

Term prim_net(Wnf *w, Term pri) {
  switch (EXT(pri)) {
    case PRIM_TCP_CONNECT:      return tcp_connect(w, pri);
    case PRIM_TCP_CONNECT_POLL: return tcp_connected(w, pri, 0);
    case PRIM_TCP_CONNECT_WAIT: return tcp_connected(w, pri, 1);
    case PRIM_TCP_RECV_POLL:    return tcp_recv(w, pri, 0);
    case PRIM_TCP_RECV_WAIT:    return tcp_recv(w, pri, 1);
    case PRIM_TCP_SEND_POLL:    return tcp_send(w, pri, 0);
    case PRIM_TCP_SEND_WAIT:    return tcp_send(w, pri, 1);
    case PRIM_TCP_CLOSE:        return tcp_close(w, pri);
    case PRIM_HTTP_REQUEST:     return http_request(w, pri);
    case PRIM_HTTP_POLL:        return http_next(w, pri, 0);
    case PRIM_HTTP_WAIT:        return http_next(w, pri, 1);
    case PRIM_HTTP_CANCEL:      return http_next(w, pri, 2);
    default:                    return 0;
  }
}
