"""seed_test.sh's other peers: a /snapshot answered as a minidir that knows only SHA-256
would (before server/copy_digest.h, whatever the request asks), or with a checksum that
does not match the bytes, to see minidir-seed take the first and refuse the second.
Serves FILE's bytes chunked on 127.0.0.1:PORT, once per request, ending with the trailers
X-Snapshot-Bytes and the checksum MODE says; prints "listening" when ready, and each
request's X-Snapshot-Digest header ("asked: VALUE") to stdout.

  snapshot_peer.py PORT FILE MODE
  MODE: sha-256 (the right SHA-256), sha-256-wrong (one digit changed),
        xxh3-128-wrong (an X-Snapshot-Xxh3-128 trailer of zeros, as asked)
"""
import hashlib
import http.server
import sys

port, path, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = open(path, "rb").read()


class Peer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        print("asked:", self.headers.get("X-Snapshot-Digest", "nothing"), flush=True)
        if mode.startswith("xxh3"):
            name, value = "X-Snapshot-Xxh3-128", "0" * 32
        else:
            name, value = "X-Snapshot-Sha256", hashlib.sha256(data).hexdigest()
            if mode == "sha-256-wrong":
                value = ("1" if value[0] == "0" else "0") + value[1:]
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Trailer", "X-Snapshot-Bytes, " + name)
        self.send_header("Connection", "close")
        self.end_headers()
        step = 1 << 20
        for i in range(0, len(data), step):
            part = data[i : i + step]
            self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
        end = "0\r\nX-Snapshot-Bytes: %d\r\n%s: %s\r\n\r\n" % (len(data), name, value)
        self.wfile.write(end.encode())
        self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", port), Peer)
print("listening", flush=True)
server.serve_forever()
