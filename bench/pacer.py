"""The pacer of bench/replica_catchup.sh and bench/seed.sh: RATE modifies a second for SECS
seconds as LDIF on stdout, 100 ticks a second, of entries uid=user.1 .. user.N-1 under
ou=people,SUFFIX in turn (user.0 is left to a probe), each setting description to
"stream K" (K counts from 1). Prints how many it wrote on stderr.

    python3 bench/pacer.py RATE SECS N SUFFIX | ldapmodify ...

ldapmodify sends them one at a time on one connection, so the rate it reaches is the
provider's (the scripts print it).
"""
import sys
import time

rate, secs, n, ex = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
out = sys.stdout
t0 = time.monotonic()
sent = 0
i = 0
while True:
    el = time.monotonic() - t0
    if el >= secs:
        break
    want = int(min(el + 0.01, secs) * rate)
    while sent < want:
        i += 1
        out.write("dn: uid=user.%d,ou=people,%s\nchangetype: modify\nreplace: description\n"
                  "description: stream %d\n\n" % (1 + (i - 1) % (n - 1), ex, i))
        sent += 1
    out.flush()
    time.sleep(0.01)
print(sent, file=sys.stderr)
