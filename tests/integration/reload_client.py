"""The client side of reload_test.sh (python-ldap): searches held open across a
database reload, on connections that stay open. Prints "ok - ..." / "not ok - ..."
lines; the script counts them.

  reload_client.py gen     DIR           writes DIR/v1.ldif DIR/v2.ldif DIR/v3.ldif
  reload_client.py across  URL PID DB CMD  a paged and a paused search across one reload
  reload_client.py bound   URL PID DB CMD  the same across two reloads: both end (53)

CMD is a shell command that re-imports (the next LDIF version) and waits for the
server's "database reloaded" line. PID is the server's, for /proc/PID/maps.
"""
import os
import subprocess
import sys
import time

import ldap
from ldap.controls import SimplePagedResultsControl

BASE = "dc=reload,dc=test"
PEOPLE = "ou=people," + BASE
BULK = "ou=bulk," + BASE
USERS = 60  # v1: u0..u59; v2: u59 removed, u60 added, u0's cn changed
BULK_N = 400  # entries of BULK_BYTES each: a result far larger than the socket buffers
BULK_BYTES = 40000
PAGE = 7


def write_ldif(path, version):
    users = list(range(USERS))
    if version >= 2:
        users = [u for u in users if u != USERS - 1] + [USERS]
    with open(path, "w") as f:
        f.write("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: R\ndc: reload\n\n" % BASE)
        for ou in ("people", "bulk"):
            f.write("dn: ou=%s,%s\nobjectClass: organizationalUnit\nou: %s\n\n" % (ou, BASE, ou))
        for u in users:
            cn = "V%d user %d" % (version if u == 0 else 1, u)
            f.write(
                "dn: uid=u%d,%s\nobjectClass: inetOrgPerson\nuid: u%d\ncn: %s\nsn: S\n"
                "userPassword: pw-v%d-%d\n\n" % (u, PEOPLE, u, cn, version, u)
            )
        pad = "x" * BULK_BYTES
        for i in range(BULK_N):
            f.write(
                "dn: cn=b%d,%s\nobjectClass: device\ncn: b%d\ndescription: v%d %s\n\n"
                % (i, BULK, i, version, pad)
            )


passed = failed = 0


def ok(what):
    global passed
    passed += 1
    print("ok - " + what, flush=True)


def not_ok(what):
    global failed
    failed += 1
    print("not ok - " + what, flush=True)


def check(cond, what, why=""):
    (ok if cond else not_ok)(what if cond else "%s: %s" % (what, why))
    return cond


def connect(url):
    c = ldap.initialize(url)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.set_option(ldap.OPT_TIMEOUT, 30)
    c.simple_bind_s("", "")
    return c


