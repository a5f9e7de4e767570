#!/usr/bin/env bash
# ppolicy: a replica honours the account state its provider's password policy writes
# (issue 47). A slapd provider (tests/integration/provider.sh) with the ppolicy overlay
# (ppolicy_default cn=default: pwdLockout, 3 failures, locked until removed; cn=timed:
# locked 5 s; cn=expiring: every login warned; cn=grace: expired, 3 grace logins;
# cn=reset: pwdMustChange);
# three minidir replicas (ppolicy_default, chain_bind_failures = yes, one on ldaps:// too)
# with HAProxy (balance roundrobin) in front. carol locked and unlocked by the rootdn on
# the provider: refused (49) and let in again everywhere within 2 s, the access log saying
# account=locked; a timed lockout ends on the replicas when it ends on the provider; 3
# wrong passwords through the pool lock bob everywhere (each replays its failure to the
# provider); a slapcat of the provider imported without -s refuses the locked; ldapwhoami
# -e ppolicy prints on a replica what it prints on slapd (locked, expiring, grace, a wrong
# password, a normal account, a reset one, an unknown DN; with ppolicy_use_lockout on both
# too), and the control's bytes are slapd's; a reset account may not search until it
# changes its password; pwdStartTime to come and pwdEndTime gone refused; the
# pwd* state answered on "+" and by name; nsAccountLock: true and userAccountControl 514
# refused in an imported LDIF. Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
SLAPCAT=${SLAPCAT:-/usr/sbin/slapcat}

use_work_dir ppolicy
PEOPLE=ou=people,$EX
POLICIES=ou=policies,$EX
ALICE=uid=alice,$PEOPLE
BOB=uid=bob,$PEOPLE
CAROL=uid=carol,$PEOPLE
TIMED=uid=pp-timed,$PEOPLE
EXPIRING=uid=pp-expiring,$PEOPLE
GRACE=uid=pp-grace,$PEOPLE
LOCKED=uid=pp-locked,$PEOPLE
FAILED=uid=pp-failed,$PEOPLE

pport='' hport='' # set by pick_port (lib.sh)

# The clients read the CA for ldaps:// from the environment (LDAPNOINIT, set by
# provider.sh, would turn that off too); no ldap.conf or .ldaprc of the machine's.
if ! tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1; then
	not_ok "tls_certs.sh: $(cat "$work/certs.log")"
	finish
fi
unset LDAPNOINIT
export LDAPCONF=/dev/null LDAPRC=/dev/null LDAPTLS_CACERT=$work/pki/ca.pem LDAPTLS_REQCERT=demand

# gentime: the generalized time (UTC, to the second) of now.
gentime() { date -u +%Y%m%d%H%M%SZ; }
# gt_ns GENERALIZED-TIME: that time in nanoseconds since the epoch (fractions dropped).
gt_ns() {
	local t=$1
	echo "$(date -u -d "${t:0:4}-${t:4:2}-${t:6:2} ${t:8:2}:${t:10:2}:${t:12:2}" +%s)000000000"
}
# since NS: the seconds (to the tenth) since NS, nanoseconds since the epoch.
since() { awk -v n=$(($(date +%s%N) - $1)) 'BEGIN{printf "%.1f", n/1e9}'; }

# 1. The provider: syncprov and ppolicy, its policies and their users slapadd'ed after
# examples/example.ldif (slapd 2.5's ppolicy module carries its schema; pwdPolicy is
# auxiliary, device is the structural class).
provider_setup || finish
sed -i "s/^moduleload syncprov\$/&\nmoduleload ppolicy/" "$work/slapd.conf"
cat >> "$work/slapd.conf" << EOF
overlay ppolicy
ppolicy_default "cn=default,$POLICIES"
EOF
# policy NAME ATTRIBUTE-LINES: a pwdPolicy entry cn=NAME under ou=policies.
policy() { printf 'dn: cn=%s,%s\nobjectClass: device\nobjectClass: pwdPolicy\ncn: %s\npwdAttribute: userPassword\n%s\n\n' \
	"$1" "$POLICIES" "$1" "$2"; }
