#!/bin/sh
# Compares two minidir-import binaries (an older build and this one) on the same LDIF
# files: the databases they write must be the same table by table (mdb_dump of each,
# meta's "created" and "creator" left out), and what they say on stderr and their exit
# status the same. Entries without an entryUUID get one made from their place in the file
# (else each import would draw its own at random).
#
#   bench/import_compare.sh OLD_IMPORT NEW_IMPORT FILE.ldif...
#   e.g. bench/import_compare.sh /tmp/old/minidir-import build/minidir-import \
#            tests/data/test.ldif tests/data/bad/*.ldif tests/data/bad-schema/*.ldif
#
# SUFFIX (dc=example,dc=com) is the suffix; index lines as bench/import.sh has them. Exits 1 at the first difference.
set -eu
old=$1 new=$2
shift 2
tmp=$(mktemp -d)
# minidir reads the tree's own schema/ (slapd, where it runs, its /etc/ldap/schema).
SCHEMA_DIR=$(cd "$(dirname "$0")/.." && pwd)/schema
trap 'rm -rf "$tmp"' EXIT

# Gives each entry (a record with a "dn:" line) without an entryUUID one, at its end.
with_uuids() {
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
		{ n++ }
		/(^|\n)dn:/ && !/(^|\n)[eE][nN][tT][rR][yY][uU][uU][iI][dD]:/ {
			printf "%s\nentryUUID: 00000000-0000-4000-8000-%012d\n\n", $0, n; next }
		{ print }' "$1"
}

# Every table of the database file $1, one dump after another, without meta's stamps.
dump_tables() {
	for t in $(mdb_dump -n -l "$1"); do
		echo "== $t"
		mdb_dump -n -s "$t" "$1"
	done | awk '/^== meta$/ { m = 1 } /^== / && !/meta/ { m = 0 }
		m && skip { skip = 0; next }
		m && (/^ 63726561746564$/ || /^ 63726561746f72$/) { skip = 1; next } { print }'
}

run() { # binary ldif name
	mkdir -p "$tmp/$3"
	printf '%s\n' "listen = 127.0.0.1:0" "database = $tmp/$3/db.mdb" "schema_dir = $SCHEMA_DIR" \
		"suffix = ${SUFFIX:-dc=example,dc=com}" \
		"index = objectClass, uid, cn, mail, member, departmentNumber, entryUUID" >"$tmp/$3.conf"
	rm -f "$tmp/$3/db.mdb"
	rc=0
	"$1" -q -j 2 -f "$tmp/$3.conf" "$2" >"$tmp/$3.out" 2>&1 || rc=$?
	sed "s|$tmp/$3/||g; s|\.tmp\.[0-9]*|.tmp|g" "$tmp/$3.out" >"$tmp/$3.msg"
	echo "exit $rc" >>"$tmp/$3.msg"
	if [ -f "$tmp/$3/db.mdb" ]; then dump_tables "$tmp/$3/db.mdb" >"$tmp/$3.dump"; else : >"$tmp/$3.dump"; fi
}

status=0
for f in "$@"; do
	with_uuids "$f" >"$tmp/in.ldif"
	run "$old" "$tmp/in.ldif" old
	run "$new" "$tmp/in.ldif" new
	if cmp -s "$tmp/old.msg" "$tmp/new.msg" && cmp -s "$tmp/old.dump" "$tmp/new.dump"; then
		echo "same: $f ($(wc -l <"$tmp/new.dump") dump lines; $(head -n 1 "$tmp/new.msg"))"
	else
		echo "DIFFERENT: $f"
		diff "$tmp/old.msg" "$tmp/new.msg" | head -n 5 || true
		diff "$tmp/old.dump" "$tmp/new.dump" | head -n 5 || true
		status=1
	fi
done
exit $status
