#!/usr/bin/env python3
"""bench/read_search.py [--tls] HOST PORT BASE: one one-level (objectClass=*) search
over a plain socket (--tls: over TLS from the first byte, the certificate not
checked: the benchmark's own throwaway one), its response read as fast as it arrives (1 MiB recv, framing only, no
decoding of the entries); prints the number of entries. bench/packets.sh uses it as
the reader that keeps the receive window open, beside ldapsearch, which formats
every entry as LDIF and falls behind."""
import socket
import ssl
import sys


def tlv(tag, body):
    n = len(body)
    if n < 128:
        length = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + length + body


def search_request(base):
    # SearchRequest: base, scope one, derefAliases never, no limits, typesOnly
    # false, (objectClass=*) as a present filter, all attributes.
    body = (tlv(0x04, base.encode()) + tlv(0x0A, b"\x01") + tlv(0x0A, b"\x00") +
            tlv(0x02, b"\x00") + tlv(0x02, b"\x00") + tlv(0x01, b"\x00") +
            tlv(0x87, b"objectClass") + tlv(0x30, b""))
    return tlv(0x30, tlv(0x02, b"\x01") + tlv(0x63, body))


def main():
    args = sys.argv[1:]
    tls = args[:1] == ["--tls"]
    host, port, base = args[tls:][0], int(args[tls:][1]), args[tls:][2]
    s = socket.create_connection((host, port), timeout=60)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
    s.sendall(search_request(base))
    buf, pos, entries = bytearray(), 0, 0
    while True:
        data = s.recv(1 << 20)
        if not data:
            sys.exit(f"read_search: the server closed after {entries} entries")
        buf += data
        while len(buf) - pos >= 2:
            length, head = buf[pos + 1], 2
            if length & 0x80:
                k = length & 0x7F
                if len(buf) - pos < 2 + k:
                    break
                length, head = int.from_bytes(buf[pos + 2:pos + 2 + k], "big"), 2 + k
            if len(buf) - pos < head + length:
                break
            msg = buf[pos + head:pos + head + length]
            op = msg[2 + msg[1]]  # the tag after the messageID
            pos += head + length
            if op == 0x64:
                entries += 1
            elif op == 0x65:
                print(entries)
                return


main()
