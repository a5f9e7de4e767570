#!/usr/bin/env bash
# Nested memberOf on a replica (memberof_nested = yes, storage/memberof_nested.h) of a
# real provider (tests/integration/provider.sh: slapd with syncprov): groups put into
# groups, taken out, renamed, made into a cycle and deleted on the provider; after each
# change has arrived, every entry's memberOf and every (memberOf=G) answer of the replica
# match the closure tests/integration/memberof_closure.py computes from the provider's
# member values. Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir memberof_nested
provider_setup || finish
provider_start || finish
PROV=ldap://127.0.0.1:$port
replica_conf rn refreshAndPersist "memberof_nested = yes"
replica_run rn
REP=ldap://127.0.0.1:$(wait_port "$rlog")
G=ou=groups,$EX
pmod() { timeout 30 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > "$work/pmod.log" 2>&1; }

# check WHAT: converged, then the closure matches.
check() {
	if ! converge 20; then
		not_ok "$1: the replica did not converge: $(cat "$work/diff")"
		return
	fi
	if out=$(timeout 60 "$PYTHON" tests/integration/memberof_closure.py "$PROV" "$REP" "$EX" "$ADMIN" secret 2>&1); then
		ok "$1: $out"
	else
		not_ok "$1: $(echo "$out" | head -5)"
	fi
}

check "first refresh"
printf 'dn: cn=top,%s\nchangetype: add\nobjectClass: groupOfNames\ncn: top\nmember: cn=mid,%s\n\ndn: cn=mid,%s\nchangetype: add\nobjectClass: groupOfUniqueNames\ncn: mid\nuniqueMember: cn=admins,%s\nuniqueMember: uid=alice,ou=people,%s\n' \
	"$G" "$G" "$G" "$G" "$EX" | pmod || not_ok "adding groups: $(cat "$work/pmod.log")"
check "a group in a group in a group (one added before its member group)"
printf 'dn: cn=admins,%s\nchangetype: modify\nadd: member\nmember: cn=engineering,%s\n' "$G" "$G" | pmod ||
	not_ok "adding engineering to admins: $(cat "$work/pmod.log")"
check "a group added to a group three levels down"
printf 'dn: cn=engineering,%s\nchangetype: modify\nadd: member\nmember: cn=top,%s\n' "$G" "$G" | pmod ||
	not_ok "the cycle: $(cat "$work/pmod.log")"
check "a cycle top > mid > admins > engineering > top"
printf 'dn: cn=mid,%s\nchangetype: modify\ndelete: uniqueMember\nuniqueMember: cn=admins,%s\n' "$G" "$G" | pmod ||
	not_ok "removing admins from mid: $(cat "$work/pmod.log")"
check "a group taken out of a group"
timeout 10 ldapmodrdn -x -H "$PROV" -D "$ADMIN" -w secret -r "cn=top,$G" "cn=summit" > "$work/pmod.log" 2>&1 ||
	not_ok "renaming top: $(cat "$work/pmod.log")"
check "a group renamed (its members keep it under the new DN)"
timeout 10 ldapmodrdn -x -H "$PROV" -D "$ADMIN" -w secret -r "uid=alice,ou=people,$EX" "uid=alicia" > "$work/pmod.log" 2>&1 ||
	not_ok "renaming alice: $(cat "$work/pmod.log")"
check "a member renamed (out of mid: its value names no entry any more)"
timeout 10 ldapdelete -x -H "$PROV" -D "$ADMIN" -w secret "cn=mid,$G" > "$work/pmod.log" 2>&1 ||
	not_ok "deleting mid: $(cat "$work/pmod.log")"
check "a group in the middle deleted"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
finish
