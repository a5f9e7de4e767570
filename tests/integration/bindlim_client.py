"""bindlim_test.sh's client: bind_fail_limit, bind_fail_window and max_conns_per_ip against
a running minidir, from chosen source addresses of 127.0.0.0/8 (python-ldap cannot choose
the address it connects from, so binds go over a plain socket with the BindRequest encoded
here; the monitor is read with python-ldap). Prints ok / not ok lines.

usage: bindlim_client.py PORT BASE LIMIT WINDOW MAXCONNS
"""
import socket
import statistics
import sys
import threading
import time

import ldap

from ber import integer, message, tlv

PORT, BASE = int(sys.argv[1]), sys.argv[2]
LIMIT, WINDOW, MAXCONNS = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
failed = 0


def report(good, what):
    global failed
    print(("ok - " if good else "not ok - ") + what, flush=True)
    failed += not good


def bind_request(msgid, dn, pw):
    op = integer(0x02, 3) + tlv(0x04, dn.encode()) + tlv(0x80, pw.encode())
    return message(msgid, tlv(0x60, op))


def read_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed by the server")
        out += chunk
    return out


def read_message(s):
    head = read_exact(s, 2)
    n = head[1]
    if n & 0x80:
        n = int.from_bytes(read_exact(s, n & 0x7F), "big")
    return read_exact(s, n)


def result_code(msg):
    """The resultCode of an LDAPMessage's body holding a BindResponse."""
    i = 2 + msg[1]  # past messageID (a short INTEGER)
    assert msg[i] == 0x61, "not a BindResponse"
    i += 1
    i += 1 + (msg[i] & 0x7F if msg[i] & 0x80 else 0)
    assert msg[i] == 0x0A
    return msg[i + 2]


class Conn:
    def __init__(self, src):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.bind((src, 0))
        self.s.connect(("127.0.0.1", PORT))
        self.msgid = 0

    def bind(self, dn, pw):
        """(resultCode, seconds from sending the request to reading the answer)."""
        self.msgid += 1
        t = time.monotonic()
        self.s.sendall(bind_request(self.msgid, dn, pw))
        rc = result_code(read_message(self.s))
        return rc, time.monotonic() - t

    def close(self):
        self.s.close()


def bind_once(src, dn, pw):
    c = Conn(src)
    try:
        return c.bind(dn, pw)[0]
    finally:
        c.close()


def user(name):
    return "uid=%s,ou=people,%s" % (name, BASE)


def monitor():
    lc = ldap.initialize("ldap://127.0.0.1:%d" % PORT)
    r = lc.search_s("cn=limits,cn=monitor", ldap.SCOPE_BASE, "(objectClass=*)")
    lc.unbind_s()
    return {k: int(v[0]) for k, v in r[0][1].items() if v[0].isdigit()}


ALICE, BOB, CAROL = user("alice"), user("bob"), user("carol")
report(bind_once("127.0.0.1", ALICE, "alice-secret") == 0, "alice binds from 127.0.0.1")

# The attack: 1,000 wrong guesses at alice's password from 127.0.0.1, 10 connections at once.
results = []
lock = threading.Lock()


def guesser(k):
    c = Conn("127.0.0.1")
    for j in range(100):
        rc, _ = c.bind(ALICE, "guess-%d-%d" % (k, j))
        with lock:
            results.append(rc)
    c.close()


