#!/usr/bin/env bash
# chain_passwd: password changes through a replica (server/ops/op_chain.c,
# server/replica/chain.c). A slapd provider (tests/integration/provider.sh) that lets users
# write their own userPassword and hashes it ({SSHA}); minidir replicas with
# chain_passwd = yes. ldappasswd to a replica, then at once ldapwhoami with the new
# password on that replica, 100 times in a row; the same through HAProxy in front of two
# replicas (balance source: one client stays on one replica); a password the provider
# generates; ldapmodify of one's own userPassword; the provider's own errors (a wrong old
# password, an anonymous change) returned as it gives them; another user's userPassword
# still referred; the forwarded changes bounded (busy past a user's share of them, a bind
# password over 256 bytes not kept); the provider
# down: unavailable (52) within a bound; chain_passwd off: today's answers; chain_passwd
# without syncrepl refused with file:line. Every server is stopped by PID; every wait is
# bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}

use_work_dir chain
PEOPLE=ou=people,$EX
ALICE=uid=alice,$PEOPLE
BOB=uid=bob,$PEOPLE

pport='' rport='' hport='' rrport='' # set by pick_port (lib.sh)

# 0. chain_passwd needs a replica: refused with file:line.
cat > "$work/plain.conf" << EOF
database = $work/none.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
chain_passwd = yes
EOF
out=$("$BUILD/minidir" -t -f "$work/plain.conf" 2>&1)
rc=$?
case $rc:$out in
0:*) not_ok "chain_passwd without syncrepl was accepted" ;;
*"$work/plain.conf:4: chain_passwd"*"needs syncrepl"*) ok "chain_passwd = yes without syncrepl: refused with file:line" ;;
*) not_ok "chain_passwd without syncrepl: rc $rc: $out" ;;
esac

# The provider: users write their own userPassword, which slapd hashes ({SSHA}); it speaks
# ldaps:// too (port + 1), with throwaway certificates.
if ! tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1; then
	not_ok "tls_certs.sh: $(cat "$work/certs.log")"
	finish
fi
provider_setup || finish
sed -i "/^database mdb/i password-hash {SSHA}" "$work/slapd.conf"
sed -i "/^pidfile/i TLSCACertificateFile $work/pki/ca.pem\nTLSCertificateFile $work/pki/server.pem\nTLSCertificateKeyFile $work/pki/server.key" \
	"$work/slapd.conf"
PROVIDER_LDAPS=1
cat >> "$work/slapd.conf" << 'EOF'
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
EOF
pick_port pport 2 || finish
provider_start "$pport" || finish
PROV=ldap://127.0.0.1:$port

# replica NAME [LINES [PROVIDER]]: a refreshAndPersist replica of PROVIDER (syncrepl words;
# default $PROV) on a port of its own, started, its first refresh done; sets $rpid, $rport,
# $rlog.
replica() {
	replica_conf "$1" refreshAndPersist "${2:-}"
	pick_port rport || return 1
	sed -i -e "s/^listen = .*/listen = 127.0.0.1:$rport/" \
		-e "s#provider=$PROV #provider=${3:-$PROV} #" "$work/$1.conf"
	replica_run "$1"
	[ -n "$(wait_port "$rlog")" ] || { not_ok "$1 did not start: $(tail -3 "$rlog")"; return 1; }
	# its first refresh: alice is there
	for _ in $(seq 1 100); do
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$rport" -LLL -b "$ALICE" -s base 1.1 2> /dev/null |
			grep -q "^dn:" && return 0
		sleep 0.1
	done
	not_ok "$1: no first refresh: $(tail -3 "$rlog")"
	return 1
}
replica a "chain_passwd = yes
updateref = $PROV" || finish
apid=$rpid aport=$rport alog=$rlog A=ldap://127.0.0.1:$rport
replica b "chain_passwd = yes
chain_wait_ms = 3000" || finish
bpid=$rpid bport=$rport blog=$rlog
replica off "updateref = $PROV" || finish
opid=$rpid olog=$rlog OFF=ldap://127.0.0.1:$rport

# The root DSE says so with chain_passwd only.
ext() { timeout 5 ldapsearch -x -H "$1" -LLL -b "" -s base supportedExtension 2> /dev/null | grep -c "1.3.6.1.4.1.4203.1.11.1"; }
[ "$(ext "$A")" = 1 ] && [ "$(ext "$OFF")" = 0 ] &&
	ok "supportedExtension lists Password Modify with chain_passwd, not without" ||
	not_ok "supportedExtension: Password Modify $(ext "$A") with, $(ext "$OFF") without chain_passwd"

