#!/usr/bin/env python3
"""Controls per operation and paged-results cookies, with python-ldap (controls_test.sh).

    controls_client.py URI

URI serves examples/example.ldif with the rules controls_test.sh writes: ou=contractors
readable only by cn=admins (bob is a member), everything else readable. Prints one
"ok - ..." or "not ok - ..." line per check; exits 0.
"""
import sys

import ldap
import ldap.controls
from ldap.controls import RequestControl, SimplePagedResultsControl
from ldap.controls.libldap import AssertionControl

URI = sys.argv[1]
B = "dc=example,dc=com"
P = "ou=people," + B
C = "ou=contractors," + P
BOB = ("uid=bob," + P, "bob-secret")
PAGED = SimplePagedResultsControl.controlType
MANAGE_DSA_IT = "2.16.840.1.113730.3.4.2"
MATCHED_VALUES = "1.2.826.0.1.3344810.2.3"
SORT = "1.2.840.113556.1.4.473"
# SortKeyList { SortKey { "sn", [0] "caseIgnoreOrderingMatch" } } (RFC 2891)
SORT_BY_SN = b"0\x1f0\x1d\x04\x02sn\x80\x17caseIgnoreOrderingMatch"
# ValuesReturnFilter { present cn } (RFC 3876)
MV_CN = b"0\x04\x87\x02cn"


def report(good, what):
    print(("ok - " if good else "not ok - ") + what)


def connect(who=None):
    conn = ldap.initialize(URI)
    conn.protocol_version = 3
    conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    conn.set_option(ldap.OPT_TIMEOUT, 10)
    if who:
        conn.simple_bind_s(*who)
    return conn


def result_code(call):
    """The LDAP result code call() ends with (0 when it succeeds)."""
    try:
        call()
        return 0
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1)


def expect(what, call, want):
    got = result_code(call)
    report(got == want, "%s: %d (wanted %d)" % (what, got, want))


def page(conn, base, scope, flt, cookie, size, attrs=("1.1",), ctrls=()):
    """One page: (DNs, cookie of the next page or b'')."""
    pc = SimplePagedResultsControl(True, size, cookie)
    msgid = conn.search_ext(base, scope, flt, list(attrs), serverctrls=[pc] + list(ctrls))
    _, data, _, rctrls = conn.result3(msgid)
    next_cookie = [c.cookie for c in rctrls if c.controlType == PAGED]
    return [dn for dn, _ in data if dn], (next_cookie[0] if next_cookie else b"")


def whoami(conn, ctl):
    # python-ldap's whoami_s hands its controls to libldap unconverted: convert them here
    return conn.whoami_s(serverctrls=ldap.controls.RequestControlTuples([ctl]))


def controls():
    conn = connect()
    alice = "uid=alice," + P
    crit = {
        "assertion": AssertionControl(True, "(uid=alice)"),
        "manageDsaIT": RequestControl(MANAGE_DSA_IT, True),
        "paged": SimplePagedResultsControl(True, 5, ""),
    }
    for name, ctl in crit.items():
        expect("a bind with a critical %s control: unavailableCriticalExtension" % name,
               lambda: connect().simple_bind_s(*BOB, serverctrls=[ctl]), 12)
    expect("a bind with a non-critical assertion: ignored, bound",
           lambda: connect().simple_bind_s(*BOB, serverctrls=[AssertionControl(False, "(uid=x)")]), 0)
    expect("a compare with a critical paged control: unavailableCriticalExtension",
           lambda: conn.compare_ext_s(alice, "uid", b"alice", serverctrls=[crit["paged"]]), 12)
    mv = RequestControl(MATCHED_VALUES, True, MV_CN)
    expect("a compare with a critical matched values control: unavailableCriticalExtension",
           lambda: conn.compare_ext_s(alice, "uid", b"alice", serverctrls=[mv]), 12)
    expect("a compare with a false critical assertion: assertionFailed",
           lambda: conn.compare_ext_s(alice, "uid", b"alice",
                                      serverctrls=[AssertionControl(True, "(uid=bob)")]), 122)
    expect("a compare with a true assertion: compareTrue",
           lambda: conn.compare_ext_s(alice, "uid", b"alice", serverctrls=[crit["assertion"]]), 0)
    expect("a compare with a malformed assertion: protocolError",
           lambda: conn.compare_ext_s(alice, "uid", b"alice",
                                      serverctrls=[RequestControl("1.3.6.1.1.12", True, b"\x01")]), 2)
    expect("a WhoAmI with a critical assertion: unavailableCriticalExtension",
           lambda: whoami(conn, crit["assertion"]), 12)
    expect("a WhoAmI with a non-critical assertion: performed",
           lambda: whoami(conn, AssertionControl(False, "(uid=x)")), 0)
    expect("a modify with a critical paged control: unavailableCriticalExtension",
           lambda: conn.modify_ext_s(alice, [(ldap.MOD_REPLACE, "cn", [b"x"])],
                                     serverctrls=[crit["paged"]]), 12)
    expect("a modify with a critical assertion: still read-only (unwillingToPerform)",
           lambda: conn.modify_ext_s(alice, [(ldap.MOD_REPLACE, "cn", [b"x"])],
                                     serverctrls=[crit["assertion"]]), 53)
    expect("a search of cn=monitor with a critical assertion: unavailableCriticalExtension",
           lambda: conn.search_ext_s("cn=monitor", ldap.SCOPE_BASE, serverctrls=[crit["assertion"]]), 12)
    expect("a search with all five controls is still performed",
           lambda: conn.search_ext_s(alice, ldap.SCOPE_BASE, "(objectClass=*)", ["cn"], serverctrls=[
               crit["assertion"], crit["manageDsaIT"], crit["paged"],
               RequestControl(SORT, True, SORT_BY_SN), RequestControl(MATCHED_VALUES, True, MV_CN)]), 0)


