#!/usr/bin/env bash
# TLS with real clients: ldaps:// and StartTLS with ldapsearch (libldap with
# GnuTLS) and python-ldap, SASL EXTERNAL with a client certificate and over
# ldapi:// (the peer's uid and gid), require_tls,
# client verification, certificate rotation by SIGHUP, start-up errors, large
# responses under every send policy, and hostile handshakes. Certificates are
# made at test time (tls_certs.sh). Every server is minidir on 127.0.0.1,
# started here and stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is

use_work_dir tls

if ! tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1; then
	not_ok "certificates: $(cat "$work/certs.log")"
	echo "# tls: $pass passed, $fail failed"
	exit 1
fi
PKI=$work/pki
# libldap reads these (LDAPNOINIT must not be set: it turns them off too).
unset LDAPNOINIT
export LDAPCONF=/dev/null LDAPRC=/dev/null LDAPTLS_CACERT=$PKI/ca.pem LDAPTLS_REQCERT=demand

# write_conf NAME [extra lines...]: $work/NAME.conf with ldap:// and ldaps:// listeners and TLS.
write_conf() {
	local name=$1
	shift
	{
		echo "listen = ldap://127.0.0.1:0"
		echo "listen = ldaps://127.0.0.1:0/"
		echo "database = $work/db.mdb"
		echo "schema_dir = $SCHEMA_DIR"
		echo "suffix = $BASE"
		echo "rootdn = cn=admin,$BASE"
		echo "rootpw = root-secret"
		echo "tls_cert_file = $PKI/server.pem"
		echo "tls_key_file = $PKI/server.key"
		for l in "$@"; do echo "$l"; done
	} > "$work/$name.conf"
}

# start NAME: starts minidir on NAME.conf; sets pid, port (ldap://) and sport (ldaps://).
start() {
	local name=$1
	start_minidir "$work/$name.conf" "$work/$name.log"
	sport=$(wait_port "$work/$name.log" ldaps)
	if [ -z "$port" ] || [ -z "$sport" ]; then
		not_ok "$name: server did not start: $(cat "$work/$name.log")"
		return 1
	fi
}

stop() {
	stop_checked "$1" "$work/$2.log" || not_ok "$2: $stop_why"
}

# check NAME WANT_RC PATTERN command...: the command exits WANT_RC ("fail": any but 0)
# and its output (stdout and stderr) matches the extended regular expression PATTERN.
check() {
	local name=$1 want=$2 pattern=$3 rc=0
	shift 3
	timeout 10 "$@" > "$work/out" 2>&1 || rc=$?
	if { [ "$rc" = "$want" ] || { [ "$want" = fail ] && [ "$rc" != 0 ]; }; } &&
		grep -qE -- "$pattern" "$work/out"; then
		ok "$name"
	else
		not_ok "$name: exit $rc (want $want), output: $(head -c 400 "$work/out" | tr '\n' ' ')"
	fi
}

# ldapsearch as every check here runs it (timeout runs it, so not a function).
LS=(ldapsearch -x -LLL)

# --- configuration errors: clear, at start-up ----------------------------------------------
write_conf base
"$BUILD/minidir-import" -f "$work/base.conf" "$LDIF" > /dev/null || not_ok "import"
bad_start() { # NAME PATTERN conf-lines...: minidir -t refuses the config with PATTERN
	local name=$1 pattern=$2
	shift 2
	{
		echo "database = $work/db.mdb"
		echo "schema_dir = $SCHEMA_DIR"
		echo "suffix = $BASE"
		for l in "$@"; do echo "$l"; done
	} > "$work/bad.conf"
	check "config: $name" 1 "$pattern" "$BUILD/minidir" -t -f "$work/bad.conf"
}
bad_start "ldaps:// without a certificate" "ldaps:// listener needs tls_cert_file" \
	"listen = ldaps://127.0.0.1:0"
bad_start "a missing certificate file names it" "tls_cert_file $work/nope.pem: No such file" \
	"tls_cert_file = $work/nope.pem" "tls_key_file = $PKI/server.key"
