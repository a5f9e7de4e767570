"""replica_test.sh's snapshot check (python-ldap): a paged search on a replica reads one
snapshot while the provider changes. The first page is read, then CMD runs (it deletes
an entry on the provider that a later page would hold, adds one, and waits until the
replica shows both changes); the remaining pages must hold exactly the entries there
were when the search began. Prints "ok - ..." or what went wrong.

  replica_snapshot.py URI BINDDN PASSWORD BASE CMD
"""
import subprocess
import sys

import ldap
from ldap.controls import SimplePagedResultsControl

uri, binddn, pw, base, cmd = sys.argv[1:6]
PAGE = 5


def names(conn):
    return sorted(dn for dn, _ in conn.search_s(base, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"]))


conn = ldap.initialize(uri)
conn.simple_bind_s(binddn, pw)
before = names(conn)
ctl = SimplePagedResultsControl(True, size=PAGE, cookie=b"")
got, pages, ran = [], 0, False
while True:
    msgid = conn.search_ext(base, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"], serverctrls=[ctl])
    _, data, _, ctrls = conn.result3(msgid)
    got += [dn for dn, _ in data if dn]
    pages += 1
    if not ran:
        subprocess.run(cmd, shell=True, check=True, timeout=30)
        ran = True
    cookie = next((c.cookie for c in ctrls if c.controlType == SimplePagedResultsControl.controlType), b"")
    if not cookie:
        break
    ctl.cookie = cookie
after = names(conn)
if sorted(got) == before and after != before:
    print("ok - a paged search (%d pages of %d) read one snapshot: the %d entries there were at its start, "
          "while the replica took a delete and an add meanwhile (%d entries now)" % (pages, PAGE, len(got), len(after)))
else:
    missing = sorted(set(before) - set(got))
    extra = sorted(set(got) - set(before))
    print("paged search across changes: missing %s, extra %s, changed meanwhile: %s"
          % (missing[:3], extra[:3], after != before))