before = monitor()
t0 = time.monotonic()
threads = [threading.Thread(target=guesser, args=(k,)) for k in range(10)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - t0
limited = monitor()["bindsLimited"] - before["bindsLimited"]
report(len(results) == 1000 and set(results) == {49},
       "1,000 guesses in %.1f s, all invalidCredentials (49): %s" % (elapsed, sorted(set(results))))
# Within one window exactly LIMIT guesses were checked (the DN's and the address's counts
# reach LIMIT together); one more window begun during the attack allows LIMIT more.
# (The window is counted in whole seconds of a coarse clock: it may last a second less.)
windows = int(elapsed // (WINDOW - 1)) + 1
report(1000 - LIMIT * windows <= limited <= 1000 - LIMIT,
       "of them %d refused unchecked (bindsLimited; %d checked, limit %d, %d window(s))"
       % (limited, 1000 - limited, LIMIT, windows))
locked_at = time.monotonic()

report(bind_once("127.0.0.1", ALICE, "alice-secret") == 49,
       "alice's right password from 127.0.0.1 now fails (49)")
report(bind_once("127.0.0.2", ALICE, "alice-secret") == 49,
       "alice's right password from 127.0.0.2 fails too: the DN's limit (49)")
report(bind_once("127.0.0.1", BOB, "bob-secret") == 49,
       "bob's right password from 127.0.0.1 fails: the address's limit (49)")
report(bind_once("127.0.0.2", BOB, "bob-secret") == 0,
       "bob from 127.0.0.2 binds: another user from another address is unaffected")
m = monitor()
report(m["bindFailDNsOverLimit"] >= 1 and m["bindFailAddressesOverLimit"] >= 1,
       "cn=limits: bindFailDNsOverLimit %d, bindFailAddressesOverLimit %d"
       % (m["bindFailDNsOverLimit"], m["bindFailAddressesOverLimit"]))
report(m.get("bindFailUntracked") == 0,
       "cn=limits: bindFailUntracked %s (no key refused by the table)" % m.get("bindFailUntracked"))

# The address's limit alone, reached with unknown DNs (each failing once).
ghosts_at = time.monotonic()
for k in range(LIMIT):
    bind_once("127.0.0.3", user("ghost%d" % k), "x")
report(bind_once("127.0.0.3", CAROL, "carol-secret") == 49,
       "after %d binds to unknown DNs from 127.0.0.3, carol's right password from there fails"
       % LIMIT)
report(bind_once("127.0.0.4", CAROL, "carol-secret") == 0, "carol from 127.0.0.4 binds")

# An unknown DN is counted as an existing one: LIMIT failures from LIMIT addresses, then
# one more bind to it from another is refused unchecked.
for k in range(LIMIT):
    bind_once("127.0.3.%d" % (k + 1), user("nobody-here"), "x")
n = monitor()["bindsLimited"]
bind_once("127.0.3.%d" % (LIMIT + 1), user("nobody-here"), "x")
report(monitor()["bindsLimited"] == n + 1,
       "an unknown DN reaches the limit as an existing one (bindsLimited %d -> %d)"
       % (n, monitor()["bindsLimited"]))


# Timing: a refused bind, a wrong password, an unknown DN and a locked account's right
# password (pwdAccountLockedTime: refused before its check), medians of 15 each, each from
# its own connection and (but the refused ones) its own DN and address, so that none
# reaches the limit. Relative: within a factor of 2 of each other.
def sample(src, dn, pw="wrong"):
    c = Conn(src)
    try:
        rc, t = c.bind(dn, pw)
    finally:
        c.close()
    return t if rc == 49 else None


# Interleaved, so that a change of the machine's load falls on all four alike; none of the
# others is refused by the limit, so bindsLimited grows by the refused ones only. A busy
# machine (the tests run several at a time) can still put a burst on one kind's samples:
# up to 5 tries of 15 each, the first within the factor passes (a server that told the
# kinds apart would fail all 5). Each wrong-password or locked user and address fails at
# most 5 times, under LIMIT.
TIMING_TRIES = 5
n = monitor()["bindsLimited"]
locked_before = monitor()["bindsRefusedAccount"]


def apart(m, base):
    return all(0.5 < x / base < 2 for x in m)


for attempt in range(1, TIMING_TRIES + 1):
    refused, wrong, unknown, locked = [], [], [], []
    for k in range(15):
        refused.append(sample("127.0.0.2", ALICE))
        wrong.append(sample("127.0.1.%d" % (k + 1), user("u%d" % k)))
        unknown.append(sample("127.0.2.%d" % (k + 1), user("ghost-t%d" % k)))
        locked.append(sample("127.0.4.%d" % (k + 1), user("locked%d" % k), "locked%d-secret" % k))
    if None in refused + wrong + unknown + locked:
        break
    mr, mw, mu, ml = (statistics.median(x) * 1000 for x in (refused, wrong, unknown, locked))
    if apart((mr, mu, ml), mw):
        break
    print("# failed-bind medians, try %d: refused %.2f ms, wrong password %.2f ms, unknown DN "
          "%.2f ms, locked %.2f ms" % (attempt, mr, mw, mu, ml), file=sys.stderr)
report(monitor()["bindsLimited"] == n + 15 * attempt,
       "the %d timed binds as alice were refused unchecked" % (15 * attempt))
report(monitor()["bindsRefusedAccount"] == locked_before + 15 * attempt,
       "cn=limits: bindsRefusedAccount counts the %d locked accounts' binds" % (15 * attempt))
if None in refused + wrong + unknown + locked:
    report(False, "a timing sample did not answer 49")
else:
    report(apart((mr, mu, ml), mw),
           "failed-bind medians (try %d): refused by the limit %.2f ms, wrong password %.2f ms, "
           "unknown DN %.2f ms, a locked account's right password %.2f ms"
           % (attempt, mr, mw, mu, ml))

# The window passes: the same binds work again.
time.sleep(max(0.0, max(locked_at, ghosts_at) + WINDOW + 1.5 - time.monotonic()))
report(bind_once("127.0.0.1", ALICE, "alice-secret") == 0,
       "after the window alice's right password works from 127.0.0.1")
report(bind_once("127.0.0.3", CAROL, "carol-secret") == 0,
       "after the window carol binds from 127.0.0.3")

# max_conns_per_ip: MAXCONNS connections from 127.0.0.5 are served, the next is closed.
conns = [Conn("127.0.0.5") for _ in range(MAXCONNS)]
report(all(c.bind("", "")[0] == 0 for c in conns),
       "%d connections from 127.0.0.5 served" % MAXCONNS)
refused_before = monitor()["connsPerIpRefused"]
extra = Conn("127.0.0.5")
try:
    extra.bind("", "")
    report(False, "connection %d from 127.0.0.5 was served" % (MAXCONNS + 1))
except (ConnectionError, OSError) as e:
    report(True, "connection %d from 127.0.0.5 closed at accept (%s)" % (MAXCONNS + 1, e))
extra.close()
other = Conn("127.0.0.6")
report(other.bind("", "")[0] == 0, "a connection from 127.0.0.6 is served meanwhile")
other.close()
report(monitor()["connsPerIpRefused"] == refused_before + 1,
       "cn=limits: connsPerIpRefused %d -> %d" % (refused_before, refused_before + 1))
conns.pop().close()
served = False
for _ in range(50):  # the server sees the close in its next loop round
    c = Conn("127.0.0.5")
    try:
        served = c.bind("", "")[0] == 0
    except (ConnectionError, OSError):
        time.sleep(0.05)
    c.close()
    if served:
        break
report(served, "one closed, a new connection from 127.0.0.5 is served")
for c in conns:
    c.close()
sys.exit(1 if failed else 0)