def mapped(pid, ino):
    """True if /proc/PID/maps maps inode ino."""
    with open("/proc/%s/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[4] == str(ino):
                return True
    return False


def served_inode(pid, db):
    """The inode of the one mapping of the database file db (the path may name another file)."""
    with open("/proc/%s/maps" % pid) as f:
        inodes = {line.split()[4] for line in f if db in line}
    return int(inodes.pop()) if len(inodes) == 1 else None


def wait_unmapped(pid, ino, seconds=5):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not mapped(pid, ino):
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def cn_of(c, uid):
    r = c.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(uid=%s)" % uid, ["cn"])
    return r[0][1]["cn"][0].decode() if r else None


def people(c):
    return {dn for dn, _ in c.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"])}


def page_start(c):
    """Starts a paged search of PEOPLE; returns (control, entries of the first page)."""
    ctl = SimplePagedResultsControl(True, size=PAGE, cookie="")
    msgid = c.search_ext(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["cn"], serverctrls=[ctl])
    _, data, _, sctrls = c.result3(msgid)
    return ctl, sctrls, data


def page_rest(c, ctl, sctrls, got):
    """Reads the remaining pages into got (a list of (dn, attrs))."""
    for _ in range(1000):
        cookies = [s.cookie for s in sctrls if s.controlType == SimplePagedResultsControl.controlType]
        if not cookies or not cookies[0]:
            return
        ctl.cookie = cookies[0]
        msgid = c.search_ext(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["cn"], serverctrls=[ctl])
        _, data, _, sctrls = c.result3(msgid)
        got.extend(data)


def read_bulk(c, msgid):
    """Reads the results of the BULK search msgid: (entries, versions seen)."""
    n, versions = 0, set()
    for _ in range(BULK_N + 10):
        rtype, data = c.result(msgid, all=0)
        for _, attrs in data:
            n += 1
            versions.add(attrs["description"][0][:2].decode())
        if rtype == ldap.RES_SEARCH_RESULT:
            break
    return n, versions


def reimport(cmd, what):
    t0 = time.monotonic()
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, what + " (re-import and the server's reload line)", r.stdout + r.stderr)
    return time.monotonic() - t0


def across(url, pid, db, cmd):
    ino1 = os.stat(db).st_ino
    check(served_inode(pid, db) == ino1, "the server maps the file the path names")
    a, b, p = connect(url), connect(url), connect(url)
    check(cn_of(b, "u0") == "V1 user 0", "v1 served at start")
    ctl, sctrls, got = page_start(a)
    check(len(got) == PAGE, "paged search: first page of %d entries from v1" % PAGE, len(got))
    bulk = p.search(BULK, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["description"])
    time.sleep(0.3)  # the server fills the socket and pauses the search
    check(mapped(pid, ino1), "v1's file is mapped")
    took = reimport(cmd, "v2 imported over the database while the searches are open")
    # New searches see v2, on a new connection and on the old ones.
    t0, seen = time.monotonic(), False
    while time.monotonic() - t0 < 5 and not seen:
        seen = cn_of(connect(url), "u0") == "V2 user 0"
        if not seen:
            time.sleep(0.05)
    check(seen, "a new connection sees v2 (import and reload took %.2f s)" % took)
    check(cn_of(b, "u0") == "V2 user 0", "an old connection sees v2's changed value")
    dns = people(b)
    check(
        "uid=u%d,%s" % (USERS, PEOPLE) in dns and "uid=u%d,%s" % (USERS - 1, PEOPLE) not in dns,
        "an old connection sees v2's added entry and not its removed one",
        sorted(dns)[-3:],
    )
    check(mapped(pid, ino1), "v1's file stays mapped while searches read it")
    # The paged search goes on in v1: every v1 entry once, none of v2.
    page_rest(a, ctl, sctrls, got)
    names = [dn for dn, _ in got]
    cn0 = [attrs["cn"][0].decode() for dn, attrs in got if dn.startswith("uid=u0,")]
    check(
        len(names) == USERS and len(set(names)) == USERS and "uid=u%d,%s" % (USERS, PEOPLE) not in names,
        "paged search: its remaining pages come from v1 (%d entries, the v1 total)" % len(names),
        "%d entries, %d distinct" % (len(names), len(set(names))),
    )
    check(cn0 == ["V1 user 0"], "paged search: the changed value is v1's", cn0)
    # The paused search: every entry of v1, none of v2.
    n, versions = read_bulk(p, bulk)
    check(n == BULK_N and versions == {"v1"}, "paused search: %d entries, all v1" % n, versions)
    after = wait_unmapped(pid, ino1)
    check(after is not None, "v1's file is unmapped once its searches ended (%.2f s)" % (after or 0))
    for name, c in (("paged", a), ("second", b), ("paused", p)):
        try:
            c.search_s(BASE, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
            ok("the %s search's connection is still open and serves" % name)
        except ldap.LDAPError as e:
            not_ok("the %s search's connection: %s" % (name, e))
    # A bind checks v2's passwords (the bind decoy and entries were rebuilt).
    try:
        connect(url).simple_bind_s("uid=u0," + PEOPLE, "pw-v2-0")
        ok("a bind with v2's password succeeds")
    except ldap.LDAPError as e:
        not_ok("bind with v2's password: %s" % e)


def bound(url, pid, db, cmd):
    ino = served_inode(pid, db)
    check(ino is not None, "one database file mapped before")
    a, p = connect(url), connect(url)
    ctl, sctrls, got = page_start(a)
    bulk = p.search(BULK, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["description"])
    time.sleep(0.3)
    reimport(cmd, "first re-import")
    reimport(cmd, "second re-import")
    gone = wait_unmapped(pid, ino)
    check(gone is not None, "two reloads later the file is unmapped although both searches are open")
    try:
        page_rest(a, ctl, sctrls, got)
        not_ok("paged search two reloads old: next page answered (%d entries)" % len(got))
    except ldap.UNWILLING_TO_PERFORM as e:
        ok("paged search two reloads old: next page is unwillingToPerform (%s)" % e.args[0].get("info", ""))
    try:
        n, _ = read_bulk(p, bulk)
        not_ok("paused search two reloads old: ended with success after %d entries" % n)
    except ldap.UNWILLING_TO_PERFORM as e:
        ok("paused search two reloads old: ends with unwillingToPerform (%s)" % e.args[0].get("info", ""))
    for name, c in (("paged", a), ("paused", p)):
        try:
            c.search_s(BASE, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
            ok("the dropped %s search's connection stays open and serves" % name)
        except ldap.LDAPError as e:
            not_ok("the dropped %s search's connection: %s" % (name, e))


def main():
    if sys.argv[1] == "gen":
        for v in (1, 2, 3):
            write_ldif(os.path.join(sys.argv[2], "v%d.ldif" % v), v)
        return 0
    {"across": across, "bound": bound}[sys.argv[1]](*sys.argv[2:6])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