# user UID [LINES]: a person with userPassword UID-secret (plaintext).
user() { printf 'dn: uid=%s,%s\nobjectClass: inetOrgPerson\ncn: %s\nsn: %s\nuid: %s\nuserPassword: %s-secret\n%s\n\n' \
	"$1" "$PEOPLE" "$1" "$1" "$1" "$1" "${2:-}"; }
{
	printf 'dn: %s\nobjectClass: organizationalUnit\nou: policies\n\n' "$POLICIES"
	policy default "pwdLockout: TRUE
pwdMaxFailure: 3
pwdLockoutDuration: 0
pwdFailureCountInterval: 0"
	policy timed "pwdLockout: TRUE
pwdMaxFailure: 3
pwdLockoutDuration: 5
pwdFailureCountInterval: 0"
	policy expiring "pwdMaxAge: 100000
pwdExpireWarning: 200000"
	policy grace "pwdMaxAge: 60
pwdGraceAuthNLimit: 3"
	policy reset "pwdMustChange: TRUE"
	user pp-timed "pwdPolicySubentry: cn=timed,$POLICIES"
	user pp-expiring "pwdPolicySubentry: cn=expiring,$POLICIES
pwdChangedTime: $(gentime)"
	user pp-grace "pwdPolicySubentry: cn=grace,$POLICIES
pwdChangedTime: 20200101000000Z"
	user pp-locked "pwdAccountLockedTime: 000001010000Z"
	user pp-reset "pwdPolicySubentry: cn=reset,$POLICIES
pwdReset: TRUE"
	user pp-failed
	user pp-notyet "pwdStartTime: 20991231000000Z"
	user pp-ended "pwdEndTime: 20000101000000Z"
} > "$work/policies.ldif"
if ! timeout 60 "$SLAPADD" -f "$work/slapd.conf" -l "$work/policies.ldif" > "$work/slapadd2.log" 2>&1; then
	not_ok "slapadd of the policies: $(cat "$work/slapadd2.log")"
	finish
fi
pick_port pport 2 || finish
provider_start "$pport" || finish
PROV=ldap://127.0.0.1:$port
# carol (no password in example.ldif) gets one, as the rootdn.
out=$(printf 'dn: %s\nchangetype: modify\nadd: userPassword\nuserPassword: carol-secret\n' "$CAROL" |
	timeout 10 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret 2>&1) ||
	{ not_ok "carol's password on the provider: $out"; finish; }

# bind_rc URI DN PW: prints ldapwhoami's exit status (0 bound, 49 invalidCredentials).
bind_rc() {
	timeout 5 ldapwhoami -x -H "$1" -D "$2" -w "$3" > /dev/null 2>&1
	echo $?
}
# The provider itself: it lets the normal in and refuses the locked.
[ "$(bind_rc "$PROV" "$ALICE" alice-secret)" = 0 ] && [ "$(bind_rc "$PROV" "$CAROL" carol-secret)" = 0 ] &&
	[ "$(bind_rc "$PROV" "$LOCKED" pp-locked-secret)" = 49 ] &&
	ok "the provider (slapd, ppolicy): alice and carol bind, pp-locked (pwdAccountLockedTime 000001010000Z) refused (49)" ||
	not_ok "the provider's ppolicy: alice $(bind_rc "$PROV" "$ALICE" alice-secret), carol $(bind_rc "$PROV" "$CAROL" carol-secret), pp-locked $(bind_rc "$PROV" "$LOCKED" pp-locked-secret); $(tail -3 "$work/slapd.log")"