bad_start "a key that does not match the certificate" "does not match the certificate" \
	"tls_cert_file = $PKI/server.pem" "tls_key_file = $PKI/client.key"
bad_start "a certificate file that is not PEM" "tls_cert_file $work/db.mdb" \
	"tls_cert_file = $work/db.mdb" "tls_key_file = $PKI/server.key"
bad_start "demand without a CA file" "needs tls_ca_file" \
	"tls_cert_file = $PKI/server.pem" "tls_key_file = $PKI/server.key" \
	"tls_verify_client = demand"
bad_start "an unknown scheme" "scheme must be ldap://, ldaps://, ldapi://, pldap:// or pldaps://" "listen = http://127.0.0.1:0"
bad_start "tls_ktls without a certificate" "tls_ktls = yes needs tls_cert_file and tls_key_file" "tls_ktls = yes"
bad_start "tls_ktls with a bad value" "tls_ktls" \
	"tls_cert_file = $PKI/server.pem" "tls_key_file = $PKI/server.key" "tls_ktls = maybe"

# --- ldaps:// and StartTLS --------------------------------------------------------------------
write_conf main "tls_ca_file = $PKI/ca.pem" "tls_verify_client = allow"
if start main; then
	L=ldap://127.0.0.1:$port S=ldaps://127.0.0.1:$sport
	check "ldaps:// search" 0 "^cn: User Three" "${LS[@]}" -H "$S" -b "$BASE" "(uid=user3)" cn
	check "StartTLS (-ZZ) search" 0 "^cn: User Three" "${LS[@]}" -ZZ -H "$L" -b "$BASE" "(uid=user3)" cn
	check "a CA that did not sign the certificate fails" fail "Can't contact|certificate" \
		env LDAPTLS_CACERT="$PKI/other-ca.pem" ldapsearch -x -LLL -H "$S" -b "$BASE" "(uid=user3)"
	check "StartTLS on a TLS connection: operationsError" 1 "Operations error|already" \
		"${LS[@]}" -ZZ -H "$S" -b "" -s base
	n=$("${LS[@]}" -H "$S" -b "$BASE" "(objectClass=*)" 1.1 | grep -c '^dn:')
	want=$(grep -c '^dn:' "$LDIF")
	[ "$n" = "$want" ] && ok "ldaps:// subtree search: all $n entries" ||
		not_ok "ldaps:// subtree search: $n entries, want $want"
	check "root DSE lists StartTLS and EXTERNAL" 0 "1.3.6.1.4.1.1466.20037" \
		"${LS[@]}" -H "$L" -b "" -s base supportedExtension supportedSASLMechanisms
	grep -q "^supportedSASLMechanisms: EXTERNAL" "$work/out" && ok "root DSE: supportedSASLMechanisms EXTERNAL" ||
		not_ok "root DSE: no supportedSASLMechanisms EXTERNAL"
	check "SASL EXTERNAL with a client certificate (ldaps://)" 0 "^dn:cn=client,o=minidir test$" \
		env LDAPTLS_CERT="$PKI/client.pem" LDAPTLS_KEY="$PKI/client.key" ldapwhoami -Y EXTERNAL -H "$S"
	check "SASL EXTERNAL after StartTLS" 0 "^dn:cn=client,o=minidir test$" \
		env LDAPTLS_CERT="$PKI/client.pem" LDAPTLS_KEY="$PKI/client.key" ldapwhoami -ZZ -Y EXTERNAL -H "$L"
	# libldap's SASL client will not even try EXTERNAL without a certificate; python-ldap's
	# sasl_bind_s sends the bind as it is.
	for url in "$S" "$L"; do
		check "SASL EXTERNAL without a client certificate ($url): inappropriateAuthentication" 0 "^48$" \
			"$PYTHON" -c "
import ldap
c = ldap.initialize('$url')
c.set_option(ldap.OPT_X_TLS_CACERTFILE, '$PKI/ca.pem')
c.set_option(ldap.OPT_X_TLS_NEWCTX, 0)
try:
    c.sasl_bind_s('', 'EXTERNAL', b'')
    print('bound')
