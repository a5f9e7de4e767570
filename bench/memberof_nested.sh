#!/usr/bin/env bash
# A replica's cost per group change with memberof_nested on, beside off, in one run: one
# slapd provider (syncprov) with bench/gen-ldif.sh NU users and
# bench/memberof_nested_groups.sh NG nested groups (a tree ten wide), two minidir
# refreshAndPersist replicas of it (memberof_nested = yes and no). Once both hold the
# directory, CHANGES group changes go to the provider in one ldapmodify (a member group
# added to a random group, then taken out again, alternately), then a marker; each
# replica's wall time until it shows the marker and its CPU (user+system, /proc) over the
# changes, per change, are printed side by side.
#   bench/memberof_nested.sh   (NU=100000 NG=10000 CHANGES=200; KEEP=1 keeps the temp dir)
# Not part of make test. Needs slapd, ldap-utils.
. "$(dirname "$0")/replica_lib.sh" # with bench/lib.sh: set -u, the tree's root
NU=${NU:-100000}
NG=${NG:-10000}
CHANGES=${CHANGES:-200}
need "$SLAPD" "$SLAPADD" ldapsearch ldapmodify "$BUILD/minidir"
bench_init memberof_nested

pport=$(free_port) onport=$(free_port) offport=$(free_port)
PROV=ldap://127.0.0.1:$pport
G=ou=groups,$EX
slapd_conf "$work/provider.conf" "$work/provider-db" "$(slapd_db_lines)"
t0=$(now_ms)
{ bench/gen-ldif.sh "$NU" "$EX"; bench/memberof_nested_groups.sh "$NG" "$NU" "$EX"; } > "$work/data.ldif"
timeout 900 "$SLAPADD" -q -f "$work/provider.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 ||
	die "slapadd: $(tail -3 "$work/slapadd.log")"
slapd_start provider "$pport"
echo "# provider: $NU users, $NG nested groups (slapadd $(($(now_ms) - t0)) ms)"

replica_conf on "$onport" "$PROV" "memberof_nested = yes"
replica_conf off "$offport" "$PROV" "memberof_nested = no"
t0=$(now_ms)
replica_start on "$onport"
onpid=$rpid
replica_start off "$offport"
offpid=$rpid
last="cn=g.$((NG - 1)),$G"
wait_value "ldap://127.0.0.1:$onport" "$last" cn "g.$((NG - 1))" 900 || die "nested replica: no refresh"
wait_value "ldap://127.0.0.1:$offport" "$last" cn "g.$((NG - 1))" 900 || die "direct replica: no refresh"
echo "# both replicas refreshed in $(($(now_ms) - t0)) ms"
# A settled start: no refresh work left in either.
sleep 2

# The changes: group i gets member group j (a random other one), then loses it.
awk -v n="$CHANGES" -v ng="$NG" -v g="$G" 'BEGIN {
	srand(27)
	for (c = 0; c < n; c += 2) {
		i = int(rand() * ng); j = int(rand() * ng); if (j == i) j = (i + 1) % ng
		printf "dn: cn=g.%d,%s\nchangetype: modify\nadd: member\nmember: cn=g.%d,%s\n\n", i, g, j, g
		printf "dn: cn=g.%d,%s\nchangetype: modify\ndelete: member\nmember: cn=g.%d,%s\n\n", i, g, j, g
	}
	printf "dn: cn=g.0,%s\nchangetype: modify\nreplace: description\ndescription: done\n\n", g
}' > "$work/changes.ldif"
on0=$(cpu_ticks "$onpid") off0=$(cpu_ticks "$offpid")
t0=$(now_ms)
timeout 600 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret -f "$work/changes.ldif" > "$work/mod.log" 2>&1 ||
	die "ldapmodify: $(tail -3 "$work/mod.log")"
declare -A wall
for r in on off; do
	p=$onport
	[ $r = off ] && p=$offport
	wait_value "ldap://127.0.0.1:$p" "cn=g.0,$G" description "done" 600 || die "$r: the changes did not arrive"
	wall[$r]=$(($(now_ms) - t0))
done
on1=$(cpu_ticks "$onpid") off1=$(cpu_ticks "$offpid")
hz=$(getconf CLK_TCK)
per() { awk -v v="$1" -v n="$((CHANGES + 1))" 'BEGIN{printf "%.2f", v / n}'; }
echo "# $((CHANGES + 1)) changes (the last the marker), $NU users, $NG groups"
printf '%-22s %16s %16s\n' "" "nested (yes)" "direct (no)"
printf '%-22s %16s %16s\n' "wall ms until visible" "${wall[on]}" "${wall[off]}"
printf '%-22s %16s %16s\n' "wall ms per change" "$(per "${wall[on]}")" "$(per "${wall[off]}")"
printf '%-22s %16s %16s\n' "CPU ms per change" "$(per $(((on1 - on0) * 1000 / hz)))" "$(per $(((off1 - off0) * 1000 / hz)))"
