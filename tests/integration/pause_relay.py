#!/usr/bin/env python3
"""A TCP relay that can be paused: listens on 127.0.0.1:LISTEN, forwards each connection
to 127.0.0.1:TARGET. SIGUSR1 pauses it (no byte is read or forwarded either way, the
connections stay open: a stalled network path as the ends see it), SIGUSR2 resumes.
Prints "listening PORT" once ready. Used by http_test.sh."""
import selectors
import signal
import socket
import sys
import time

listen_port, target = int(sys.argv[1]), int(sys.argv[2])
paused = False


def on_signal(num, _frame):
    global paused
    paused = num == signal.SIGUSR1


signal.signal(signal.SIGUSR1, on_signal)
signal.signal(signal.SIGUSR2, on_signal)
sel = selectors.DefaultSelector()
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", listen_port))
ls.listen(16)
sel.register(ls, selectors.EVENT_READ, None)
print("listening", ls.getsockname()[1], flush=True)
peers = {}


def close(s):
    for x in (s, peers.pop(s, None)):
        if x is not None:
            peers.pop(x, None)
            try:
                sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()


while True:
    events = sel.select(timeout=0.05)
    for key, _ in events:
        s = key.fileobj
        if s is ls:
            c, _ = ls.accept()
            try:
                u = socket.create_connection(("127.0.0.1", target), timeout=5)
            except OSError:
                c.close()
                continue
            peers[c], peers[u] = u, c
            sel.register(c, selectors.EVENT_READ, None)
            sel.register(u, selectors.EVENT_READ, None)
            continue
        if paused or s not in peers:
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            close(s)
            continue
        try:
            peers[s].sendall(data)
        except OSError:
            close(s)
    if paused:
        time.sleep(0.05)  # nothing is read while paused: no spinning on readable sockets