except ldap.INAPPROPRIATE_AUTH:
    print(48)"
	done
	check "simple bind over TLS" 0 "^dn:cn=admin,$BASE$" \
		ldapwhoami -x -H "$S" -D "cn=admin,$BASE" -w root-secret
	if [ -x "$PYTHON" ] && "$PYTHON" -c 'import ldap' 2> /dev/null; then
		check "python-ldap start_tls_s()" 0 "^User Three$" "$PYTHON" -c "
import ldap, sys
c = ldap.initialize('$L')
c.set_option(ldap.OPT_X_TLS_CACERTFILE, '$PKI/ca.pem')
c.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_DEMAND)
c.set_option(ldap.OPT_X_TLS_NEWCTX, 0)
c.start_tls_s()
r = c.search_s('$BASE', ldap.SCOPE_SUBTREE, '(uid=user3)', ['cn'])
print(r[0][1]['cn'][0].decode())"
	else
		not_ok "python-ldap is not installed (scripts/deps.sh installs python3-ldap)"
	fi
	# cn=monitor counts the sessions.
	check "cn=tls,cn=monitor counts handshakes" 0 "^handshakes: [1-9]" \
		"${LS[@]}" -H "$S" -D "cn=admin,$BASE" -w root-secret -b "cn=tls,cn=monitor" -s base

	# Hostile: garbage instead of a ClientHello, a handshake cut halfway, a flood.
	printf 'GET / HTTP/1.0\r\n\r\n' | timeout 5 bash -c "cat > /dev/tcp/127.0.0.1/$sport" 2> /dev/null
	check "garbage instead of a ClientHello: others still served" 0 "^cn: User Three" \
		"${LS[@]}" -H "$S" -b "$BASE" "(uid=user3)" cn
	grep -q "TLS handshake" "$work/main.log" && ok "garbage: the failed handshake is logged" ||
		not_ok "garbage: no log line about the failed handshake"
	flood=()
	for _ in $(seq 1 20); do
		timeout 2 openssl s_client -connect "127.0.0.1:$sport" -CAfile "$PKI/ca.pem" < /dev/null > /dev/null 2>&1 &
		flood+=($!)
	done
	wait "${flood[@]}"
	check "after 20 handshakes that end at once: still served" 0 "^cn: User Three" \
		"${LS[@]}" -H "$S" -b "$BASE" "(uid=user3)" cn
	# A session ticket from one connection resumes the next. The server sends TLS 1.3 tickets
	# with the first response, or within about a second: this client asks nothing, so it waits.
	sleep 1.6 | timeout 5 openssl s_client -connect "127.0.0.1:$sport" -CAfile "$PKI/ca.pem" \
		-sess_out "$work/sess" > /dev/null 2>&1
	check "a session ticket resumes the next handshake" 0 "^Reused, TLSv1" \
		openssl s_client -connect "127.0.0.1:$sport" -CAfile "$PKI/ca.pem" -sess_in "$work/sess" < /dev/null
	# TLS 1.2 renegotiation is refused; the server goes on serving.
	(echo R; sleep 1) | timeout 5 openssl s_client -tls1_2 -connect "127.0.0.1:$sport" \
		-CAfile "$PKI/ca.pem" > "$work/reneg" 2>&1
	if grep -q "RENEGOTIATING" "$work/reneg" && sed -n '/RENEGOTIATING/,$p' "$work/reneg" | grep -q "no renegotiation"; then
		ok "TLS 1.2 renegotiation: refused (no_renegotiation)"
	else
		not_ok "TLS 1.2 renegotiation was not refused: $(sed -n '/RENEGOTIATING/,$p' "$work/reneg" | head -3)"
	fi
	# Closed in the middle of a record: a header announcing 16 KiB, 100 bytes, then close.
	"$PYTHON" -c "