def paged():
    sub = ldap.SCOPE_SUBTREE
    # A whole paged search, page by page, with the same request: every entry once.
    conn = connect()
    want = [dn for dn, _ in conn.search_s(P, sub, "(objectClass=*)", ["1.1"])]
    got, cookie, pages = [], b"", 0
    while pages < 100:
        dns, cookie = page(conn, P, sub, "(objectClass=*)", cookie, 7)
        got += dns
        pages += 1
        if not cookie:
            break
    report(sorted(got) == sorted(want) and len(got) == len(want),
           "the same request page after page: %d entries in %d pages (%d without paging)"
           % (len(got), pages, len(want)))
    # Another page size is allowed (RFC 2696 3).
    _, cookie = page(conn, P, sub, "(objectClass=*)", b"", 3)
    dns, cookie = page(conn, P, sub, "(objectClass=*)", cookie, 5)
    report(len(dns) == 5, "a cookie with another page size goes on (%d entries)" % len(dns))
    changed = [
        ("another base and scope", ("uid=alice," + P, ldap.SCOPE_BASE, "(objectClass=*)", ("1.1",), ())),
        ("another filter", (P, sub, "(uid=*)", ("1.1",), ())),
        ("other attributes", (P, sub, "(objectClass=*)", ("cn",), ())),
        ("another control", (P, sub, "(objectClass=*)", ("1.1",),
                             (RequestControl(MANAGE_DSA_IT, False),))),
    ]
    for what, (base, scope, flt, attrs, ctrls) in changed:
        _, cookie = page(conn, P, sub, "(objectClass=*)", b"", 3)
        expect("a cookie used with %s: unwillingToPerform" % what,
               lambda: page(conn, base, scope, flt, cookie, 3, attrs, ctrls), 53)
        try:
            dns, _ = page(conn, P, sub, "(objectClass=*)", cookie, 3)
            report(len(dns) == 3, "the cookie still goes on with its own request (%d entries)"
                   % len(dns))
        except ldap.LDAPError as e:
            report(False, "the cookie goes on with its own request: %s" % e)


def paged_bind():
    sub = ldap.SCOPE_SUBTREE
    # After a bind the paged search is gone: bob's look-ahead entry (ou=contractors, which
    # only admins may read) must not reach the anonymous client.
    conn = connect(BOB)
    visible = [dn for dn, _ in conn.search_s(P, sub, "(objectClass=*)", ["1.1"])]
    # The first page ends just before the first contractor entry (in the order sent).
    size = [i for i, dn in enumerate(visible) if dn.lower().endswith(C.lower())][0]
    dns, cookie = page(conn, P, sub, "(objectClass=*)", b"", size)
    report(len(dns) == size and cookie, "bob's first page: %d entries, more to come" % len(dns))
    conn.simple_bind_s("", "")
    leaked = []

    def next_page():
        leaked.extend(page(conn, P, sub, "(objectClass=*)", cookie, 100)[0])

    expect("bob's cookie after a bind as anonymous: unwillingToPerform", next_page, 53)
    hidden = [dn for dn in leaked if dn.lower().endswith(C.lower())]
    report(not hidden, "no entry anonymous may not see (%s)" % (", ".join(hidden) or "none"))


for part in (controls, paged, paged_bind):
    try:
        part()
    except Exception as e:  # a client error is a failed check, not a traceback
        report(False, "controls_client %s: %s: %s" % (part.__name__, type(e).__name__, e))
