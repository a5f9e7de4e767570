"""The client side of limits_test.sh's slicing cases (python-ldap): on a server with one
worker, one connection starts a costly search (an OR of ITEMS items that match nothing,
ITEM with J replaced by the item's number: by default :dn: items over the whole tree; with
HEAVY_BASE, on that one entry alone), and while it runs another connection looks up one
entry. The lookup must be answered while the costly search is still running: the worker
serves its other connections between slices of the search, even in the middle of one
entry's evaluation. Nothing is timed; what is checked is the order of the two answers,
and then the costly search's result code (WANT_RC). Prints "ok - ..." / "not ok - ..."

  slice_client.py URL BASE WHO PW ITEMS LOOKUP_FILTER [ITEM [HEAVY_BASE [WANT_RC]]]

WHO and PW are the costly search's identity ("" for anonymous).
"""
import sys
import time

import ldap

url, base, who, pw, items, lookup = sys.argv[1:7]
item = sys.argv[7] if len(sys.argv) > 7 else "(:dn:caseIgnoreMatch:=nomatch.J)"
heavy_base = sys.argv[8] if len(sys.argv) > 8 else base
want_rc = int(sys.argv[9]) if len(sys.argv) > 9 else 0
scope = ldap.SCOPE_BASE if len(sys.argv) > 8 else ldap.SCOPE_SUBTREE
costly = "(|" + "".join(item.replace("J", str(j)) for j in range(int(items))) + ")"
name = "slicing (%s, %s items %s)" % (who or "anonymous", items, item.replace("J", "N"))

heavy = ldap.initialize(url)
heavy.simple_bind_s(who, pw)
light = ldap.initialize(url)
light.simple_bind_s("", "")  # connected and bound before the costly search starts


def heavy_result(timeout):
    """(ended, result code) of the costly search, waiting at most timeout seconds."""
    try:
        rtype, _ = heavy.result(msgid, all=1, timeout=timeout)
        return rtype is not None, 0
    except ldap.TIMEOUT:
        return False, None
    except ldap.LDAPError as e:
        return True, e.args[0].get("result", -1) if e.args and isinstance(e.args[0], dict) else -1


msgid = heavy.search_ext(heavy_base, scope, costly, ["1.1"])
time.sleep(0.3)  # the costly search is under way (it takes seconds)
t0 = time.monotonic()
found = light.search_ext_s(base, ldap.SCOPE_SUBTREE, lookup, ["cn"], timeout=120)
waited = time.monotonic() - t0
# Is the costly search still running? (its SearchResultDone not there yet)
ended, rc = heavy_result(0)
if len(found) == 1 and not ended:
    print("ok - %s: a lookup on the same worker answered while the costly search ran "
          "(after %.3f s)" % (name, waited))
elif len(found) != 1:
    print("not ok - %s: the lookup returned %d entries" % (name, len(found)))
else:
    print("not ok - %s: the lookup was answered only after the costly search ended "
          "(after %.3f s)" % (name, waited))
if not ended:
    t0 = time.monotonic()
    ended, rc = heavy_result(300)
    print("# the costly search ended %.3f s later" % (time.monotonic() - t0))
if ended and rc == want_rc:
    print("ok - %s: the costly search answered %d" % (name, rc))
else:
    print("not ok - %s: the costly search answered %s, expected %d" % (name, rc, want_rc))
heavy.unbind_s()
light.unbind_s()