import os, socket, ssl
ctx = ssl.create_default_context(cafile='$PKI/ca.pem')
s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', $sport)), server_hostname='localhost')
os.write(s.fileno(), b'\x17\x03\x03\x40\x00' + b'x' * 100)
os._exit(0)" > "$work/midrecord" 2>&1 || not_ok "mid-record client: $(cat "$work/midrecord")"
	check "after a client closed mid-record: still served" 0 "^cn: User Three" \
		"${LS[@]}" -H "$S" -b "$BASE" "(uid=user3)" cn
	check "cn=tls,cn=monitor counts resumed handshakes" 0 "^resumedHandshakes: [1-9]" \
		"${LS[@]}" -H "$S" -D "cn=admin,$BASE" -w root-secret -b "cn=tls,cn=monitor" -s base

	# searchrate's lean engine (OpenSSL): a handshake per search, full, then resumed, each
	# counted by the server as well; StartTLS, a bind, and pipelined subtree searches.
	tlsmon() { "${LS[@]}" -H "$S" -D "cn=admin,$BASE" -w root-secret -b "cn=tls,cn=monitor" -s base "$1" | sed -n "s/^$1: //p"; }
	srun() { # NAME args...: searchrate on 127.0.0.1, 2 intervals of 0.5 s; $work/NAME
		local name=$1
		shift
		timeout 60 "$BUILD/searchrate" -h 127.0.0.1 -i 0.5 -I 2 "$@" > "$work/$name" 2>&1
		src=$?
	}
	sval() { sed -n "s/^ *$2: *\([0-9][0-9]*\).*/\1/p" "$work/$1" | head -1; }
	h0=$(tlsmon handshakes) r0=$(tlsmon resumedHandshakes)
	srun srfull -p "$sport" -Z -P "$PKI/ca.pem" -b "$BASE" -f "(uid=user[1-3])" -t 2 --iterationsBeforeReconnect 1
	n=$(sval srfull Reconnects) h1=$(tlsmon handshakes) r1=$(tlsmon resumedHandshakes)
	if [ "$src" = 0 ] && [ "${n:-0}" -gt 0 ] && [ "$(sval srfull "Total errors")" = 0 ] &&
		[ $((h1 - h0)) -ge "$n" ] && [ "$r1" = "$r0" ]; then
		ok "searchrate lean, a full handshake per search: $n reconnects, the server counts $((h1 - h0)) handshakes, none resumed"
	else
		not_ok "searchrate lean, full handshakes: exit $src, ${n:-no} reconnects, handshakes $h0 -> $h1, resumed $r0 -> $r1: $(head -c 600 "$work/srfull")"
	fi
	srun srres -p "$sport" -Z -P "$PKI/ca.pem" -b "$BASE" -f "(uid=user[1-3])" -t 2 --iterationsBeforeReconnect 1 --resumeTLSSessions
	n=$(sval srres Reconnects) res=$(sval srres "Resumed TLS sessions") r2=$(tlsmon resumedHandshakes)
	if [ "$src" = 0 ] && [ "${n:-0}" -gt 0 ] && [ "$(sval srres "Total errors")" = 0 ] &&
		[ "${res:-0}" -ge $((n - 2)) ] && [ $((r2 - r1)) -ge "${res:-1}" ]; then
		ok "searchrate lean --resumeTLSSessions: $res of $n reconnects resumed, the server counts $((r2 - r1))"
	else
		not_ok "searchrate lean --resumeTLSSessions: exit $src, ${res:-no} resumed of ${n:-no}, server resumed $r1 -> $r2: $(head -c 600 "$work/srres")"
	fi
	want=$(grep -c '^dn:' "$LDIF")
	srun srst -p "$port" -q -P "$PKI/ca.pem" -D "cn=admin,$BASE" -w root-secret -b "$BASE" -a -O 20 -t 2 --numConnections 4
	if [ "$src" = 0 ] && [ "$(sval srst "Total errors")" = 0 ] && grep -q "^ *Total entries: .*($want.000 per search)" "$work/srst"; then
		ok "searchrate lean --useStartTLS, a bind, 20 pipelined subtree searches of $want entries"
	else
		not_ok "searchrate lean --useStartTLS subtree searches: exit $src: $(head -c 600 "$work/srst")"
	fi
	srun srbad -p "$sport" -Z -P "$PKI/other-ca.pem" -b "$BASE"
	if [ "$src" = 1 ] && grep -q "^searchrate: cannot connect to ldaps://127.0.0.1:$sport: .*certificate verify failed.*certificate was rejected" "$work/srbad"; then
		ok "searchrate lean trusting another CA: exit 1, the certificate rejected"
	else
		not_ok "searchrate lean trusting another CA: exit $src: $(head -c 400 "$work/srbad")"
	fi
	stop "$pid" main
