#!/usr/bin/env python3
"""Compares the names slapd's schema files define with the schema a minidir serves.

    schema_names.py URI SLAPD_SCHEMA_DIR FILE...

For each attribute type and object class of SLAPD_SCHEMA_DIR/FILE.schema (slapd's, a
test peer's: facts to compare against), the server at URI must publish, in cn=Subschema,
a definition with the same OID that lists every one of its NAMEs. Definitions slapd's
files carry commented out ("#attributetype", one '#') count too, as protocol/schema.c
reads them: most are what slapd builds in; cosine's pilotObject, lastModifiedTime and
lastModifiedBy are RFC 1274's, commented out by slapd as deprecated and defined by the
tree's cosine.schema. Every SYNTAX the served attribute types name must be in
ldapSyntaxes as well.

Prints one "ok - ..." line per file and kind, or a "not ok - ..." line per item missing,
for the calling script to count.
"""
import re
import sys

import ldap

# Items of slapd's files the tree's schema leaves out on purpose: (file, OID) -> reason.
# None today; a new one needs its reason here.
EXCEPTIONS = {}

STATEMENT = re.compile(r"(?i)^#?(attributetype|objectclass)\s")


def definitions(path):
    """(kind, text) of each definition in a .schema file, as protocol/schema.c reads it."""
    out, cur, commented = [], None, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if cur is not None:
                if commented and line[:2] in ("#\t", "# "):
                    cur[1].append(line[2:])
                    continue
                if not commented and line[:1] in (" ", "\t"):
                    cur[1].append(line)
                    continue
                out.append((cur[0], " ".join(cur[1])))
                cur = None
            m = STATEMENT.match(line)
            if m:
                commented = line.startswith("#")
                cur = (m.group(1).lower(), [line[m.end():]])
    if cur is not None:
        out.append((cur[0], " ".join(cur[1])))
    return out


def oid_and_names(text):
    """The OID and the NAMEs (lowercased) of an RFC 4512 description."""
    m = re.match(r"\s*\(\s*([0-9A-Za-z.-]+)", text)
    if not m:
        return None, []
    n = re.search(r"\bNAME\s+(\([^)]*\)|'[^']*')", text)
    return m.group(1), [x.lower() for x in re.findall(r"'([^']*)'", n.group(1))] if n else []


def served(uri):
    """{kind: {OID: names}} and the syntax OIDs of minidir's cn=Subschema."""
    conn = ldap.initialize(uri)
    attrs = ["attributeTypes", "objectClasses", "ldapSyntaxes"]
    _, entry = conn.search_s("cn=Subschema", ldap.SCOPE_BASE, "(objectClass=*)", attrs)[0]
    conn.unbind_s()
    table = {}
    for kind, attr in (("attributetype", "attributeTypes"), ("objectclass", "objectClasses")):
        table[kind] = {}
        for v in entry.get(attr, []):
            oid, names = oid_and_names(v.decode())
            table[kind][oid] = set(names)
    syntaxes = {oid_and_names(v.decode())[0] for v in entry.get("ldapSyntaxes", [])}
    used = set()
    for v in entry.get("attributeTypes", []):
        m = re.search(r"\bSYNTAX\s+'?([0-9.]+)", v.decode())
        if m:
            used.add(m.group(1))
    return table, syntaxes, used


def main():
    uri, slapd_dir, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    table, syntaxes, used = served(uri)
    for name in files:
        counts = {"attributetype": 0, "objectclass": 0}
        bad = 0
        for kind, text in definitions(f"{slapd_dir}/{name}.schema"):
            oid, names = oid_and_names(text)
            if (name, oid) in EXCEPTIONS:
                continue
            counts[kind] += 1
            have = table[kind].get(oid)
            what = f"{name}.schema: {kind} {oid} ({' '.join(names)})"
            if have is None:
                print(f"not ok - {what}: no such OID in cn=Subschema")
                bad += 1
            elif not set(names) <= have:
                print(f"not ok - {what}: cn=Subschema lacks {sorted(set(names) - have)}")
                bad += 1
        if not bad:
            print(f"ok - {name}.schema: its {counts['attributetype']} attribute types and "
                  f"{counts['objectclass']} object classes are served with their OIDs and names")
    missing = sorted(used - syntaxes)
    if missing:
        print(f"not ok - syntaxes the attribute types name but ldapSyntaxes lacks: {missing}")
    else:
        print(f"ok - ldapSyntaxes lists all {len(used)} syntaxes the attribute types name")


if __name__ == "__main__":
    main()
