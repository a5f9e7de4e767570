#!/bin/sh
# Writes a deterministic directory of N inetOrgPerson entries as LDIF on stdout:
#   gen-ldif.sh N [SUFFIX] [ENTRY_BYTES]
# Entries are uid=user.I,ou=people,SUFFIX (I = 0..N-1) with cn, sn, givenName,
# mail, employeeNumber, telephoneNumber and departmentNumber (I mod 100); a
# description pads each entry to about ENTRY_BYTES bytes (default: no padding).
# The same arguments always give the same bytes.
set -eu
n=${1:?usage: gen-ldif.sh N [SUFFIX] [ENTRY_BYTES]}
suffix=${2:-dc=example,dc=com}
size=${3:-0}
first=$(printf '%s' "$suffix" | sed 's/^[^=]*=\([^,]*\).*/\1/')
awk -v n="$n" -v suffix="$suffix" -v size="$size" -v first="$first" 'BEGIN {
	printf "dn: %s\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\no: Benchmark\ndc: %s\n\n", suffix, first
	printf "dn: ou=people,%s\nobjectClass: top\nobjectClass: organizationalUnit\nou: people\n\n", suffix
	pad = ""
	for (i = 0; i < n; i++) {
		e = sprintf("dn: uid=user.%d,ou=people,%s\nobjectClass: top\nobjectClass: person\nobjectClass: organizationalPerson\nobjectClass: inetOrgPerson\nuid: user.%d\ncn: User %d\nsn: %d\ngivenName: User\nmail: user.%d@example.com\nemployeeNumber: %d\ntelephoneNumber: +1 555 %07d\ndepartmentNumber: %d\n", i, suffix, i, i, i, i, i, i, i % 100)
		if (size > length(e) + 14) {
			want = size - length(e) - 14
			if (length(pad) != want) {
				pad = ""
				while (length(pad) < want) pad = pad "Lorem ipsum dolor sit amet, consectetur adipiscing elit. "
				pad = substr(pad, 1, want)
			}
			e = e "description: " pad "\n"
		}
		printf "%s\n", e
	}
}'
