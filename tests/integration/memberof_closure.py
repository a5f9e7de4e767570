#!/usr/bin/env python3
"""Checks a replica's nested memberOf against a closure computed here.

memberof_closure.py PROVIDER REPLICA BASE BINDDN PW: reads every entry's member and
uniqueMember values from PROVIDER (slapd), computes for each entry the groups it
reaches through groups in groups (cycle-safe; a group in a cycle is its own group, as slapd's dynlist says), and
compares with REPLICA's memberOf of every entry and with the entries REPLICA returns
for (memberOf=G) of every group G (the eq.memberof index). Prints each difference;
exits 1 if there is any, else prints a summary line."""
import sys

import ldap


def norm(dn):
    return ",".join(p.strip().lower() for p in dn.split(","))


def main():
    prov, rep, base, who, pw = sys.argv[1:6]
    p = ldap.initialize(prov)
    p.simple_bind_s(who, pw)
    direct = {}  # entry -> groups naming it
    entries = set()
    for dn, attrs in p.search_s(base, ldap.SCOPE_SUBTREE, "(objectClass=*)",
                                ["member", "uniqueMember"]):
        entries.add(norm(dn))
        for v in attrs.get("member", []) + attrs.get("uniqueMember", []):
            m = norm(v.decode().split("#")[0])
            direct.setdefault(m, set()).add(norm(dn))
    want = {}
    for e in entries:
        seen, todo = set(), [e]
        while todo:
            x = todo.pop()
            for g in direct.get(x, ()):
                if g in entries and g not in seen:  # e itself when a cycle leads back
                    seen.add(g)
                    todo.append(g)
        want[e] = seen
    r = ldap.initialize(rep)
    r.simple_bind_s(who, pw)
    bad = 0
    for dn, attrs in r.search_s(base, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["memberOf"]):
        got = {norm(v.decode()) for v in attrs.get("memberOf", [])}
        w = want.get(norm(dn), set())
        if got != w:
            bad += 1
            print("memberOf of %s: want %s, got %s" % (dn, sorted(w), sorted(got)))
    groups = {g for s in want.values() for g in s}
    for g in sorted(groups):
        got = {norm(dn) for dn, _ in r.search_s(base, ldap.SCOPE_SUBTREE,
                                                 "(memberOf=%s)" % g, ["1.1"])}
        w = {e for e, s in want.items() if g in s}
        if got != w:
            bad += 1
            print("(memberOf=%s): want %s, got %s" % (g, sorted(w), sorted(got)))
    if bad:
        sys.exit(1)
    print("%d entries, %d groups, %d memberships" %
          (len(entries), len(groups), sum(len(s) for s in want.values())))


main()