fi

# --- kernel TLS (tls_ktls) ---------------------------------------------------------------------
# Whether this kernel has the tls ULP: it attaches to connected sockets only, so an unconnected
# one answers ENOTCONN where it exists and ENOENT where it does not.
ulp=$("$PYTHON" -c "
import errno, socket
s = socket.socket()
try:
    s.setsockopt(socket.IPPROTO_TCP, 31, b'tls')
    print('yes')
except OSError as e:
    print('yes' if e.errno == errno.ENOTCONN else 'no')")
mon_tls() { "${LS[@]}" -H "ldaps://127.0.0.1:$sport" -D "cn=admin,$BASE" -w root-secret -b "cn=tls,cn=monitor" -s base "$1" | sed -n "s/^$1: //p"; }
write_conf plain_tls
if start plain_tls; then
	[ "$(mon_tls kernelTls)" = FALSE ] && ok "without tls_ktls: kernelTls FALSE" || not_ok "without tls_ktls: kernelTls $(mon_tls kernelTls)"
	grep -q "kernel TLS" "$work/plain_tls.log" && not_ok "without tls_ktls: a kernel TLS line in the log" || ok "without tls_ktls: nothing logged about kernel TLS"
	stop "$pid" plain_tls
fi
write_conf ktls "tls_ktls = yes" "send_policy = msg-more"
if start ktls; then
	if [ "$ulp" = no ]; then
		grep -q "info: TLS: kernel TLS requested but this kernel has no tls ULP: setsockopt TCP_ULP \"tls\": No such file or directory; using userspace TLS" "$work/ktls.log" &&
			ok "tls_ktls = yes on a kernel without the tls ULP: logged, userspace TLS" ||
			not_ok "tls_ktls = yes without the tls ULP: no clear log line: $(grep -i kernel "$work/ktls.log")"
		want_k=FALSE
	else
		grep -q "info: TLS: kernel TLS on (tls_ktls)" "$work/ktls.log" && ok "tls_ktls = yes on a kernel with the tls ULP: logged" ||
			not_ok "tls_ktls = yes with the tls ULP: not logged: $(grep -i kernel "$work/ktls.log")"
		want_k=TRUE
	fi
	check "tls_ktls: ldaps:// search" 0 "^cn: User Three" "${LS[@]}" -H "ldaps://127.0.0.1:$sport" -b "$BASE" "(uid=user3)" cn
	check "tls_ktls: StartTLS search" 0 "^cn: User Three" "${LS[@]}" -ZZ -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user3)" cn
	n=$("${LS[@]}" -H "ldaps://127.0.0.1:$sport" -b "$BASE" "(objectClass=*)" | grep -c '^dn:')
	[ "$n" = "$(grep -c '^dn:' "$LDIF")" ] && ok "tls_ktls: subtree search over ldaps://, all $n entries" ||
		not_ok "tls_ktls: subtree search: $n entries"
	k=$(mon_tls kernelTls) kc=$(mon_tls kernelTlsConnections)
	if [ "$k" = "$want_k" ] && { [ "$want_k" = TRUE ] || [ "$kc" = 0 ]; } && [ -n "$kc" ]; then
		ok "tls_ktls: cn=tls,cn=monitor kernelTls $k, kernelTlsConnections $kc"
	else
		not_ok "tls_ktls: cn=tls,cn=monitor kernelTls ${k:-none} (want $want_k), kernelTlsConnections ${kc:-none}"
	fi
	stop "$pid" ktls
