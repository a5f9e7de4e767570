#!/bin/sh
# Writes NG nested groups over gen-ldif.sh's users as LDIF on stdout:
#   memberof_nested_groups.sh NG NUSERS [SUFFIX]
# ou=groups, then cn=g.I,ou=groups (I = 0..NG-1, groupOfNames): members uid=user.J for
# J = 10*I .. 10*I+9 (mod NUSERS) and the groups cn=g.C for C = 10*I+1 .. 10*I+10 (< NG):
# a tree of groups ten wide, log10(NG) deep. The same arguments give the same bytes.
set -eu
ng=${1:?usage: memberof_nested_groups.sh NG NUSERS [SUFFIX]}
nu=${2:?usage: memberof_nested_groups.sh NG NUSERS [SUFFIX]}
suffix=${3:-dc=example,dc=com}
awk -v ng="$ng" -v nu="$nu" -v suffix="$suffix" 'BEGIN {
	printf "dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n", suffix
	for (i = 0; i < ng; i++) {
		printf "dn: cn=g.%d,ou=groups,%s\nobjectClass: groupOfNames\ncn: g.%d\n", i, suffix, i
		for (k = 0; k < 10; k++)
			printf "member: uid=user.%d,ou=people,%s\n", (10 * i + k) % nu, suffix
		for (c = 10 * i + 1; c <= 10 * i + 10 && c < ng; c++)
			printf "member: cn=g.%d,ou=groups,%s\n", c, suffix
		printf "\n"
	}
}'
