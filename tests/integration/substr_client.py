#!/usr/bin/env python3
"""limits_test.sh's client for substrings pieces RFC 4515 cannot write (libldap's parser
refuses them): sends one anonymous SearchRequest whose filter is a substrings item of
PIECES "any" pieces "zz", the second one empty when EMPTY is 1, and prints the result
code (or "closed" when the server closed first).

usage: substr_client.py PORT BASE PIECES EMPTY
"""
import socket
import sys

from ber import integer, message, search_done, tlv

port, base, pieces, empty = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
anys = b"".join(tlv(0x81, b"" if empty and i == 1 else b"zz") for i in range(pieces))
flt = tlv(0xA4, tlv(0x04, b"cn") + tlv(0x30, anys))
op = (tlv(0x04, base.encode()) + integer(0x0A, 2) + integer(0x0A, 0) + integer(0x02, 0)
      + integer(0x02, 0) + tlv(0x01, b"\x00") + flt + tlv(0x30, tlv(0x04, b"1.1")))
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(message(7, tlv(0x63, op)))
# SearchResultDone, or a notice of disconnection
done = search_done(s.makefile("rb"), (0x65, 0x78))
print("closed" if done is None else done[1])
