#!/usr/bin/env bash
# What a replica (server/replica.c) does with a refresh it cannot apply in the order it
# comes, against a real provider (tests/integration/provider.sh: slapd with syncprov).
# A move under a new parent made while the replica is stopped, or between two refreshOnly
# refreshes: slapd's resumed refresh sends entries in entry-ID order, the moved entry
# before its new parent. The replica must apply it anyway (the entry is held until its
# parent has come), in refreshAndPersist across a restart and in refreshOnly, and report
# its stored cookie (cn=replication's and the root DSE's contextCSN) from the start of a
# run, before any commit.
# An entry over 16 MiB (ENTRY_MAX_BYTES) on the provider: skipped (its stored copy and
# what is below it deleted), logged with its DN, counted in cn=replication; later changes
# arrive, a fresh replica serves the rest, and once the entry shrinks it is replicated
# again, with the entry below it. A 4 KB DN (more than a key can hold): skipped the same way.
# A full disk: reported as what it is, retried with a backoff.
# Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir replica_apply
provider_setup || finish
# The rootdn's ldapadd of a 17 MB entry (slapd's default allows 4 MiB).
sed -i "/^database mdb/i sockbuf_max_incoming_auth 67108864" "$work/slapd.conf"
provider_start || finish
PROV=ldap://127.0.0.1:$port

replica_start() { # NAME: sets $rpid, $rlog, $REP
	replica_run "$1"
	REP=ldap://127.0.0.1:$(wait_port "$rlog")
}
monitor() { # ATTR: the replica's cn=replication,cn=monitor value
	timeout 5 ldapsearch -x -H "$REP" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
		-b cn=replication,cn=monitor -s base "$1" 2> /dev/null | sed -n "s/^$1: //p"
}
pmod() { timeout 30 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret "$@" > "$work/pmod.log" 2>&1; }

# move_under_new_branch N: on the provider, ou=Branch N is added, then an older entry
# (uid=N's person) moved under it, with ldapmodrdn -s, as an admin would.
move_under_new_branch() {
	printf 'dn: ou=Branch %s,%s\nchangetype: add\nobjectClass: organizationalUnit\nou: Branch %s\n' \
		"$1" "$EX" "$1" | pmod || { not_ok "adding ou=Branch $1: $(cat "$work/pmod.log")"; return 1; }
	timeout 10 ldapmodrdn -x -H "$PROV" -D "$ADMIN" -w secret -s "ou=Branch $1,$EX" \
		"uid=$2,ou=people,$EX" "uid=$2" > "$work/pmod.log" 2>&1 ||
		{ not_ok "moving uid=$2 under ou=Branch $1: $(cat "$work/pmod.log")"; return 1; }
}

# moved_then_later WHAT UID: the replica converges after the move (the log line of its
# refresh shows the entry that waited), then a later change (uid=UID's title) arrives.
moved_then_later() {
	if converge 15; then
		ok "$1: converged in ${took}s ($(grep -o 'refresh done.*' "$rlog" | tail -1))"
	else
		not_ok "$1: $(cat "$work/diff"); $(grep syncrepl "$rlog" | tail -3); state $(monitor replicationState)"
	fi
	printf 'dn: uid=%s,ou=people,%s\nchangetype: modify\nreplace: title\ntitle: after the move\n' "$2" "$EX" | pmod
	converge 10 && ok "$1: a later change arrives (${took}s), state $(monitor replicationState)" ||
		not_ok "$1, a later change: $(cat "$work/diff"); state $(monitor replicationState)"
}

# 1. refreshAndPersist: converged, stopped; the move while it is down; started again.
replica_conf rp refreshAndPersist
replica_start rp
converge 20 || not_ok "first refresh: $(cat "$work/diff")"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
move_under_new_branch 1 alice
replica_start rp
moved_then_later "refreshAndPersist, a move under a new ou made while the replica was down" bob

# 2. A restart reports the stored cookie at once: cn=replication's cookie and the root
# DSE's contextCSN, before the first commit of the run (with the provider stopped, no
# commit comes).
cookie=$(monitor replicationCookie)
csn=$(timeout 5 ldapsearch -x -H "$REP" -LLL -b "" -s base contextCSN | sed -n 's/^contextCSN: //p')
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
kill "$spid" && wait "$spid" 2> /dev/null
replica_start rp
got_cookie=$(monitor replicationCookie)
got_csn=$(timeout 5 ldapsearch -x -H "$REP" -LLL -b "" -s base contextCSN | sed -n 's/^contextCSN: //p')
if [ -n "$cookie" ] && [ "$got_cookie" = "$cookie" ] && [ -n "$csn" ] && [ "$got_csn" = "$csn" ]; then
	ok "restarted with the provider down: cn=replication's cookie and the root DSE's contextCSN ($got_csn) are the stored ones from the start"