fi
# The kernel TLS handshake (OpenSSL writes to the socket) and the way back to records made in
# user space when the kernel does not take the keys: MINIDIR_KTLS_ASSUME=1 makes the probe
# succeed on a kernel without the ULP (server/tls.h).
if [ "$ulp" = no ]; then
	write_conf ktls_assume "tls_ktls = yes" "send_policy = batch"
	export MINIDIR_KTLS_ASSUME=1
	start ktls_assume
	started=$?
	unset MINIDIR_KTLS_ASSUME
	if [ "$started" = 0 ]; then
		grep -q "info: TLS: kernel TLS on (tls_ktls)" "$work/ktls_assume.log" && ok "kernel TLS assumed: logged as on" ||
			not_ok "kernel TLS assumed: not logged: $(grep -i kernel "$work/ktls_assume.log")"
		check "kernel TLS assumed: ldaps:// search" 0 "^cn: User Three" "${LS[@]}" -H "ldaps://127.0.0.1:$sport" -b "$BASE" "(uid=user3)" cn
		check "kernel TLS assumed: StartTLS search" 0 "^cn: User Three" "${LS[@]}" -ZZ -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user3)" cn
		srun srk -p "$sport" -Z -P "$PKI/ca.pem" -b "$BASE" -a -O 20 -t 2 --numConnections 4 --iterationsBeforeReconnect 50 --resumeTLSSessions
		if [ "$src" = 0 ] && [ "$(sval srk "Total errors")" = 0 ] && [ "$(sval srk "Reconnects")" -gt 0 ] &&
			grep -q "^ *Total entries: .*($(grep -c '^dn:' "$LDIF").000 per search)" "$work/srk"; then
			ok "kernel TLS assumed: searchrate, pipelined subtree searches, reconnects, resumed"
		else
			not_ok "kernel TLS assumed: searchrate: exit $src: $(head -c 600 "$work/srk")"
		fi
		k=$(mon_tls kernelTls) kc=$(mon_tls kernelTlsConnections) hf=$(mon_tls handshakeFailures)
		[ "$k" = TRUE ] && [ "$kc" = 0 ] && [ "$hf" = 0 ] &&
			ok "kernel TLS assumed: kernelTls TRUE, kernelTlsConnections 0 (the kernel took no keys), no failures" ||
			not_ok "kernel TLS assumed: kernelTls ${k:-none}, kernelTlsConnections ${kc:-none}, handshakeFailures ${hf:-none}"
		stop "$pid" ktls_assume
	fi
fi

# --- ldapi:// (a Unix socket) and SASL EXTERNAL by the peer's uid and gid -------------------------
me_uid=$(id -u) me_gid=$(id -g)
peer_dn="gidNumber=$me_gid+uidNumber=$me_uid,cn=peercred,cn=external,cn=auth"
printf '%s\n' "listen = 127.0.0.1:0" "listen = ldapi://$work/ldapi" "database = $work/db.mdb" \
	"schema_dir = $SCHEMA_DIR" "suffix = $BASE" "rootdn = $peer_dn" > "$work/local.conf"
start_local() { start_minidir "$work/local.conf" "$work/local.log"; }
start_local
I="ldapi://$(printf '%s' "$work/ldapi" | sed 's#/#%2F#g')"
if [ -S "$work/ldapi" ] && [ "$(stat -c %a "$work/ldapi")" = 666 ]; then
	ok "ldapi: the socket exists, mode 666"
else
	not_ok "ldapi: no socket at $work/ldapi (or not mode 666): $(ls -l "$work/ldapi" 2>&1)"
fi
check "ldapi: a search" 0 "^cn: User Three" "${LS[@]}" -H "$I" -b "$BASE" "(uid=user3)" cn
check "ldapi: SASL EXTERNAL is the peer's uid and gid" 0 "^dn:${peer_dn//+/\\+}$" ldapwhoami -Y EXTERNAL -H "$I"
check "ldapi: that identity as rootdn reads userPassword" 0 "^userPassword" \
	ldapsearch -LLL -Y EXTERNAL -H "$I" -b "uid=user1,ou=people,$BASE" -s base userPassword
