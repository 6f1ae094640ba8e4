#!/usr/bin/env python3
# tests/upstream/_peer.py: the localhost peer of the network tests
# (tests/upstream/net_*.hvm4). Listens on 127.0.0.1 at a free port, prints
# the port as its first line, and serves until it is killed:
#
#   - a connection that starts with an HTTP request line gets an HTTP
#     response, chosen by the path (ROUTES below);
#   - any other connection is an echo: every byte sent comes back, and the
#     peer closes once the client has closed its side.
#
# Nothing listens beyond 127.0.0.1.

import re
import socket
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


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    sys.stdout.close()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
