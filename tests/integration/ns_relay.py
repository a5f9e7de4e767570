#!/usr/bin/env python3
"""TCP relays into another network namespace: ns_relay.py PID LISTEN:TARGET...

Listens on 127.0.0.1:LISTEN in this process's network namespace and forwards each
connection to 127.0.0.1:TARGET in the network namespace of process PID
(/proc/PID/ns/net). The listening sockets are made first, then the process enters PID's
namespace (setns(2), needs CAP_SYS_ADMIN), so every socket it connects afterwards is
there. Used by samba_ad.sh: Samba's AD DC listens on 389/636 only (no smb.conf option
moves them), so it runs alone in a namespace of its own and the tests reach it on
private ports of the host's 127.0.0.1. Bytes are copied unchanged (ldaps stays TLS end
to end). Prints "listening" once ready."""
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay(client, target):
    try:
        server = socket.create_connection(("127.0.0.1", target), timeout=10)
        server.settimeout(None)
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pump, args=(server, client), daemon=True)
    back.start()
    pump(client, server)
    back.join()
    client.close()
    server.close()


def serve(listener, target):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=relay, args=(client, target), daemon=True).start()


def main():
    pid = int(sys.argv[1])
    pairs = []
    for arg in sys.argv[2:]:
        listen, target = (int(x) for x in arg.split(":"))
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", listen))
        ls.listen(64)
        pairs.append((ls, target))
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        sys.exit(f"setns /proc/{pid}/ns/net: {os.strerror(err)}")
    os.close(fd)
    threads = [threading.Thread(target=serve, args=p, daemon=True) for p in pairs]
    for t in threads:
        t.start()
    print("listening", flush=True)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