check "ldapi: the root DSE lists EXTERNAL" 0 "^supportedSASLMechanisms: EXTERNAL" \
	"${LS[@]}" -H "$I" -b "" -s base supportedSASLMechanisms
check "ldapi: a second server refuses the served socket" 1 "another process serves this socket" \
	"$BUILD/minidir" -f "$work/local.conf"
stop "$pid" local
if [ -e "$work/ldapi" ]; then
	not_ok "ldapi: the socket file is left after a stop"
else
	ok "ldapi: the socket file is removed at stop"
fi
# A socket file left by a server killed outright is replaced at the next start.
start_local
kill -9 "$pid"
wait "$pid" 2> /dev/null
start_local
check "ldapi: a stale socket file is replaced" 0 "^cn: User Three" "${LS[@]}" -H "$I" -b "$BASE" "(uid=user3)" cn
kill -0 "$pid" 2> /dev/null || echo "# the restarted server has exited: $(tail -n 3 "$work/local.log" | tr '\n' ' ')"
stop "$pid" local

# --- a StartTLS request the server cannot honour ----------------------------------------------
cat > "$work/plain.conf" << EOF
listen = 127.0.0.1:0
database = $work/db.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
EOF
start_minidir "$work/plain.conf" "$work/plain.log"
check "StartTLS without TLS configured: a clear error" 1 "TLS is not configured" \
	"${LS[@]}" -ZZ -H "ldap://127.0.0.1:$port" -b "" -s base
stop "$pid" plain

# --- require_tls, demand, handshake timeout ----------------------------------------------------
# Short, so that the silent client below is closed soon; under the sanitizers (about ten
# times slower) a real handshake with a client certificate can itself take a second.
case $BUILD in *san*) hs_timeout=4 ;; *) hs_timeout=1 ;; esac
write_conf strict "require_tls = yes" "tls_ca_file = $PKI/ca.pem" "tls_verify_client = demand" \
	"tls_handshake_timeout = $hs_timeout"
if start strict; then
	L=ldap://127.0.0.1:$port S=ldaps://127.0.0.1:$sport
	check "require_tls: a plaintext search is confidentialityRequired (13)" 13 "" \
		"${LS[@]}" -H "$L" -b "$BASE" "(uid=user3)"
	check "require_tls: a plaintext bind is confidentialityRequired (13)" 13 "" \
		ldapwhoami -x -H "$L" -D "cn=admin,$BASE" -w root-secret
	check "require_tls: the root DSE stays readable" 0 "^namingContexts: $BASE" \
		"${LS[@]}" -H "$L" -b "" -s base namingContexts
	check "demand: no client certificate, no session" fail "" "${LS[@]}" -H "$S" -b "" -s base
	check "demand: StartTLS with a client certificate, then search" 0 "^cn: User Three" \
		env LDAPTLS_CERT="$PKI/client.pem" LDAPTLS_KEY="$PKI/client.key" \
		ldapsearch -x -LLL -ZZ -H "$L" -b "$BASE" "(uid=user3)" cn
	# A client that connects and says nothing is closed after tls_handshake_timeout.
	exec 7<> "/dev/tcp/127.0.0.1/$sport"
	if timeout $((hs_timeout + 4)) cat <&7 > /dev/null; then
		ok "a silent client is closed by tls_handshake_timeout"
	else
		not_ok "a silent client was not closed within $((hs_timeout + 4)) s (tls_handshake_timeout = $hs_timeout)"
	fi
	exec 7>&-
	grep -q "tls_handshake_timeout" "$work/strict.log" && ok "handshake timeout logged" ||
		not_ok "handshake timeout not logged"
	stop "$pid" strict
fi