else
	not_ok "after a restart: cookie '$got_cookie' (stored '$cookie'), contextCSN '$got_csn' (stored '$csn')"
fi
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
provider_start "${PROV##*:}" || finish

# 3. refreshOnly: the move between two refreshes (interval 2 s).
replica_conf ro refreshOnly
replica_start ro
converge 20 || not_ok "refreshOnly first refresh: $(cat "$work/diff")"
move_under_new_branch 2 carol
moved_then_later "refreshOnly, a move under a new ou between two refreshes" dave
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 4. A fresh replica of that provider (no database file): the full refresh comes in
# entry-ID order too (both moved entries before their parents).
replica_conf fresh refreshAndPersist
replica_start fresh
converge 20 && ok "a fresh replica: the full refresh converged in ${took}s" ||
	not_ok "fresh replica: $(cat "$work/diff"); $(grep syncrepl "$rlog" | tail -3)"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 5. A parent that never comes (the replica's filter leaves ou=Branch 3 out, and an entry
# is moved under it): that entry is skipped with a log line and counted in cn=monitor;
# the refresh ends and later changes arrive.
replica_conf nop refreshAndPersist
sed -i 's/searchbase="'"$EX"'"/& filter="(!(ou=Branch 3))"/' "$work/nop.conf"
replica_start nop
converge 20 || not_ok "filtered replica, first refresh: $(cat "$work/diff")"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
move_under_new_branch 3 eve
replica_start nop
printf 'dn: uid=frank,ou=people,%s\nchangetype: modify\nreplace: title\ntitle: after the orphan\n' "$EX" | pmod
got=
for _ in $(seq 1 100); do
	got=$(timeout 5 ldapsearch -x -H "$REP" -LLL -b "uid=frank,ou=people,$EX" -s base title 2> /dev/null | sed -n 's/^title: //p')
	[ "$got" = "after the orphan" ] && break
	sleep 0.1
done
skipped=$(monitor replicationSkippedEntries)
last=$(monitor replicationLastSkipped)
if [ "$got" = "after the orphan" ] && [ "$skipped" = 1 ] && [ "$last" = "uid=eve,ou=Branch 3,$EX" ] &&
	grep -q "entry \"uid=eve,ou=Branch 3,$EX\" not stored, skipped: its parent entry did not come" "$rlog" &&
	[ "$(monitor replicationState)" = persisting ]; then
	ok "an entry whose parent never comes: skipped ($last, replicationSkippedEntries $skipped, logged), later changes arrive"
else
	not_ok "orphan: frank's title '$got', skipped '$skipped', last '$last', state $(monitor replicationState): $(grep syncrepl "$rlog" | tail -3)"
fi
# ... and persisting: an entry added under that ou (the change stream, in the provider's
# order) is skipped the same way, and the stream goes on.
printf 'dn: cn=late,ou=Branch 3,%s\nchangetype: add\nobjectClass: organizationalRole\ncn: late\n\ndn: uid=frank,ou=people,%s\nchangetype: modify\nreplace: title\ntitle: after the late orphan\n' "$EX" "$EX" | pmod
for _ in $(seq 1 100); do
	got=$(timeout 5 ldapsearch -x -H "$REP" -LLL -b "uid=frank,ou=people,$EX" -s base title 2> /dev/null | sed -n 's/^title: //p')
	[ "$got" = "after the late orphan" ] && break
	sleep 0.1
done
if [ "$got" = "after the late orphan" ] && [ "$(monitor replicationSkippedEntries)" = 2 ] &&
	grep -q "entry \"cn=late,ou=Branch 3,$EX\" not stored, skipped: its parent entry does not exist" "$rlog"; then
	ok "persisting, an entry added under a parent that is not replicated: skipped, counted, logged; the next change arrives"
else
	not_ok "persisting orphan: frank's title '$got', skipped '$(monitor replicationSkippedEntries)', state $(monitor replicationState): $(grep syncrepl "$rlog" | tail -3)"
fi
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 6. An entry over 16 MiB: uid=big (with an entry below it) is replicated, then gets a
# 17 MB jpegPhoto on the provider.
replica_conf big refreshAndPersist
replica_start big
pmod << EOF
dn: uid=big,ou=people,$EX
changetype: add
objectClass: inetOrgPerson
uid: big
cn: Big
sn: Big

dn: cn=below,uid=big,ou=people,$EX
changetype: add
objectClass: organizationalRole
cn: below
EOF
converge 20 || not_ok "before the big entry: $(cat "$work/diff")"
head -c 17000000 /dev/zero | tr '\0' 'x' > "$work/photo.bin"
printf 'dn: uid=big,ou=people,%s\nchangetype: modify\nadd: jpegPhoto\njpegPhoto:< file://%s\n' "$EX" "$work/photo.bin" | pmod ||
	not_ok "the 17 MB jpegPhoto on the provider: $(cat "$work/pmod.log")"
printf 'dn: uid=grace,ou=people,%s\nchangetype: modify\nreplace: title\ntitle: after the big one\n' "$EX" | pmod
title() { # URI: grace's title
	timeout 5 ldapsearch -x -H "$1" -LLL -b "uid=grace,ou=people,$EX" -s base title 2> /dev/null | sed -n 's/^title: //p'
}
exists() { # URI DN: 0 when the entry is there
	timeout 5 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -b "$2" -s base 1.1 2> /dev/null | grep -q "^dn:"
}
wait_title() { # URI
	got=
	for _ in $(seq 1 150); do
		got=$(title "$1")
		[ "$got" = "after the big one" ] && return 0
		sleep 0.1
	done
	return 1
}
BIG="uid=big,ou=people,$EX"
if wait_title "$REP" && ! exists "$REP" "$BIG" && ! exists "$REP" "cn=below,$BIG" &&
	[ "$(monitor replicationSkippedEntries)" = 1 ] && [ "$(monitor replicationLastSkipped)" = "$BIG" ] &&
	grep -q "entry \"$BIG\" not stored, skipped: .*too large.*stored copy deleted (2 entries" "$rlog"; then
	ok "an entry grown over 16 MiB: skipped, its stored copy and the entry below it deleted, counted ($(monitor replicationLastSkippedReason)); a later change arrives"
else
	not_ok "17 MB entry: grace's title '$got', big there: $(exists "$REP" "$BIG" && echo yes || echo no), skipped '$(monitor replicationSkippedEntries)', state $(monitor replicationState): $(grep syncrepl "$rlog" | tail -3)"
fi
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# A fresh replica while the big entry is there: everything else is served.
replica_conf big2 refreshAndPersist
replica_start big2
if wait_title "$REP" && ! exists "$REP" "$BIG" && exists "$REP" "uid=alice,ou=Branch 1,$EX" &&
	[ "$(monitor replicationSkippedEntries)" = 2 ] && [ "$(monitor replicationState)" = persisting ]; then
	ok "a fresh replica beside the 17 MB entry: serves the rest, 2 skipped (the entry, and the one below it whose parent never came)"
else
	not_ok "fresh replica beside the big entry: title '$got', skipped '$(monitor replicationSkippedEntries)', state $(monitor replicationState): $(grep syncrepl "$rlog" | tail -3)"
fi

# The entry shrinks: replicated again, and the entry below it with it (a full refresh).
printf 'dn: %s\nchangetype: modify\ndelete: jpegPhoto\n' "$BIG" | pmod
if converge 20; then
	ok "the entry shrinks under 16 MiB: replicated with the entry below it in ${took}s ($(grep -o 'a full refresh follows' "$rlog" | head -1))"
else
	not_ok "after the shrink: $(cat "$work/diff"); $(grep syncrepl "$rlog" | tail -3)"
fi
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
# The first replica, started again on its file: picks it up from its cookie.
replica_start big
converge 20 && ok "the first replica restarted: converged in ${took}s" ||
	not_ok "first replica after the shrink: $(cat "$work/diff"); $(grep syncrepl "$rlog" | tail -3)"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 6b. A DN longer than a key can be (LMDB: 511 bytes; slapd stores DNs by RDN and takes
# it; its own bound is about 250 bytes an RDN): a chain of 20 ous of 200-byte names, the
# last DN 4 KB, added on the provider. The first two fit; the 18 below are skipped as a
# too-large entry is, logged with the limit,
# counted; later changes arrive; a search of the 4 KB DN is noSuchObject (32), not an
# error (before: MDB_BAD_VALSIZE, the replica retrying for ever, nothing after it served).
replica_start big
skipped_before=$(monitor replicationSkippedEntries)
LONG=$EX long_dns=()
for i in $(seq 10 29); do
	LONG="ou=$(printf 'l%.0s' $(seq 1 200))$i,$LONG"
	long_dns=("$LONG" "${long_dns[@]}")
	printf 'dn: %s\nchangetype: add\nobjectClass: organizationalUnit\n\n' "$LONG" | pmod ||
		not_ok "adding a ${#LONG}-byte DN on the provider: $(cut -c1-200 "$work/pmod.log")"
done
printf 'dn: uid=grace,ou=people,%s\nchangetype: modify\nreplace: title\ntitle: after the long DN\n' "$EX" | pmod
got=
for _ in $(seq 1 150); do
	got=$(title "$REP")
	[ "$got" = "after the long DN" ] && break
	sleep 0.1
done
rc=0
timeout 5 ldapsearch -x -H "$REP" -LLL -b "$LONG" -s base 1.1 > /dev/null 2>&1 || rc=$?
if [ "$got" = "after the long DN" ] && [ "$rc" = 32 ] && [ "${#LONG}" -gt 4000 ] &&
	exists "$REP" "${long_dns[18]}" && ! exists "$REP" "${long_dns[17]}" &&
	[ "$(monitor replicationSkippedEntries)" = $((skipped_before + 18)) ] &&
	grep -q "not stored, skipped: .*its DN is [0-9]* bytes as a key, more than the 511" "$rlog"; then
	ok "DNs past 511 bytes on the provider (the last ${#LONG}): skipped, logged with the limit, counted (18); the first two stored; a later change arrives; a search of the longest: 32"
else
	not_ok "long DNs: grace's title '$got', search rc $rc, skipped '$(monitor replicationSkippedEntries)' (was $skipped_before), state $(monitor replicationState): $(grep syncrepl "$rlog" | tail -2 | cut -c1-300)"
fi
for dn in "${long_dns[@]}"; do
	timeout 10 ldapdelete -x -H "$PROV" -D "$ADMIN" -w secret "$dn" > /dev/null 2>&1 ||
		not_ok "deleting a long DN on the provider"
done
converge 20 && ok "the long DNs deleted on the provider: converged in ${took}s" ||
	not_ok "after deleting the long DNs: $(cat "$work/diff")"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 7. A full disk: the replica's database on a 512 KiB tmpfs in a private mount namespace
# (unshare, as core_test.sh's import case), the provider holding more than that. The log says
# what it is (No space left on device, not LMDB's "Input/output error"), no "refresh
# done" for a refresh that did not commit, and the retries back off (1, 2, 4 s with
# retry="1 +") instead of a whole refresh every second; the server goes on answering.
bench/gen-ldif.sh 1500 "$EX" 400 | awk 'BEGIN{RS=""; ORS="\n\n"} NR>2' > "$work/more.ldif"
pmod -a -f "$work/more.ldif" || not_ok "adding 1,500 entries on the provider: $(tail -3 "$work/pmod.log")"
replica_conf full refreshAndPersist
mkdir -p "$work/small"
sed -i "s#^database = .*#database = $work/small/full.mdb#" "$work/full.conf"
# shellcheck disable=SC2016  # the script sh -c runs: its own $1, $2 and $3
full_disk='mount -t tmpfs -o size=512k tmpfs "$1" && exec "$2/minidir" -f "$3"'
for how in -rm -m; do
	rlog=$work/full$how.log
	: > "$rlog"
	unshare $how sh -c "$full_disk" sh "$work/small" "$BUILD" "$work/full.conf" > "$rlog" 2>&1 &
	rpid=$!
	pids+=("$rpid")
	rport=$(wait_port "$rlog")
	[ -n "$rport" ] && break
	wait "$rpid" 2> /dev/null
done
if [ -z "$rport" ]; then
	not_ok "full disk: no private tmpfs could be mounted (unshare -rm / -m): $(tail -2 "$rlog")"
else
	REP=ldap://127.0.0.1:$rport
	# The third failure's line: after 1 + 2 s of waiting and three refreshes, each of which
	# took 8 s under ThreadSanitizer on a slow machine (ci44: 20 s were not enough), and 30 s
	# on a loaded one (load average 5 on 2 cores: 60 s were not enough).
	for _ in $(seq 1 1800); do
		grep -q "retrying in 4 s" "$rlog" && break
		sleep 0.1
	done
	fails=$(grep -c "could not be written (No space left on device); retrying in" "$rlog")
	if grep -q "No space left on device" "$rlog" && ! grep -q "Input/output error" "$rlog" &&
		! grep -q "refresh done" "$rlog" && grep -q "retrying in 2 s" "$rlog" && grep -q "retrying in 4 s" "$rlog" &&
		timeout 5 ldapsearch -x -H "$REP" -LLL -b "" -s base 1.1 > /dev/null 2>&1; then
		ok "a full disk: '$(grep -o 'error: syncrepl.*' "$rlog" | head -1)', $fails retries backing off (1, 2, 4 s), no refresh reported done, the server answers"
	else
		not_ok "full disk: $(grep syncrepl "$rlog" | tail -4)"
	fi
	stop_checked "$rpid" "$rlog" || not_ok "stop on a full disk: $stop_why"
fi

stop_checked "$spid" "$work/slapd.log" || not_ok "slapd: $stop_why"
finish