# passwd_loop URI N WHO: N times ldappasswd from the current to the other password, then
# at once ldapwhoami with the new one, all through URI; $pw is the current password after.
# Sets $failed (the first failure, "" when none) and $secs (the time it took).
passwd_loop() {
	local uri=$1 n=$2 who=$3 new out t0 i
	failed=
	t0=$(date +%s%N)
	for i in $(seq 1 "$n"); do
		new="$who-pw-$i-$RANDOM"
		if ! out=$(timeout 20 ldappasswd -x -H "$uri" -D "uid=$who,$PEOPLE" -w "$pw" -s "$new" 2>&1); then
			failed="round $i: ldappasswd: $out"
			break
		fi
		pw=$new
		if ! out=$(timeout 20 ldapwhoami -x -H "$uri" -D "uid=$who,$PEOPLE" -w "$new" 2>&1); then
			failed="round $i: ldapwhoami with the new password: $out"
			break
		fi
	done
	secs=$(awk -v n=$(($(date +%s%N) - t0)) 'BEGIN{printf "%.1f", n/1e9}')
}

# 1. ldappasswd to the replica, then at once a bind with the new password there: 100 times.
pw=alice-secret
passwd_loop "$A" 100 alice
[ -z "$failed" ] && awk -v s="$secs" 'BEGIN{exit !(s < 120)}' &&
	ok "ldappasswd then ldapwhoami with the new password on the same replica: 100 of 100 in ${secs}s" ||
	not_ok "ldappasswd through the replica: ${failed:-took ${secs}s}"
# The change is the provider's: a bind there with the last password.
timeout 10 ldapwhoami -x -H "$PROV" -D "$ALICE" -w "$pw" > /dev/null 2>&1 &&
	ok "the provider has the password set through the replica" ||
	not_ok "the provider does not take the password set through the replica"

# 2. A password the provider generates: its genPasswd comes back and binds at once.
out=$(timeout 20 ldappasswd -x -H "$A" -D "$ALICE" -w "$pw" 2>&1)
gen=$(sed -n 's/^New password: //p' <<< "$out")
if [ -n "$gen" ] && timeout 10 ldapwhoami -x -H "$A" -D "$ALICE" -w "$gen" > /dev/null 2>&1; then
	ok "a generated password: the provider's genPasswd returned, and it binds on the replica at once"
	pw=$gen
else
	not_ok "generated password: '$out'"
fi

# 3. ldapmodify of one's own userPassword: forwarded too, and binds at once.
new=alice-modify-$RANDOM
out=$(printf 'dn: %s\nchangetype: modify\nreplace: userPassword\nuserPassword: %s\n' "$ALICE" "$new" |
	timeout 20 ldapmodify -x -H "$A" -D "$ALICE" -w "$pw" 2>&1)
rc=$?
if [ "$rc" = 0 ] && timeout 10 ldapwhoami -x -H "$A" -D "$ALICE" -w "$new" > /dev/null 2>&1; then
	ok "ldapmodify of the bound user's own userPassword: forwarded, the new password binds at once"
	pw=$new
else
	not_ok "ldapmodify of one's own userPassword: rc $rc: $out"
fi

# 4. The provider's errors, as it gives them: a wrong old password; an anonymous change.
# result LDAP-TOOL-OUTPUT: its "Result: ..." and "Additional info: ..." lines.
result() { grep -E "^(Result|Additional info):|^ldap_.*: " <<< "$1" | sed 's/ (.*)$//' | tr '\n' ' '; }
p_out=$(timeout 20 ldappasswd -x -H "$PROV" -D "$ALICE" -w "$pw" -a wrong-old -s whatever 2>&1)
p_rc=$?
r_out=$(timeout 20 ldappasswd -x -H "$A" -D "$ALICE" -w "$pw" -a wrong-old -s whatever 2>&1)
r_rc=$?
[ "$p_rc" != 0 ] && [ "$r_rc" = "$p_rc" ] && [ "$(result "$r_out")" = "$(result "$p_out")" ] &&
	ok "a wrong old password: the provider's answer, rc $r_rc: $(result "$r_out")" ||
	not_ok "wrong old password: provider rc $p_rc '$(result "$p_out")', replica rc $r_rc '$(result "$r_out")'"
p_out=$(timeout 20 ldappasswd -x -H "$PROV" -s whatever 2>&1)
p_rc=$?
r_out=$(timeout 20 ldappasswd -x -H "$A" -s whatever 2>&1)
r_rc=$?
[ "$p_rc" != 0 ] && [ "$r_rc" = "$p_rc" ] && [ "$(result "$r_out")" = "$(result "$p_out")" ] &&
	ok "an anonymous Password Modify: as slapd answers it, rc $r_rc: $(result "$r_out")" ||
	not_ok "anonymous Password Modify: slapd rc $p_rc '$(result "$p_out")', replica rc $r_rc '$(result "$r_out")'"
