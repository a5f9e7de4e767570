#!/usr/bin/env python3
"""A raw LDAP client for tests/integration/proxy_test.sh: sends a PROXY protocol header
(v1 or v2, as HAProxy writes them, or malformed) before an anonymous bind and a search,
from a source address and port it binds itself, and says what came back.

  proxy_client.py search HOST PORT BASE [--src IP[:PORT]] [--header KIND] [--claim IP:PORT]
                  [--split] [--tls CAFILE]
      KIND: none, v1, v2, v2-local, v1-unknown. Prints "entries=N result=R" (R the
      search's result code), or "closed" when the server closed first.
  proxy_client.py raw HOST PORT HEX [--src IP] [--wait SECONDS] [--close]
      Sends HEX, then waits for the server to close (at most SECONDS, 15 unless given).
      Prints "closed after S s" with the bytes received, or "open after S s". With
      --close the client closes first, 0.2 s after sending.
"""
import argparse
import ipaddress
import socket
import ssl
import struct
import sys
import time

from ber import integer, message, search_done, tlv

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def bind_request(msgid):
    return message(msgid, tlv(0x60, integer(0x02, 3) + tlv(0x04, b"") + tlv(0x80, b"")))


def search_request(msgid, base):
    body = (tlv(0x04, base.encode()) + integer(0x0A, 2) + integer(0x0A, 0) + integer(0x02, 0)
            + integer(0x02, 0) + tlv(0x01, b"\x00") + tlv(0x87, b"objectClass")
            + tlv(0x30, tlv(0x04, b"1.1")))
    return message(msgid, tlv(0x63, body))


def header(kind, claim, sock):
    """The PROXY header of kind, claiming claim ("IP:PORT") as the client."""
    peer = sock.getpeername()
    if kind == "none":
        return b""
    if kind == "v1-unknown":
        return b"PROXY UNKNOWN\r\n"
    if kind == "v2-local":
        return V2_SIG + bytes([0x20, 0x00, 0, 0])
    ip, port = claim.rsplit(":", 1)
    ip = ip.strip("[]")
    addr = ipaddress.ip_address(ip)
    dst = ipaddress.ip_address(peer[0]) if addr.version == 4 else ipaddress.ip_address("::1")
    if kind == "v1":
        proto = "TCP4" if addr.version == 4 else "TCP6"
        return f"PROXY {proto} {addr} {dst} {port} {peer[1]}\r\n".encode()
    fam = 0x11 if addr.version == 4 else 0x21
    body = addr.packed + dst.packed + struct.pack("!HH", int(port), peer[1])
    return V2_SIG + bytes([0x21, fam]) + struct.pack("!H", len(body)) + body


def connect(host, port, src):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if src:
        ip, _, p = src.partition(":") if src.count(":") <= 1 else (src, "", "")
        s.bind((ip, int(p or 0)))
    s.settimeout(15)
    s.connect((host, port))
    return s


def do_search(a):
    s = connect(a.host, a.port, a.src)
    data = header(a.header, a.claim, s)
    if a.split:  # the header a byte at a time, then the requests
        for b in data:
            s.sendall(bytes([b]))
            time.sleep(0.01)
        data = b""
    if a.tls:
        s.sendall(data)
        ctx = ssl.create_default_context(cafile=a.tls)
        s = ctx.wrap_socket(s, server_hostname=a.host)
        data = b""
    s.sendall(data + bind_request(1) + search_request(2, a.base))
    try:
        done = search_done(s.makefile("rb"))
    except (ConnectionResetError, ssl.SSLError):
        done = None
    print("closed" if done is None else f"entries={done[0]} result={done[1]}")


def do_raw(a):
    s = connect(a.host, a.port, a.src)
    t0 = time.monotonic()
    s.sendall(bytes.fromhex(a.hex))
    if a.close:  # the client goes first
        time.sleep(0.2)
        s.close()
        print("sent and closed")
        return
    s.settimeout(a.wait)
    got = b""
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            got += b
    except socket.timeout:
        print(f"open after {time.monotonic() - t0:.1f} s")
        return
    except ConnectionResetError:
        pass
    print(f"closed after {time.monotonic() - t0:.1f} s, {len(got)} bytes")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search")
    s.add_argument("host")
    s.add_argument("port", type=int)
    s.add_argument("base")
    s.add_argument("--src")
    s.add_argument("--header", default="none")
    s.add_argument("--claim", default="192.0.2.7:40123")
    s.add_argument("--split", action="store_true")
    s.add_argument("--tls")
    r = sub.add_parser("raw")
    r.add_argument("host")
    r.add_argument("port", type=int)
    r.add_argument("hex")
    r.add_argument("--src")
    r.add_argument("--wait", type=float, default=15)
    r.add_argument("--close", action="store_true")
    a = p.parse_args()
    try:
        do_search(a) if a.cmd == "search" else do_raw(a)
    except (ConnectionResetError, BrokenPipeError):
        print("closed")
    except OSError as e:
        print(f"error: {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