# 2. Three replicas: a (ldap:// and ldaps://), b, c; each with its access log.
# replica NAME [LINES]: a refreshAndPersist replica of the provider, started, its first
# refresh done (carol's password there); sets $rpid, $rport, $rlog.
PPLINES="ppolicy_default = cn=default,$POLICIES
chain_bind_failures = yes"
replica() {
	replica_conf "$1" refreshAndPersist "$PPLINES
access_log = $work/$1.access
${2:-}"
	replica_run "$1"
	# (up to 15 s, as wait_port, but no longer than the process lives)
	rport=
	for _ in $(seq 1 15); do
		rport=$(wait_port "$rlog" ldap "listening on" 1)
		[ -n "$rport" ] && break
		kill -0 "$rpid" 2> /dev/null || break
	done
	[ -n "$rport" ] || { not_ok "replica $1 did not start: $(tail -3 "$rlog")"; return 1; }
	for _ in $(seq 1 100); do
		[ "$(bind_rc "ldap://127.0.0.1:$rport" "$CAROL" carol-secret)" = 0 ] && return 0
		sleep 0.1
	done
	not_ok "replica $1: no first refresh (carol does not bind): $(tail -3 "$rlog")"
	return 1
}
replica a "listen = ldaps://127.0.0.1:0/
tls_cert_file = $work/pki/server.pem
tls_key_file = $work/pki/server.key" || finish
apid=$rpid alog=$rlog A=ldap://127.0.0.1:$rport
sport=$(wait_port "$alog" ldaps)
AS=ldaps://127.0.0.1:$sport
replica b || finish
bpid=$rpid blog=$rlog B=ldap://127.0.0.1:$rport
replica c || finish
cpid=$rpid clog=$rlog C=ldap://127.0.0.1:$rport
REPLICAS=("$A" "$AS" "$B" "$C")

# HAProxy, TCP, round robin over the three; it logs each connection's replica.
pick_port hport || finish
cat > "$work/haproxy.cfg" << EOF
global
	pidfile $work/haproxy.pid
	log stdout format raw local0
defaults
	mode tcp
	log global
	option tcplog
	timeout connect 2s
	timeout client 30s
	timeout server 30s
frontend pool
	bind 127.0.0.1:$hport
	default_backend pool
backend pool
	balance roundrobin
	server a 127.0.0.1:${A##*:}
	server b 127.0.0.1:${B##*:}
	server c 127.0.0.1:${C##*:}
EOF
"$HAPROXY" -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
pids+=("$!")
H=ldap://127.0.0.1:$hport
for _ in $(seq 1 100); do
	timeout 2 ldapsearch -x -H "$H" -LLL -b "" -s base 1.1 > /dev/null 2>&1 && break
	sleep 0.05
done

# every_rc DN PW URI...: the URIs whose bind of DN with PW does not give $want, with
# their status ("" when all do).
every_rc() {
	local dn=$1 pw=$2 u rc bad=
	shift 2
	for u in "$@"; do
		rc=$(bind_rc "$u" "$dn" "$pw")
		[ "$rc" = "$want" ] || bad="$bad $u:$rc"
	done
	echo "$bad"
}
# await WANT SECONDS DN PW URI...: polls every 0.1 s, until SECONDS after $t0 (taken by
# the caller, nanoseconds since the epoch), until a bind of DN with PW gives WANT on every
# URI (one done is not asked again); then 6 binds through HAProxy (twice round the pool)
# must give it too. Sets $took (seconds since $t0) and $bad ("" when all did).
await() {
	local end=$(($2 * 1000000000 + t0)) dn=$3 pw=$4 u left
	want=$1
	shift 4
	left=("$@")
	for _ in $(seq 1 1000); do
		bad=$(every_rc "$dn" "$pw" "${left[@]}")
		[ -z "$bad" ] && break
		[ "$(date +%s%N)" -lt "$end" ] || break
		left=()
		for u in $bad; do left+=("${u%:*}"); done
		sleep 0.1
	done
	took=$(since "$t0")
	[ -n "$bad" ] && return 1
	bad=$(every_rc "$dn" "$pw" "$H" "$H" "$H" "$H" "$H" "$H")
	[ -z "$bad" ]
}

# logged PATTERN N: polls (up to 3 s: the access log is written in the background) until
# N of the three replicas' access logs have a line matching PATTERN (grep -E); sets $n to
# how many have.
logged() {
	local l
	for _ in $(seq 1 30); do
		n=0
		for l in a b c; do
			[ "$(grep -cE "$1" "$work/$l.access" 2> /dev/null)" -ge 1 ] && n=$((n + 1))
		done
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# 3. Before anything: carol binds on each replica, over ldaps://, through HAProxy.
want=0
bad=$(every_rc "$CAROL" carol-secret "${REPLICAS[@]}" "$H" "$H" "$H")
[ -z "$bad" ] && ok "carol binds on the three replicas, over ldaps://, and 3 times through HAProxy" ||
	not_ok "carol before any lock:$bad"

# The replicas keep the provider's operational state: on "+" and by name, as slapd answers.
# opattrs URI DN [ATTRS]: DN's pwd* attributes (+ unless ATTRS), as the rootdn reads them.
opattrs() {
	timeout 10 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$2" -s base "${3:-+}" 2> /dev/null |
		grep -i "^pwd" | LC_ALL=C sort
}
for q in "$LOCKED|+" "$GRACE|+" "$TIMED|pwdPolicySubentry" "$EXPIRING|pwdChangedTime"; do
	dn=${q%|*} attrs=${q#*|}
	expect=$(opattrs "$PROV" "$dn" "$attrs")
	got=$(opattrs "$A" "$dn" "$attrs")
	[ -n "$expect" ] && [ "$got" = "$expect" ] &&
		ok "the replica answers $dn's $attrs as the provider does: $(tr '\n' ' ' <<< "$got")" ||
		not_ok "$dn's $attrs: provider '$(tr '\n' ' ' <<< "$expect")', replica '$(tr '\n' ' ' <<< "$got")'"
done
# pwdStartTime to come, pwdEndTime gone: refused on the provider and on every replica.
want=49
bad=$(every_rc "uid=pp-notyet,$PEOPLE" pp-notyet-secret "$PROV" "${REPLICAS[@]}")
[ -z "$bad" ] && ok "pwdStartTime in the future: refused (49) on the provider and every replica" ||
	not_ok "pwdStartTime in the future: not refused by:$bad"
bad=$(every_rc "uid=pp-ended,$PEOPLE" pp-ended-secret "$PROV" "${REPLICAS[@]}")
[ -z "$bad" ] && ok "pwdEndTime passed: refused (49) on the provider and every replica" ||
	not_ok "pwdEndTime passed: not refused by:$bad"

# 4. carol locked for good by the rootdn on the provider: refused everywhere within 2 s,
# logged account=locked; the lock removed: she binds again everywhere within 2 s.
# lock_mod DN OP [VALUE]: pwdAccountLockedTime of DN added (VALUE) or deleted, as the
# rootdn on the provider.
lock_mod() {
	local ldif
	ldif=$(printf 'dn: %s\nchangetype: modify\n%s: pwdAccountLockedTime\n' "$1" "$2")
	[ -n "${3:-}" ] && ldif=$(printf '%s\npwdAccountLockedTime: %s\n' "$ldif" "$3")
	timeout 10 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret <<< "$ldif" > "$work/lockmod.log" 2>&1 ||
		{ not_ok "pwdAccountLockedTime $2 on $1 at the provider: $(cat "$work/lockmod.log")"; return 1; }
}
if lock_mod "$CAROL" add 000001010000Z; then
	t0=$(date +%s%N)
	[ "$(bind_rc "$PROV" "$CAROL" carol-secret)" = 49 ] &&
		ok "the provider refuses carol (49) once locked (pwdAccountLockedTime 000001010000Z)" ||
		not_ok "the provider lets carol in despite pwdAccountLockedTime 000001010000Z"
	await 49 2 "$CAROL" carol-secret "${REPLICAS[@]}" &&
		ok "carol locked on the provider: her right password refused (49) on every replica, over ldaps:// and through HAProxy after ${took}s" ||
		not_ok "carol locked on the provider: after ${took}s still not refused by:$bad"
	logged "BIND dn=\"$CAROL\".*result=49.*account=locked|BIND dn=\"$CAROL\".*account=locked.*result=49" 3
	[ "$n" = 3 ] && ok "each replica's access log: carol's refused bind with result=49 and account=locked" ||
		not_ok "account=locked in $n of 3 access logs: $(grep -hF "BIND dn=\"$CAROL\"" "$work/a.access" 2> /dev/null | tail -1)"
fi
if lock_mod "$CAROL" delete; then
	t0=$(date +%s%N)
	await 0 2 "$CAROL" carol-secret "$PROV" "${REPLICAS[@]}" &&
		ok "carol's lock removed on the provider: she binds on every replica, over ldaps:// and through HAProxy after ${took}s" ||
		not_ok "carol's lock removed: after ${took}s still refused by:$bad"
fi

# 5. A timed lockout (cn=timed: 3 failures lock for 5 s), by 3 wrong passwords at the
# provider: refused on the replicas; they let pp-timed in when the provider's lock ends
# (its pwdAccountLockedTime + 5 s), within 2 s, not before. The provider is asked last
# (its successful bind would clear the lock and replicate that).
for _ in 1 2 3; do
	timeout 5 ldapwhoami -x -H "$PROV" -D "$TIMED" -w wrong > /dev/null 2>&1
done
lockt=$(timeout 10 ldapsearch -x -H "$PROV" -D "$ADMIN" -w secret -LLL -b "$TIMED" -s base pwdAccountLockedTime 2> /dev/null |
	sed -n 's/^pwdAccountLockedTime: //p')
if [ -z "$lockt" ]; then
	not_ok "3 wrong passwords at the provider did not lock pp-timed (no pwdAccountLockedTime)"
else
	t0=$(date +%s%N)
	await 49 2 "$TIMED" pp-timed-secret "$A" "$B" "$C" &&
		ok "pp-timed locked by 3 failures at the provider ($lockt, for 5 s): refused on every replica after ${took}s" ||
		not_ok "pp-timed locked at the provider: after ${took}s not refused by:$bad"
	unlock_ns=$(($(gt_ns "$lockt") + 5000000000))
	# each replica's first successful bind, in seconds after the provider's unlock; asked
	# every 0.1 s until 3 s past it
	first=()
	left=("$A" "$B" "$C")
	for _ in $(seq 1 1000); do
		[ "$(date +%s%N)" -lt $((unlock_ns + 3000000000)) ] || break
		next=()
		for u in "${left[@]}"; do
			if [ "$(bind_rc "$u" "$TIMED" pp-timed-secret)" = 0 ]; then
				first+=("$(awk -v n=$(($(date +%s%N) - unlock_ns)) 'BEGIN{printf "%.1f", n/1e9}')")
			else
				next+=("$u")
			fi
		done
		left=("${next[@]}")
		[ "${#left[@]}" = 0 ] && break
		sleep 0.1
	done
	while [ "$(date +%s%N)" -lt $((unlock_ns + 200000000)) ]; do sleep 0.1; done
	[ "$(bind_rc "$PROV" "$TIMED" pp-timed-secret)" = 0 ] &&
		ok "the provider lets pp-timed in once its 5 s lockout is over" ||
		not_ok "the provider still refuses pp-timed after its 5 s lockout"
	[ "${#left[@]}" = 0 ] && awk -v l="${first[*]}" 'BEGIN{n=split(l,a," "); for(i=1;i<=n;i++) if (a[i] < -0.1 || a[i] > 2) exit 1}' &&
		ok "the 5 s lockout over: every replica lets pp-timed in, at ${first[*]} s after the provider's unlock (none before)" ||
		not_ok "the 5 s lockout's end on the replicas: first binds at ${first[*]:-none} s after the provider's unlock; still refused by: ${left[*]}"
fi

# 6. The pool: bob's 3 wrong passwords through HAProxy land on the 3 replicas, one each;
# each replays its failure to the provider (chain_bind_failures), whose ppolicy locks bob,
# and the lock comes back: within 2 s bob's right password is refused everywhere.
hlines=$(wc -l < "$work/haproxy.log")
for _ in 1 2 3; do
	timeout 5 ldapwhoami -x -H "$H" -D "$BOB" -w wrong > /dev/null 2>&1
done
t0=$(date +%s%N)
await 49 2 "$BOB" bob-secret "$PROV" "$A" "$AS" "$B" "$C" &&
	ok "bob's 3 failures spread over the pool: locked by the provider, refused on every replica and through HAProxy after ${took}s" ||
	not_ok "pool lockout (chain_bind_failures): after ${took}s bob not refused by:$bad"
# HAProxy's log names the replica of each connection: bob's 3 went to a, b and c.
went=$(tail -n +"$((hlines + 1))" "$work/haproxy.log" | grep -o "pool/[abc]" | head -3 | sort | tr '\n' ' ')
[ "$went" = "pool/a pool/b pool/c " ] &&
	ok "3 wrong passwords of bob through HAProxy: one on each replica (round robin)" ||
	not_ok "bob's wrong passwords through HAProxy went to: $went"

# 7. ldapwhoami -e ppolicy prints on a replica what it prints on slapd, and the control
# it gets back (its value, bytes) is slapd's.
# ppolicy_out URI DN PW: ldapwhoami -e ppolicy's result lines ("Password expires in N
# seconds" with N as "N"), then "control: HEX" (the Password Policy response control's
# value from the packets libldap dumps, "none" without one) and "expires: N" (N empty
# without a warning).
oid=312e332e362e312e342e312e34322e322e32372e382e352e31 # 1.3.6.1.4.1.42.2.27.8.5.1
ppolicy_out() {
	local out hex v
	out=$(timeout 5 ldapwhoami -d 2 -e ppolicy -x -H "$1" -D "$2" -w "$3" 2>&1)
	echo "expires: $(sed -n 's/.*Password expires in \([0-9]*\) seconds.*/\1/p' <<< "$out")"
	grep -E "^(ldap_bind|dn:)" <<< "$out" | sed 's/expires in [0-9]* seconds/expires in N seconds/'
	hex=$(awk '/^ldap_read/ {r = 1; next} /^ldap_write/ {r = 0; next}
		r && /^  [0-9a-f][0-9a-f][0-9a-f][0-9a-f]:/ {for (i = 2; i <= 17 && i <= NF; i++) if ($i ~ /^[0-9a-f][0-9a-f]$/) printf "%s", $i}' <<< "$out")
	case $hex in
	*"$oid"*) v=${hex#*"$oid"} && echo "control: ${v:4:$((16#${v:2:2} * 2))}" ;;
	*) echo "control: none" ;;
	esac
}
# compare_ppolicy REPLICA-URI WHAT DN PW: ldapwhoami -e ppolicy of DN with PW on the
# replica, then on slapd: the same lines (timeBeforeExpiration to 3 s) and the same
# control (its value's bytes, timeBeforeExpiration's value aside: 30 LL a0 LL 80 LL kept).
compare_ppolicy() {
	local what=$2 r p rexp pexp r_lines p_lines close rc_ pc_
	r=$(ppolicy_out "$1" "$3" "$4")
	rexp=$(sed -n 's/^expires: //p' <<< "$r")
	p=$(ppolicy_out "$PROV" "$3" "$4")
	pexp=$(sed -n 's/^expires: //p' <<< "$p")
	r_lines=$(grep -vE "^(control|expires):" <<< "$r" | tr '\n' ' ')
	p_lines=$(grep -vE "^(control|expires):" <<< "$p" | tr '\n' ' ')
	close=1
	[ -z "$rexp$pexp" ] || { [ -n "$rexp" ] && [ -n "$pexp" ] && [ $((rexp - pexp)) -le 3 ] && [ $((pexp - rexp)) -le 3 ]; } || close=0
	[ "$r_lines" = "$p_lines" ] && [ "$close" = 1 ] &&
		ok "ldapwhoami -e ppolicy, $what: the replica prints what slapd prints: ${p_lines}${pexp:+(N = $pexp on slapd, $rexp on the replica)}" ||
		not_ok "ldapwhoami -e ppolicy, $what: slapd '$p_lines'${pexp:+ N=$pexp}, replica '$r_lines'${rexp:+ N=$rexp}"
	rc_=$(grep "^control:" <<< "$r")
	pc_=$(grep "^control:" <<< "$p")
	[ -n "$pexp" ] && rc_="${rc_:0:21}..." pc_="${pc_:0:21}..."
	[ "$rc_" = "$pc_" ] && ok "Password Policy response control, $what: the replica's is slapd's (${pc_#control: })" ||
		not_ok "Password Policy response control, $what: slapd ${pc_#control: }, replica ${rc_#control: }"
}
compare_ppolicy "$A" "a locked account" "$LOCKED" pp-locked-secret
compare_ppolicy "$A" "an expiring password" "$EXPIRING" pp-expiring-secret
compare_ppolicy "$A" "a wrong password" "$ALICE" wrong
compare_ppolicy "$A" "a normal account" "$ALICE" alice-secret
# pwdReset under pwdMustChange: the bind succeeds with changeAfterReset, and the session
# may do nothing but change the password (its WhoAmI and a search: 50 on both).
RESET=uid=pp-reset,$PEOPLE
compare_ppolicy "$A" "a password reset by an administrator" "$RESET" pp-reset-secret
search_rc() { # URI: a base search of $EX as pp-reset
	local rc=0
	timeout 5 ldapsearch -x -H "$1" -D "$RESET" -w pp-reset-secret -b "$EX" -s base 1.1 > /dev/null 2>&1 || rc=$?
	echo "$rc"
}
r=$(search_rc "$A") p=$(search_rc "$PROV")
[ "$r" = 50 ] && [ "$p" = 50 ] && ok "pp-reset's search before changing its password: 50 on the replica and on slapd" ||
	not_ok "pp-reset's search before changing its password: replica $r, slapd $p"
# An unknown DN: slapd sends no control (its absence tells that the DN does not exist),
# minidir the empty one it sends for a wrong password.
r=$(ppolicy_out "$A" "uid=nobody,$PEOPLE" whatever)
p=$(ppolicy_out "$PROV" "uid=nobody,$PEOPLE" whatever)
grep -q "^ldap_bind: Invalid credentials (49)" <<< "$r" && grep -q "^control: 3000$" <<< "$r" &&
	grep -q "^control: none$" <<< "$p" &&
	ok "ldapwhoami -e ppolicy, an unknown DN: 49 and the empty control a wrong password gets (slapd: no control, which tells the DN is unknown)" ||
	not_ok "unknown DN: replica '$(tr '\n' ' ' <<< "$r")', slapd '$(tr '\n' ' ' <<< "$p")'"
# Grace binds (pwdMaxAge passed, pwdGraceAuthNLimit 3): the replica counts what the provider
# recorded and writes nothing; with chain_bind_failures its grace bind is replayed, so the
# provider uses one up: after it slapd says one fewer remain.
grace_uses() { # the provider's pwdGraceUseTime values of pp-grace
	timeout 5 ldapsearch -x -LLL -H "$PROV" -D "$ADMIN" -w secret -b "$GRACE" -s base pwdGraceUseTime 2> /dev/null |
		grep -c "^pwdGraceUseTime:"
}
r=$(ppolicy_out "$A" "$GRACE" pp-grace-secret)
uses=0
for _ in $(seq 1 20); do
	uses=$(grace_uses)
	[ "$uses" = 1 ] && break
	sleep 0.1
done
p=$(ppolicy_out "$PROV" "$GRACE" pp-grace-secret)
grep -q "Password expired, 2 grace logins remain" <<< "$r" && grep -q "^control: 3005a003810102$" <<< "$r" &&
	[ "$uses" = 1 ] && grep -q "Password expired, 1 grace logins remain" <<< "$p" &&
	ok "ldapwhoami -e ppolicy, an expired password in grace: 2 remain on the replica (3005a003810102), its bind replayed uses one at the provider, which then says 1" ||
	not_ok "grace: replica '$(tr '\n' ' ' <<< "$r")', provider's uses after it $uses, then slapd '$(tr '\n' ' ' <<< "$p")'"

# 7b. ppolicy_use_lockout: slapd started again with it, and a replica with
# ppolicy_use_lockout = yes: the accountLocked error (1) on both, for a lock, a wrong
# password of a locked account, a pwdStartTime to come, a pwdEndTime gone.
kill "$spid"
wait "$spid" 2> /dev/null
sed -i "s/^ppolicy_default .*/&\nppolicy_use_lockout/" "$work/slapd.conf"
if provider_start "$pport" && replica lockout "ppolicy_use_lockout = yes"; then
	L=ldap://127.0.0.1:$rport
	lpid=$rpid llog=$rlog
	compare_ppolicy "$L" "a locked account, ppolicy_use_lockout" "$LOCKED" pp-locked-secret
	compare_ppolicy "$L" "a locked account's wrong password, ppolicy_use_lockout" "$LOCKED" wrong
	compare_ppolicy "$L" "pwdStartTime to come, ppolicy_use_lockout" "uid=pp-notyet,$PEOPLE" pp-notyet-secret
	compare_ppolicy "$L" "pwdEndTime gone, ppolicy_use_lockout" "uid=pp-ended,$PEOPLE" pp-ended-secret
	compare_ppolicy "$L" "a normal account, ppolicy_use_lockout" "$ALICE" alice-secret
	stop_checked "$lpid" "$llog" || not_ok "stop $llog: $stop_why"
fi

# 8. A slapcat of the provider imports with minidir-import without -s (the ppolicy schema
# built in), and a server on it refuses the locked (pp-locked for good from the start,
# pp-failed by 3 failures at the provider just before), lets alice in.
for _ in 1 2 3; do
	timeout 5 ldapwhoami -x -H "$PROV" -D "$FAILED" -w wrong > /dev/null 2>&1
done
[ "$(bind_rc "$PROV" "$FAILED" pp-failed-secret)" = 49 ] ||
	not_ok "3 wrong passwords at the provider did not lock pp-failed"
cat > "$work/slapcat.conf" << EOF
listen = 127.0.0.1:0
database = $work/slapcat.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
EOF
if ! timeout 60 "$SLAPCAT" -f "$work/slapd.conf" -l "$work/slapcat.ldif" > "$work/slapcat.log" 2>&1; then
	not_ok "slapcat of the provider: $(cat "$work/slapcat.log")"
elif ! out=$(timeout 60 "$BUILD/minidir-import" -q -f "$work/slapcat.conf" "$work/slapcat.ldif" 2>&1); then
	not_ok "minidir-import (no -s) of the provider's slapcat: $out"
else
	ok "minidir-import (no -s) of a slapcat of a ppolicy provider ($(grep -c "^dn:" "$work/slapcat.ldif") entries)"
	start_minidir "$work/slapcat.conf" "$work/slapcat.log"
	if [ -z "$port" ]; then
		not_ok "the server on the slapcat did not start: $(tail -3 "$work/slapcat.log")"
	else
		S=ldap://127.0.0.1:$port
		[ "$(bind_rc "$S" "$LOCKED" pp-locked-secret)" = 49 ] && [ "$(bind_rc "$S" "$FAILED" pp-failed-secret)" = 49 ] &&
			[ "$(bind_rc "$S" "$ALICE" alice-secret)" = 0 ] &&
			ok "a server on the imported slapcat refuses pp-locked and pp-failed (49), lets alice in" ||
			not_ok "on the imported slapcat: pp-locked $(bind_rc "$S" "$LOCKED" pp-locked-secret), pp-failed $(bind_rc "$S" "$FAILED" pp-failed-secret), alice $(bind_rc "$S" "$ALICE" alice-secret)"
		stop_checked "$pid" "$work/slapcat.log" || not_ok "stop the server on the slapcat: $stop_why"
	fi
fi

# 9. Other servers' account state in an imported LDIF (no replica): 389-ds's
# nsAccountLock: true, AD's userAccountControl 514 (512 + ACCOUNTDISABLE) refused; the
# same users without them bind.
{
	grep -v "^version:" examples/example.ldif
	printf '\n'
	user pp-nslock "objectClass: extensibleObject
nsAccountLock: true"
	user pp-uac "objectClass: extensibleObject
userAccountControl: 514"
	user pp-uac-ok "objectClass: extensibleObject
userAccountControl: 512
nsAccountLock: false"
} > "$work/other.ldif"
cat > "$work/other.conf" << EOF
listen = 127.0.0.1:0
database = $work/other.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
EOF
if ! out=$(timeout 60 "$BUILD/minidir-import" -q -f "$work/other.conf" "$work/other.ldif" 2>&1); then
	not_ok "minidir-import of nsAccountLock and userAccountControl: $out"
else
	start_minidir "$work/other.conf" "$work/other.log"
	if [ -z "$port" ]; then
		not_ok "the server on nsAccountLock/userAccountControl did not start: $(tail -3 "$work/other.log")"
	else
		O=ldap://127.0.0.1:$port
		ns=$(bind_rc "$O" "uid=pp-nslock,$PEOPLE" pp-nslock-secret)
		uac=$(bind_rc "$O" "uid=pp-uac,$PEOPLE" pp-uac-secret)
		fine=$(bind_rc "$O" "uid=pp-uac-ok,$PEOPLE" pp-uac-ok-secret)
		[ "$ns" = 49 ] && ok "nsAccountLock: true: the right password refused (49)" ||
			not_ok "nsAccountLock: true: bind rc $ns"
		[ "$uac" = 49 ] && ok "userAccountControl: 514 (ACCOUNTDISABLE): the right password refused (49)" ||
			not_ok "userAccountControl: 514: bind rc $uac"
		[ "$fine" = 0 ] && ok "userAccountControl: 512 and nsAccountLock: false: binds" ||
			not_ok "userAccountControl: 512, nsAccountLock: false: bind rc $fine"
		stop_checked "$pid" "$work/other.log" || not_ok "stop the server on nsAccountLock: $stop_why"
	fi
fi

# 10. SASL EXTERNAL: a TLS client certificate names an entry (cn=client,o=minidir test);
# with nsAccountLock: true on it the bind is refused (49), without it the same
# certificate binds as that DN.
ext_ldif() { # ext_ldif LOCK-LINE: the suffix and the certificate's entry
	printf 'dn: o=minidir test\nobjectClass: organization\no: minidir test\n\n'
	printf 'dn: cn=client,o=minidir test\nobjectClass: applicationProcess\nobjectClass: extensibleObject\ncn: client\n%s\n' "$1"
}
ext_bind() { # ext_bind URI: ldapwhoami -Y EXTERNAL with the client certificate, its output and rc
	env LDAPTLS_CERT="$work/pki/client.pem" LDAPTLS_KEY="$work/pki/client.key" \
		timeout 5 ldapwhoami -Q -Y EXTERNAL -H "$1" 2>&1
	echo "rc=$?"
}
for lock in "nsAccountLock: true" "nsAccountLock: false"; do
	rm -f "$work/ext.mdb"
	ext_ldif "$lock" > "$work/ext.ldif"
	cat > "$work/ext.conf" << EOF
listen = ldaps://127.0.0.1:0/
database = $work/ext.mdb
schema_dir = $SCHEMA_DIR
suffix = o=minidir test
tls_cert_file = $work/pki/server.pem
tls_key_file = $work/pki/server.key
tls_ca_file = $work/pki/ca.pem
tls_verify_client = demand
EOF
	if ! out=$(timeout 60 "$BUILD/minidir-import" -q -f "$work/ext.conf" "$work/ext.ldif" 2>&1); then
		not_ok "minidir-import of the certificate's entry ($lock): $out"
		continue
	fi
	: > "$work/ext.log"
	"$BUILD/minidir" -f "$work/ext.conf" 2> "$work/ext.log" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/ext.log" ldaps)
	if [ -z "$port" ]; then
		not_ok "the TLS server for SASL EXTERNAL did not start: $(tail -3 "$work/ext.log")"
		continue
	fi
	out=$(ext_bind "ldaps://localhost:$port")
	case $lock:$out in
	*true:*"Invalid credentials (49)"*"rc=49")
		ok "SASL EXTERNAL as a certificate's entry with nsAccountLock: true: refused (49)" ;;
	*false:*"dn:cn=client,o=minidir test"*"rc=0")
		ok "SASL EXTERNAL as the same entry without the lock: binds as cn=client,o=minidir test" ;;
	*) not_ok "SASL EXTERNAL ($lock): $(tr '\n' ' ' <<< "$out")" ;;
	esac
	stop_checked "$pid" "$work/ext.log" || not_ok "stop the TLS server: $stop_why"
done

stopped=0
for r in "$apid:$alog" "$bpid:$blog" "$cpid:$clog"; do
	stop_checked "${r%%:*}" "${r#*:}" && stopped=$((stopped + 1)) || not_ok "stop ${r#*:}: $stop_why"
done
[ "$stopped" = 3 ] && ok "the three replicas stop on SIGTERM, exit 0, no sanitizer report"
finish