timeout 10 ldapwhoami -x -H "$A" -D "$ALICE" -w "$pw" > /dev/null 2>&1 ||
	not_ok "alice's password changed by a refused change"

# 5. Other writes still get the referral: another user's userPassword, one's own other attributes.
for what in "$BOB userPassword" "$ALICE description"; do
	dn=${what% *} attr=${what##* }
	out=$(printf 'dn: %s\nchangetype: modify\nreplace: %s\n%s: x\n' "$dn" "$attr" "$attr" |
		timeout 20 ldapmodify -x -H "$A" -D "$ALICE" -w "$pw" 2>&1)
	rc=$?
	[ "$rc" = 10 ] && grep -q "$PROV" <<< "$out" &&
		ok "a modify of $attr of $dn as alice: still the referral to the provider (10)" ||
		not_ok "modify of $attr of $dn: rc $rc: $out"
done

# 6. chain_passwd off: today's answers (Password Modify unsupported: protocolError; a
# modify of one's own userPassword referred).
out=$(timeout 20 ldappasswd -x -H "$OFF" -D "$ALICE" -w "$pw" -s whatever 2>&1)
grep -q "^Result: Protocol error (2)" <<< "$out" &&
	ok "chain_passwd off: Password Modify is a protocolError (2), as before" ||
	not_ok "chain_passwd off: ldappasswd: $out"
out=$(printf 'dn: %s\nchangetype: modify\nreplace: userPassword\nuserPassword: x\n' "$ALICE" |
	timeout 20 ldapmodify -x -H "$OFF" -D "$ALICE" -w "$pw" 2>&1)
rc=$?
[ "$rc" = 10 ] && ok "chain_passwd off: a modify of one's own userPassword is referred (10), as before" ||
	not_ok "chain_passwd off: modify rc $rc: $out"

# 7. Through HAProxy in front of replicas a and b, 100 times: balance source keeps a client
# on one replica, so the bind lands where the change was waited for.
pick_port hport && pick_port rrport || finish
cat > "$work/haproxy.cfg" << EOF
global
	pidfile $work/haproxy.pid
defaults
	mode tcp
	timeout connect 2s
	timeout client 30s
	timeout server 30s
frontend source
	bind 127.0.0.1:$hport
	default_backend source
frontend roundrobin
	bind 127.0.0.1:$rrport
	default_backend roundrobin
backend source
	balance source
	server a 127.0.0.1:$aport
	server b 127.0.0.1:$bport
backend roundrobin
	balance roundrobin
	server a 127.0.0.1:$aport
	server b 127.0.0.1:$bport
EOF
"$HAPROXY" -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
hpid=$!
pids+=("$hpid")
for _ in $(seq 1 100); do
	timeout 2 ldapsearch -x -H "ldap://127.0.0.1:$hport" -LLL -b "" -s base 1.1 > /dev/null 2>&1 && break
	sleep 0.05
done
passwd_loop "ldap://127.0.0.1:$hport" 100 alice
[ -z "$failed" ] && ok "through HAProxy (balance source, two chained replicas): ldappasswd then an immediate bind, 100 of 100 in ${secs}s" ||
	not_ok "through HAProxy (balance source): $failed"
# roundrobin sends the bind to the other replica, which waited for nothing: what a pool
# without source affinity gets (reported, not required: it depends on replication's speed).
late=0
for i in $(seq 1 20); do
	new=alice-rr-$i-$RANDOM
	timeout 20 ldappasswd -x -H "ldap://127.0.0.1:$rrport" -D "$ALICE" -w "$pw" -s "$new" > /dev/null 2>&1 || break
	pw=$new
	timeout 20 ldapwhoami -x -H "ldap://127.0.0.1:$rrport" -D "$ALICE" -w "$new" > /dev/null 2>&1 || late=$((late + 1))
done
echo "# roundrobin: $late of 20 immediate binds on the other replica came before the change"

# 8. A provider URL of ldaps:// (its TLS port only): the change goes over TLS, as the
# consumer's connection does.
replica tls "chain_passwd = yes" "ldaps://127.0.0.1:$((port + 1)) tls_cacert=$work/pki/ca.pem" || finish
tpid=$rpid tlog=$rlog
passwd_loop "ldap://127.0.0.1:$rport" 10 alice
[ -z "$failed" ] && ok "a provider at ldaps://: forwarded over TLS, then an immediate bind, 10 of 10" ||
	not_ok "provider at ldaps://: $failed; $(grep -E "chain|syncrepl" "$tlog" | tail -2)"
stop_checked "$tpid" "$tlog" || not_ok "stop $tlog: $stop_why"

# 9. A share of the slots per user (CHAIN_MAX_JOBS_PER_USER, 2) within CHAIN_MAX_JOBS (16):
# with the provider stopped (SIGSTOP: connections hang), bob sends 6 changes at once: 2 are
# queued, 4 busy (51) at once, naming his earlier changes; alice's change meanwhile is
# queued, not busy (before: bob's first 16 held every slot and alice got 51). Once the
# provider runs again the queued ones go through (each sets the password again: a new
# salt, so a change that comes back, and the next one's bind still good).
kill -STOP "$spid"
cpids=()
for i in $(seq 1 6); do
	timeout 60 ldappasswd -x -H "$A" -D "$BOB" -w bob-secret -s bob-secret > "$work/busy.$i" 2>&1 &
	cpids+=($!)
done
sleep 2
timeout 60 ldappasswd -x -H "$A" -D "$ALICE" -w "$pw" -s "$pw" > "$work/busy.alice" 2>&1 &
apw=$!
sleep 2
busy=$(grep -l "Server is busy" "$work"/busy.[0-9] 2> /dev/null | wc -l)
mine=$(grep -l "your earlier password changes" "$work"/busy.[0-9] 2> /dev/null | wc -l)
alice_busy=$(grep -c "Server is busy" "$work/busy.alice")
kill -CONT "$spid"
for p in "${cpids[@]}"; do wait "$p"; done
wait "$apw"
done_ok=$(grep -L "Result\|ldap_" "$work"/busy.[0-9] 2> /dev/null | wc -l)
[ "$busy" = 4 ] && [ "$mine" = 4 ] && [ "$done_ok" = 2 ] &&
	ok "6 changes of one user with the provider stalled: 4 busy (51) at once naming his own, 2 done once it answers" ||
	not_ok "a user's share: $busy busy ($mine naming his own), $done_ok done: $(cat "$work"/busy.1)"
[ "$alice_busy" = 0 ] && ! grep -q "Result\|ldap_" "$work/busy.alice" &&
	ok "another user's change meanwhile: queued, not busy, done once the provider answers" ||
	not_ok "alice's change while bob's were queued: $(cat "$work/busy.alice")"
timeout 10 ldapwhoami -x -H "$A" -D "$BOB" -w bob-secret > /dev/null 2>&1 ||
	not_ok "bob's password does not bind on the replica after the changes"

# 9b. A bind password over CHAIN_MAX_PASSWORD (256 bytes) binds, but is not kept: its
# changes are refused, saying why (before: kept whatever its size, up to max_pdu_bytes).
long=$(printf 'L%.0s' $(seq 1 300))
timeout 20 ldappasswd -x -H "$PROV" -D "$ADMIN" -w secret -s "$long" "$BOB" > /dev/null 2>&1 ||
	not_ok "setting bob's 300-byte password on the provider"
for _ in $(seq 1 50); do
	timeout 5 ldapwhoami -x -H "$A" -D "$BOB" -w "$long" > /dev/null 2>&1 && break
	sleep 0.2
done
out=$(timeout 20 ldappasswd -x -H "$A" -D "$BOB" -w "$long" -s bob-secret 2>&1)
grep -q "Server is unwilling to perform (53)" <<< "$out" && grep -q "at most 256 bytes" <<< "$out" &&
	ok "a 300-byte bind password binds, its change refused: $(result "$out")" ||
	not_ok "a 300-byte bind password: $out"
timeout 20 ldappasswd -x -H "$PROV" -D "$ADMIN" -w secret -s bob-secret "$BOB" > /dev/null 2>&1 ||
	not_ok "setting bob's password back on the provider"

# 10. The provider down: unavailable (52) within the connect's bound, and the replica serves on.
kill "$spid"
wait "$spid" 2> /dev/null
t0=$(date +%s%N)
out=$(timeout 30 ldappasswd -x -H "$A" -D "$ALICE" -w "$pw" -s whatever 2>&1)
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "^Result: Server is unavailable (52)" <<< "$out" && [ "$ms" -lt 15000 ] &&
	ok "the provider down: unavailable (52) in ${ms} ms: $(result "$out")" ||
	not_ok "provider down: in ${ms} ms: $out"
timeout 10 ldapwhoami -x -H "$A" -D "$ALICE" -w "$pw" > /dev/null 2>&1 &&
	ok "the provider down: binds on the replica go on with the last password" ||
	not_ok "the replica does not bind alice after the provider went down"

stopped=0
for r in "$apid:$alog" "$bpid:$blog" "$opid:$olog"; do
	stop_checked "${r%%:*}" "${r#*:}" && stopped=$((stopped + 1)) || not_ok "stop ${r#*:}: $stop_why"
done
[ "$stopped" = 3 ] && ok "the three replicas stop on SIGTERM, exit 0, no sanitizer report"
finish
