#!/usr/bin/env python3
"""Virtual List View with python-ldap (vlv_test.sh).

    vlv_client.py URI

URI serves examples/example.ldif, readable by all. Checks what ldapsearch cannot send
(VLV without the sort control, with paged results) and an address book's sequence of
windows on one connection; the reference order is the whole list, sorted, fetched with
the sort control alone. Prints one "ok - ..." or "not ok - ..." line per check; exits 0.
"""
import sys

import ldap
from ldap.controls import RequestControl, SimplePagedResultsControl
from ldap.controls.sss import SSSRequestControl
from ldap.controls.vlv import VLVRequestControl, VLVResponseControl

URI = sys.argv[1]
B = "dc=example,dc=com"
FILTER = "(objectClass=inetOrgPerson)"


def report(good, what):
    print(("ok - " if good else "not ok - ") + what)


def sort_ctl():
    return SSSRequestControl(ordering_rules=["uid:caseIgnoreOrderingMatch"])


def search(conn, ctls):
    """(result code, [uid], VLV response or None)."""
    try:
        msgid = conn.search_ext(B, ldap.SCOPE_SUBTREE, FILTER, ["uid"], serverctrls=ctls)
        _, data, _, rctls = conn.result3(
            msgid, resp_ctrl_classes={VLVResponseControl.controlType: VLVResponseControl})
        rc = 0
    except ldap.LDAPError as e:
        info = e.args[0] if e.args else {}
        rc, data, rctls = info.get("result", -1), [], []
        rctls = [VLVResponseControl.controlType == c[0] and _decode(c) for c in info.get("ctrls", [])]
    uids = [a["uid"][0].decode() for _, a in data if a]
    vlv = [c for c in rctls if isinstance(c, VLVResponseControl)]
    return rc, uids, vlv[0] if vlv else None


def _decode(c):
    r = VLVResponseControl()
    r.decodeControlValue(c[2])
    return r


conn = ldap.initialize(URI)
conn.protocol_version = 3
conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
conn.set_option(ldap.OPT_TIMEOUT, 10)
rc, everyone, _ = search(conn, [sort_ctl()])
n = len(everyone)
report(rc == 0 and n > 10, f"sorted list: {n} entries")

# An address book: a window of 5 around offsets moving down the list, one connection.
good = True
for offset in range(1, n + 1, 7):
    rc, uids, r = search(conn, [sort_ctl(), VLVRequestControl(before_count=1, after_count=3,
                                                              offset=offset, content_count=n)])
    want = everyone[max(offset - 2, 0):offset + 3]
    if rc != 0 or uids != want or r is None or r.target_position != offset or r.content_count != n:
        good = False
        report(False, f"window at {offset}: rc {rc}, {uids} want {want}, "
               f"response {r and (r.target_position, r.content_count, r.result)}")
report(good, "address-book windows by offset on one connection")

# Typing ahead: greaterThanOrEqual on the first key.
key = everyone[n // 2]
rc, uids, r = search(conn, [sort_ctl(), VLVRequestControl(before_count=0, after_count=1,
                                                          greater_than_or_equal=key)])
report(rc == 0 and uids == everyone[n // 2:n // 2 + 2] and r.target_position == n // 2 + 1,
       f"greaterThanOrEqual {key}: {uids}, position {r and r.target_position}")
rc, uids, r = search(conn, [sort_ctl(), VLVRequestControl(before_count=0, after_count=1,
                                                          greater_than_or_equal="zzzz")])
report(rc == 0 and uids == everyone[-1:] and r.target_position == n + 1,
       f"greaterThanOrEqual past the end: {uids}, position {r and r.target_position}")

# A contextID the server never gave: ignored, the window is placed afresh.
rc, uids, r = search(conn, [sort_ctl(), VLVRequestControl(before_count=0, after_count=0, offset=2,
                                                          content_count=0, context_id="stale")])
report(rc == 0 and uids == everyone[1:2], f"a foreign contextID is ignored: rc {rc}, {uids}")

# Errors.
rc, uids, r = search(conn, [VLVRequestControl(before_count=0, after_count=0, offset=1,
                                              content_count=0)])
report(rc == 76 and not uids and r is not None and r.result == 60,
       f"without the sort control: rc {rc} (76), vlvResult {r and r.result} (60)")
rc, uids, r = search(conn, [sort_ctl(), VLVRequestControl(before_count=0, after_count=0,
                                                          offset=n + 1, content_count=0)])
report(rc == 76 and not uids and r is not None and r.result == 61,
       f"offset past the end: rc {rc} (76), vlvResult {r and r.result} (61)")
rc, uids, r = search(conn, [sort_ctl(), SimplePagedResultsControl(True, size=2, cookie=""),
                            VLVRequestControl(before_count=0, after_count=0, offset=1,
                                              content_count=0)])
report(rc == 53 and not uids, f"with paged results: rc {rc} (53)")

# A paged search's next page asked with a VLV control as well: refused (53), and the paged
# search goes on with the request that made it.
def page(ctls):
    msgid = conn.search_ext(B, ldap.SCOPE_SUBTREE, FILTER, ["uid"], serverctrls=ctls)
    try:
        _, data, _, rctls = conn.result3(msgid)
    except ldap.LDAPError as e:
        return (e.args[0] if e.args else {}).get("result", -1), [], None
    cookies = [c.cookie for c in rctls if c.controlType == SimplePagedResultsControl.controlType]
    return 0, [a["uid"][0].decode() for _, a in data if a], cookies[0] if cookies else None


rc1, first, cookie = page([sort_ctl(), SimplePagedResultsControl(True, size=2, cookie="")])
rc2, uids, _ = page([sort_ctl(), SimplePagedResultsControl(True, size=2, cookie=cookie),
                     VLVRequestControl(before_count=0, after_count=0, offset=1, content_count=0)])
rc3, second, _ = page([sort_ctl(), SimplePagedResultsControl(True, size=2, cookie=cookie)])
report(rc1 == 0 and first == everyone[:2] and cookie and rc2 == 53 and not uids and rc3 == 0 and
       second == everyone[2:4],
       f"a paged search's next page with VLV: rc {rc2} (53); the next page then {second} "
       f"(want {everyone[2:4]})")
rc, uids, r = search(conn, [sort_ctl(), RequestControl(VLVRequestControl.controlType, True,
                                                       b"0\x03\x02\x01\x00")])
report(rc == 2 and not uids, f"a malformed VLV control: rc {rc} (2)")
conn.unbind_s()