# --- certificate rotation by SIGHUP ------------------------------------------------------------
write_conf rot "tls_cert_file = $work/rot.pem" "tls_key_file = $work/rot.key"
sed -i '/tls_cert_file = .*server.pem/d; /tls_key_file = .*server.key/d' "$work/rot.conf"
cp "$PKI/server.pem" "$work/rot.pem"
cp "$PKI/server.key" "$work/rot.key"
serial() { # PORT: the serial of the certificate the server presents
	timeout 5 openssl s_client -connect "127.0.0.1:$1" -CAfile "$PKI/ca.pem" < /dev/null 2> /dev/null |
		openssl x509 -noout -serial 2> /dev/null
}
if start rot; then
	before=$(serial "$sport")
	tests/integration/tls_certs.sh "$work/pki2" > /dev/null 2>&1
	# A bad file first: logged, the old certificate kept.
	echo "not a certificate" > "$work/rot.pem"
	kill -HUP "$pid"
	sleep 0.5
	[ "$(serial "$sport")" = "$before" ] && ok "SIGHUP with a bad certificate keeps the old one" ||
		not_ok "SIGHUP with a bad certificate: serial $(serial "$sport"), was $before"
	grep -q "TLS keeps its certificate" "$work/rot.log" && ok "the bad certificate is logged" ||
		not_ok "the bad certificate was not logged"
	cp "$work/pki2/server.pem" "$work/rot.pem"
	cp "$work/pki2/server.key" "$work/rot.key"
	kill -HUP "$pid"
	sleep 0.5
	after=$(timeout 5 openssl s_client -connect "127.0.0.1:$sport" -CAfile "$work/pki2/ca.pem" < /dev/null 2> /dev/null |
		openssl x509 -noout -serial 2> /dev/null)
	[ -n "$after" ] && [ "$after" != "$before" ] && ok "SIGHUP rotates the certificate ($before -> $after)" ||
		not_ok "SIGHUP did not rotate the certificate ($before -> $after)"
	stop "$pid" rot
fi

# --- large responses under each send policy: the same bytes as plaintext ---------------------
sh bench/gen-ldif.sh 2000 "$BASE" 600 > "$work/big.ldif"
for policy in batch msg-more nodelay-once cork-toggle; do
	write_conf "p-$policy" "send_policy = $policy" "sizelimit = unlimited"
	sed -i "s#database = .*#database = $work/big.mdb#" "$work/p-$policy.conf"
	[ -f "$work/big.mdb" ] || "$BUILD/minidir-import" -q -f "$work/p-$policy.conf" "$work/big.ldif" > /dev/null
	start "p-$policy" || continue
	"${LS[@]}" -H "ldap://127.0.0.1:$port" -b "$BASE" "(objectClass=*)" > "$work/plain.out" 2>&1
	mon() { # FIELD: the policy's counter in cn=monitor (over plaintext, so TLS counts only the search)
		"${LS[@]}" -H "ldap://127.0.0.1:$port" -D "cn=admin,$BASE" -w root-secret \
			-b "cn=$policy,cn=monitor" -s base "$1" | sed -n "s/^$1: //p"
	}
	r0=$(mon tlsRecords) b0=$(mon bytes) s0=$(mon sendCalls)
	"${LS[@]}" -H "ldaps://127.0.0.1:$sport" -b "$BASE" "(objectClass=*)" > "$work/tls.out" 2>&1
	n=$(grep -c '^dn:' "$work/tls.out")
	if [ "$n" -ge 2000 ] && cmp -s "$work/plain.out" "$work/tls.out"; then
		ok "$policy: 2000-entry search over TLS matches plaintext ($n entries)"
	else
		not_ok "$policy: TLS answer differs from plaintext ($n entries)"
	fi
	# Records: batch and msg-more gather, so their records are full (16 KiB) but the last
	# of a response; the bytes include handshake and monitor reads, hence the slack of 6.
	records=$(($(mon tlsRecords) - r0)) bytes=$(($(mon bytes) - b0)) sends=$(($(mon sendCalls) - s0))
	full=$((bytes / 16406))
	case $policy in
	batch | msg-more)
		if [ "$records" -le $((full + 6)) ]; then
			ok "$policy: $records TLS records for $bytes bytes (full records: $full), $sends sends"
		else
			not_ok "$policy: $records TLS records for $bytes bytes: not full records (want <= $((full + 6)))"
		fi
		;;
	esac
	stop "$pid" "p-$policy"
done

echo "# tls: $pass passed, $fail failed"
[ "$fail" = 0 ]
