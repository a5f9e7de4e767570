#!/usr/bin/env python3
"""The in-chain rule (1.2.840.113556.1.4.1941) against a closure computed here.

inchain_check.py gen SUFFIX > FILE.ldif: writes a directory of users and groups in groups
(groupOfNames with member, groupOfUniqueNames with uniqueMember, some values with a
"#'0101'B" UID): a chain of depth 10, cycles (three groups, a group naming itself), a
member that names no entry, and random groups over users and other groups (a fixed seed:
the same bytes every run).

inchain_check.py ref SUFFIX inside|around DN CLASS: prints the entries of class CLASS inside
group DN, or the groups of that class around entry DN, by the closure below, one a line.

inchain_check.py check URL SUFFIX BINDDN PW: computes from the same directory, for every
group G the entries inside it through any chain (G itself only when a cycle leads back to
it) and for every entry the groups around it, then asks URL, for every group G,
(memberOf:1.2.840.113556.1.4.1941:=G) and, for a sample of users and every group U,
(member:...:=U) and (uniqueMember:...:=U), and compares the DNs. The chain follows member
and uniqueMember both, as minidir's memberOf does. Prints each difference; exits 1 if there
is any, else prints a summary line."""
import random
import sys

import ldap

OID = "1.2.840.113556.1.4.1941"


def norm(dn):
    return ",".join(p.strip().lower() for p in dn.split(","))


def directory(suffix):
    """(entries, groups): entries a list of (dn, objectClass, attrs); groups their members."""
    rnd = random.Random(1941)
    people, groups = "ou=people," + suffix, "ou=groups," + suffix
    out = [(suffix, ["dcObject", "organization"], {"dc": ["chain"], "o": ["chain"]}),
           (people, ["organizationalUnit"], {"ou": ["people"]}),
           (groups, ["organizationalUnit"], {"ou": ["groups"]})]
    users = ["uid=u%d,%s" % (i, people) for i in range(60)]
    for i, u in enumerate(users):
        out.append((u, ["inetOrgPerson"], {"uid": ["u%d" % i], "cn": ["User %d" % i],
                                           "sn": ["U%d" % i]}))
    g = {}

    def grp(name, members, unique=False):
        g["cn=%s,%s" % (name, groups)] = (members, unique)

    # A chain of depth 10: d0 > d1 > ... > d10 > u0, u1; each di has a user of its own.
    for i in range(10):
        grp("d%d" % i, ["cn=d%d,%s" % (i + 1, groups), users[2 + i]])
    grp("d10", [users[0], users[1]])
    # A cycle c0 > c1 > c2 > c0 (c1 a groupOfUniqueNames), and a group naming itself.
    grp("c0", ["cn=c1,%s" % groups, users[20]])
    grp("c1", ["cn=c2,%s" % groups, users[21] + "#'0101'B"], unique=True)
    grp("c2", ["cn=c0,%s" % groups, users[22]])
    grp("self", ["cn=self,%s" % groups, users[23]])
    # admins: a part of the chain and a user; a member that names no entry.
    grp("admins", ["cn=d5,%s" % groups, users[10], "uid=nobody,%s" % people])
    grp("empty", ["uid=nobody,%s" % people])
    # Random groups over users and the groups above and each other (cycles likely).
    names = ["r%d" % i for i in range(20)]
    for i, n in enumerate(names):
        ms = rnd.sample(users, rnd.randint(1, 5))
        ms += ["cn=%s,%s" % (x, groups) for x in rnd.sample(names, rnd.randint(0, 2))]
        if rnd.random() < 0.3:
            ms.append("cn=%s,%s" % (rnd.choice(["d7", "c1", "self", "admins"]), groups))
        grp(n, sorted(set(ms)), unique=i % 4 == 3)
    for dn, (members, unique) in g.items():
        cn = dn.split(",")[0][3:]
        attr = "uniqueMember" if unique else "member"
        out.append((dn, ["groupOfUniqueNames" if unique else "groupOfNames"],
                    {"cn": [cn], attr: members}))
    return out, g


def gen(suffix):
    entries, _ = directory(suffix)
    for dn, ocs, attrs in entries:
        print("dn: " + dn)
        for oc in ocs:
            print("objectClass: " + oc)
        for a, vs in attrs.items():
            for v in vs:
                print("%s: %s" % (a, v))
        print()


def closures(suffix):
    """inside[G]: entries inside group G; around[E]: groups around entry E (normalized)."""
    entries, g = directory(suffix)
    names = {norm(dn) for dn, _, _ in entries}
    down = {}
    for dn, (members, _) in g.items():
        down[norm(dn)] = {norm(m.split("#")[0]) for m in members} & names
    up = {}
    for grp_dn, ms in down.items():
        for m in ms:
            up.setdefault(m, set()).add(grp_dn)

    def walk(start, rel):
        seen, todo = set(), [start]
        while todo:
            for y in rel.get(todo.pop(), ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    return ({x: walk(x, down) for x in down}, {x: walk(x, up) for x in names}, entries)


def check(url, suffix, who, pw):
    inside, around, entries = closures(suffix)
    c = ldap.initialize(url)
    c.simple_bind_s(who, pw)
    bad, asked = 0, 0

    def ask(flt, want):
        nonlocal bad, asked
        asked += 1
        got = {norm(dn) for dn, _ in c.search_s(suffix, ldap.SCOPE_SUBTREE, flt, ["1.1"])}
        if got != want:
            bad += 1
            print("%s: want %d %s, got %d %s" % (flt, len(want), sorted(want)[:4], len(got),
                                                 sorted(got)[:4]))

    for grp_dn in sorted(inside):
        ask("(memberOf:%s:=%s)" % (OID, grp_dn), inside[grp_dn])
    users = sorted(dn for dn, ocs, _ in entries if "inetOrgPerson" in ocs)
    sample = users[::3] + sorted(inside)
    for u in sample:
        ask("(member:%s:=%s)" % (OID, u), around[u])
        ask("(uniqueMember:%s:=%s)" % (OID, u), around[u])
    deepest = max(len(around[u]) for u in users)
    if deepest < 11:
        bad += 1
        print("the data has no user 11 groups deep (%d)" % deepest)
    if bad:
        sys.exit(1)
    print("%d filters match the closure (%d groups, %d entries, a user %d groups deep)" %
          (asked, len(inside), len(around), deepest))


def ref(suffix, way, dn, cls):
    inside, around, entries = closures(suffix)
    classes = {norm(d): ocs for d, ocs, _ in entries}
    for x in sorted((inside if way == "inside" else around).get(norm(dn), ())):
        if cls in classes[x]:
            print(x)


def main():
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif sys.argv[1] == "ref":
        ref(*sys.argv[2:6])
    else:
        check(*sys.argv[2:6])


main()
