"""The client side of limits_test.sh's slicing case (python-ldap): on a server with one
worker, one connection starts a costly search (an OR of ITEMS :dn: items that match
nothing, as the rootdn, whom no limit stops), and while it runs another connection looks
up one entry. The lookup must be answered while the costly search is still running:
the worker serves its other connections between slices of the search. Nothing is
timed; what is checked is the order of the two answers. Prints "ok - ..." / "not ok - ..."

  slice_client.py URL BASE ROOTDN ROOTPW ITEMS LOOKUP_FILTER
"""
import sys
import time

import ldap

url, base, rootdn, rootpw, items, lookup = sys.argv[1:7]
costly = "(|" + "".join("(:dn:caseIgnoreMatch:=nomatch.%d)" % j for j in range(int(items))) + ")"

heavy = ldap.initialize(url)
heavy.simple_bind_s(rootdn, rootpw)
light = ldap.initialize(url)
light.simple_bind_s("", "")  # connected and bound before the costly search starts

msgid = heavy.search_ext(base, ldap.SCOPE_SUBTREE, costly, ["1.1"])
time.sleep(0.3)  # the costly search is under way (it takes seconds)
t0 = time.monotonic()
found = light.search_ext_s(base, ldap.SCOPE_SUBTREE, lookup, ["cn"], timeout=120)
waited = time.monotonic() - t0
# Is the costly search still running? (its SearchResultDone not there yet)
rtype, _ = heavy.result(msgid, all=1, timeout=0)
if len(found) == 1 and rtype is None:
    print("ok - slicing: a lookup on the same worker answered while the costly search ran "
          "(after %.3f s)" % waited)
elif len(found) != 1:
    print("not ok - slicing: the lookup returned %d entries" % len(found))
else:
    print("not ok - slicing: the lookup was answered only after the costly search ended "
          "(after %.3f s)" % waited)
if rtype is None:
    t0 = time.monotonic()
    heavy.result(msgid, all=1, timeout=300)
    print("# the costly search ended %.3f s later" % (time.monotonic() - t0))
heavy.unbind_s()
light.unbind_s()
