#!/usr/bin/env python3
# tests/upstream/_peer.py: the localhost peer of the network tests
# (tests/upstream/net_*.hvm4). Listens on 127.0.0.1 at two free ports,
# prints them as its first two lines, and serves until it is killed. On
# the first (plain) port:
#
#   - a connection that starts with an HTTP request line gets an HTTP
#     response, chosen by the path (serve_http below);
#   - any other connection is an echo: every byte sent comes back, and the
#     peer closes once the client has closed its side.
#
# The second port speaks TLS, with the self-signed certificate for
# localhost and 127.0.0.1 in _peer_cert.pem, and answers HTTP only.
# Nothing listens beyond 127.0.0.1.

import re
import os
import socket
import ssl
import sys
import threading
import time

REQUEST_LINE = re.compile(rb"^[A-Z]+ \S+ HTTP/1\.[01]\r?\n")


def read_request(conn, data):
    """The request's method, path, headers (lower-case names) and body."""
    while b"\r\n\r\n" not in data:
        more = conn.recv(4096)
        if not more:
            break
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    want = int(headers.get("content-length", "0"))
    while len(body) < want:
        more = conn.recv(4096)
        if not more:
            break
        body += more
    return method, path, headers, body


def respond(conn, status, headers, body):
    reason = {200: "OK", 302: "Found", 404: "Not Found"}.get(status, "Status")
    lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % h for h in headers]
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


def serve_http(conn, data):
    method, path, headers, body = read_request(conn, data)
    if path == "/hello":
        respond(conn, 200, [("Content-Length", "5")], b"hello")
    elif path == "/echo":
        respond(conn, 200, [("Content-Length", str(len(body))), ("X-Method", method)], body)
    elif path == "/header":
        value = headers.get("x-test", "").encode()
        respond(conn, 200, [("Content-Length", str(len(value)))], value)
    elif path == "/chunked":
        respond(conn, 200, [("Transfer-Encoding", "chunked")], b"3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n")
    elif path == "/until-close":
        respond(conn, 200, [], b"bye")
    elif path == "/redirect":
        respond(conn, 302, [("Location", "/hello"), ("Content-Length", "0")], b"")
    elif path == "/slow":
        time.sleep(5)
        respond(conn, 200, [("Content-Length", "4")], b"late")
    else:
        respond(conn, 404, [("Content-Length", "2")], b"no")


def serve(conn):
    with conn:
        try:
            data = conn.recv(4096)
            if REQUEST_LINE.match(data):
                serve_http(conn, data)
                return
            while data:
                conn.sendall(data)
                data = conn.recv(4096)
        except OSError:
            pass


def listen():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


def serve_tls(conn, context):
    with conn:
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                serve_http(tls, tls.recv(4096))
        except (OSError, ssl.SSLError):
            pass


def accept_tls(listener):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_peer_cert.pem"))
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve_tls, args=(conn, context), daemon=True).start()


def main():
    plain, tls = listen(), listen()
    print(plain.getsockname()[1], flush=True)
    print(tls.getsockname()[1], flush=True)
    sys.stdout.close()
    threading.Thread(target=accept_tls, args=(tls,), daemon=True).start()
    while True:
        conn, _ = plain.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
