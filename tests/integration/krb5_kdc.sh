# shellcheck shell=bash
# An MIT Kerberos KDC for the integration scripts (sourced after lib.sh, and after
# provider.sh for kdc_slapd_setup): Debian's krb5-kdc (krb5kdc, kdb5_util) and
# krb5-admin-server (kadmin.local only: no kadmind runs), realms made under $work/krb5
# (databases, stash files, kdc.conf, krb5.conf, keytab, log, credential caches: nothing
# outside $work), one krb5kdc on a private 127.0.0.1 port (UDP and TCP) run in the
# foreground (-n) and stopped by PID.
#
# KRB5_CONFIG and KRB5_KDC_PROFILE are exported by kdc_create, so every Kerberos program
# this shell starts (kinit, kadmin.local, krb5kdc, slapd's GSSAPI, ldapwhoami's) reads
# $work/krb5's files and never /etc/krb5.conf or /etc/krb5kdc/kdc.conf; KRB5RCACHEDIR
# too, so slapd's replay cache is not /var/tmp's.
#
# Realm EXAMPLE.COM: users alice and bob ($KDC_PW_alice, $KDC_PW_bob), the service
# ldap/localhost with its key in $kdc_keytab (what slapd's KRB5_KTNAME names), and
# ldap/127.0.0.1, a service the KDC knows but the keytab does not hold. Realm OTHER.COM,
# served by the same krb5kdc: user carol, and a one-way trust (krbtgt/EXAMPLE.COM@OTHER.COM,
# the same key in both databases) so that carol@OTHER.COM gets tickets for EXAMPLE.COM's
# services.
#
# Why localhost: a GSSAPI client asks for the service ticket ldap/HOST, and slapd accepts
# only its own name, ldap/SASL-HOST; so slapd has sasl-host localhost and clients use
# ldap://localhost:PORT (localhost is 127.0.0.1 in /etc/hosts) with -N (SASL_NOCANON:
# HOST is the URI's). Without -N libldap names a peer on 127.0.0.1 after this machine's
# own hostname (ldap/vm here), which no KDC of a test knows. rdns and
# dns_canonicalize_hostname are off in krb5.conf, so the Kerberos library keeps the name.
KDC_REALM=EXAMPLE.COM
KDC_REALM2=OTHER.COM
KDC_PW_alice=Alice.Pass1
# shellcheck disable=SC2034  # read by the sourcing scripts (as ${!v})
KDC_PW_bob=Bob.Pass1
KDC_PW_carol=Carol.Pass1
KDC_MASTER=Master.Key1
KDC_SERVICE=ldap/localhost

# kdc_usable: status 0 when this machine can run the KDC (krb5kdc, kdb5_util,
# kadmin.local, kinit and Cyrus SASL's GSSAPI plugin installed), else 1 with the reason in
# $kdc_why (for lib.sh's skip).
kdc_usable() {
	kdc_why=
	local multiarch
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null || echo x86_64-linux-gnu)
	if ! [ -x /usr/sbin/krb5kdc ] || ! [ -x /usr/sbin/kdb5_util ]; then
		kdc_why="krb5-kdc not installed"
	elif ! [ -x /usr/sbin/kadmin.local ]; then
		kdc_why="krb5-admin-server (kadmin.local) not installed"
	elif ! command -v kinit > /dev/null || ! command -v klist > /dev/null; then
		kdc_why="krb5-user (kinit, klist) not installed"
	elif ! ls "/usr/lib/$multiarch/sasl2/libgssapiv2.so"* > /dev/null 2>&1; then
		kdc_why="libsasl2-modules-gssapi-mit not installed"
	elif [ "$(getent ahostsv4 localhost | awk 'NR==1{print $1}')" != 127.0.0.1 ]; then
		kdc_why="localhost is not 127.0.0.1 here"
	fi
	[ -z "$kdc_why" ]
}

# kdc_admin REALM COMMAND: kadmin.local's COMMAND on REALM's database (needs no kadmind).
kdc_admin() {
	timeout 30 kadmin.local -r "$1" -q "$2" >> "$kdc_dir/kadmin.log" 2>&1
}

# kdc_create: both realms' databases under $work/krb5 ($kdc_dir), its kdc.conf and
# krb5.conf (exported as KRB5_KDC_PROFILE and KRB5_CONFIG), a free port ($kdc_port, the
# KDC's UDP and TCP), the principals and $kdc_keytab. About 0.5 s. kadmin.local's output
# is in $kdc_dir/kadmin.log. Returns 1 (with not_ok)
# when a step fails.
kdc_create() {
	# shellcheck disable=SC2154  # $work: use_work_dir (lib.sh) in the sourcing script
	kdc_dir=$work/krb5
	kdc_keytab=$kdc_dir/ldap.keytab
	local d=$kdc_dir r
	mkdir -p "$d"
	# pick_port reserves the TCP port (free_port asks ss about TCP only); the UDP port of
	# the same number is taken on trust: nothing else of the tests binds UDP there.
	pick_port kdc_port || return 1
	# shellcheck disable=SC2154  # kdc_port: set by pick_port
	cat > "$d/kdc.conf" << EOF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$kdc_port
	kdc_tcp_listen = 127.0.0.1:$kdc_port
[realms]
	$KDC_REALM = {
		database_name = $d/example.db
		key_stash_file = $d/example.stash
		acl_file = $d/kadm5.acl
		max_life = 1h
		max_renewable_life = 1d
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
	$KDC_REALM2 = {
		database_name = $d/other.db
		key_stash_file = $d/other.stash
		acl_file = $d/kadm5.acl
		max_life = 1h
		max_renewable_life = 1d
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$d/kdc.log
	admin_server = FILE:$d/kadmind.log
	default = FILE:$d/krb5lib.log
EOF
	: > "$d/kadm5.acl"
	# clockskew 1: the default (300 s) would let a ticket that ended seconds ago still
	# pass, and the expired-ticket check would need to wait five minutes. Everything
	# runs on this machine's one clock, so 1 s costs nothing. rdns and
	# dns_canonicalize_hostname off: ldap/localhost stays ldap/localhost. [capaths]: carol's
	# client goes straight from OTHER.COM to EXAMPLE.COM (without it, the hierarchical
	# path goes through a realm COM that does not exist).
	cat > "$d/krb5.conf" << EOF
[libdefaults]
	default_realm = $KDC_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	clockskew = 1
	default_ccache_name = FILE:$d/ccache
[realms]
	$KDC_REALM = {
		kdc = 127.0.0.1:$kdc_port
	}
	$KDC_REALM2 = {
		kdc = 127.0.0.1:$kdc_port
	}
[domain_realm]
	localhost = $KDC_REALM
	127.0.0.1 = $KDC_REALM
[capaths]
	$KDC_REALM2 = {
		$KDC_REALM = .
	}
EOF
	export KRB5_CONFIG=$d/krb5.conf KRB5_KDC_PROFILE=$d/kdc.conf
	export KRB5CCNAME=FILE:$d/ccache
	# The replay cache of every acceptor (slapd's GSSAPI): its default is
	# /var/tmp/krb5_UID.rcache2, outside $work.
	export KRB5RCACHEDIR=$d
	for r in "$KDC_REALM" "$KDC_REALM2"; do
		if ! timeout 60 kdb5_util create -s -r "$r" -P "$KDC_MASTER" > "$d/kdb5_util.log" 2>&1; then
			not_ok "kdb5_util create $r: $(tail -3 "$d/kdb5_util.log")"
			return 1
		fi
	done
	# The trust key must be the same in both databases: the same name (its salt) and
	# password make it so, and the same kvno (1, both new).
	if ! kdc_admin "$KDC_REALM" "addprinc -pw $KDC_PW_alice alice" ||
		! kdc_admin "$KDC_REALM" "addprinc -pw $KDC_PW_bob bob" ||
		! kdc_admin "$KDC_REALM" "addprinc -randkey $KDC_SERVICE" ||
		! kdc_admin "$KDC_REALM" "addprinc -randkey ldap/127.0.0.1" ||
		! kdc_admin "$KDC_REALM" "ktadd -k $kdc_keytab -norandkey $KDC_SERVICE" ||
		! kdc_admin "$KDC_REALM2" "addprinc -pw $KDC_PW_carol carol" ||
		! kdc_admin "$KDC_REALM" "addprinc -pw Trust.Key1 krbtgt/$KDC_REALM@$KDC_REALM2" ||
		! kdc_admin "$KDC_REALM2" "addprinc -pw Trust.Key1 krbtgt/$KDC_REALM@$KDC_REALM2"; then
		not_ok "kadmin.local: $(tail -3 "$d/kadmin.log")"
		return 1
	fi
	# kadmin.local answers 0 even when a command fails: the keytab is the proof
	if ! [ -s "$kdc_keytab" ] || grep -q 'error\|while' "$d/kadmin.log"; then
		not_ok "kadmin.local: $(grep -m3 'error\|while' "$d/kadmin.log")"
		return 1
	fi
}

# kdc_start: runs krb5kdc in the foreground (-n) for both realms, waiting until a kinit
# as alice succeeds over UDP and over TCP; sets $kdcpid (added to $pids). Returns 1
# (with not_ok) when it does not within 100 tries 0.1 s apart (each kinit bounded to
# 10 s), or krb5kdc exits.
kdc_start() {
	/usr/sbin/krb5kdc -n -r "$KDC_REALM" -r "$KDC_REALM2" >> "$work/krb5kdc.log" 2>&1 &
	kdcpid=$!
	pids+=("$kdcpid")
	for _ in $(seq 1 100); do
		# in subshells: the caller's KRB5CCNAME stays as it was
		if (kdc_kinit alice "$KDC_PW_alice") > /dev/null 2>&1 &&
			(KDC_TCP=1 kdc_kinit alice "$KDC_PW_alice") > /dev/null 2>&1; then
			kdestroy -q -c "FILE:$kdc_dir/cc.alice" 2> /dev/null
			return 0
		fi
		kill -0 "$kdcpid" 2> /dev/null || break
		sleep 0.1
	done
	not_ok "krb5kdc did not answer: $(tail -5 "$work/krb5kdc.log" "$kdc_dir/kdc.log" 2> /dev/null)"
	return 1
}

# kdc_stop: SIGTERM to $kdcpid, waiting (up to 10 s) until it has exited.
kdc_stop() {
	kill "$kdcpid" 2> /dev/null || return 0
	for _ in $(seq 1 100); do
		kill -0 "$kdcpid" 2> /dev/null || break
		sleep 0.1
	done
	wait "$kdcpid" 2> /dev/null
	return 0
}

# kdc_kinit USER PASS [KINIT_ARGS]: a TGT for USER (alice, or carol@OTHER.COM) in the
# credential cache $kdc_dir/cc.USER (USER's "@" and "/" made "_"), exported as KRB5CCNAME
# (call it in this shell, not in $(...), for the export to hold) and printed. KDC_TCP=1 makes the client use TCP (udp_preference_limit 1, through a
# krb5.conf of its own). Returns kinit's status, its messages on stderr.
kdc_kinit() {
	local user=$1 pass=$2 cc
	shift 2
	cc=FILE:$kdc_dir/cc.${user//[@\/]/_}
	if [ "${KDC_TCP:-}" = 1 ]; then
		[ -f "$kdc_dir/krb5.tcp.conf" ] || sed 's/^\[libdefaults\]$/&\n\tudp_preference_limit = 1/' \
			"$kdc_dir/krb5.conf" > "$kdc_dir/krb5.tcp.conf"
		KRB5_CONFIG=$kdc_dir/krb5.tcp.conf timeout 10 kinit -c "$cc" "$@" "$user" <<< "$pass" > /dev/null || return
	else
		timeout 10 kinit -c "$cc" "$@" "$user" <<< "$pass" > /dev/null || return
	fi
	export KRB5CCNAME=$cc
	echo "$cc"
}

# kdc_slapd_setup: provider.sh's slapd ($work/slapd.conf, example.ldif loaded; call
# provider_setup first) made a GSSAPI acceptor: sasl-host localhost and sasl-realm
# EXAMPLE.COM (slapd's service name is ldap/localhost@EXAMPLE.COM, as in $kdc_keytab),
# authz-regexp mapping EXAMPLE.COM's uid=X,cn=example.com,cn=gssapi,cn=auth to
# uid=X,ou=people,dc=example,dc=com (other realms' identities stay as they are), and
# authz-policy to (a proxy authorization, -X, needs an authzTo in the bound user's
# entry). The sasl settings are global: put before the includes, not after the database
# line that slapd_conf ends with. Start it with kdc_slapd_start.
kdc_slapd_setup() {
	local f=$work/slapd.conf
	{
		cat << EOF
sasl-host localhost
sasl-realm $KDC_REALM
authz-policy to
authz-regexp "^uid=([^,/@]+),cn=example\\.com,cn=gssapi,cn=auth\$" "uid=\$1,ou=people,$EX"
EOF
		cat "$f"
	} > "$f.new" && mv "$f.new" "$f"
}

# kdc_slapd_start [PORT]: provider_start with slapd's GSSAPI reading $kdc_keytab
# (KRB5_KTNAME) and the realms' krb5.conf (KRB5_CONFIG, exported by kdc_create); sets
# $port, $spid and $kdc_uri (ldap://localhost:PORT, the name GSSAPI clients must use).
kdc_slapd_start() {
	KRB5_KTNAME=FILE:$kdc_keytab provider_start "$@" || return 1
	# shellcheck disable=SC2154  # $port: set by provider_start (provider.sh)
	kdc_uri=ldap://localhost:$port
}

# kdc_answer OUT: ldapwhoami's answer in OUT (kdc_whoami's output) as one line: "dn:..."
# or "Code (N): info". kdc_ssf OUT: the client's "SASL SSF" in it (empty: none).
kdc_answer() {
	awk '/^dn:|^u:/ {print; exit}
		/ldap_sasl_interactive_bind: / {sub(/.*ldap_sasl_interactive_bind: /, ""); e = $0; next}
		e && /additional info:/ {sub(/^[ \t]*additional info: /, ""); print e ": " $0; exit}' <<< "$1"
}
kdc_ssf() { sed -n 's/^SASL SSF: //p' <<< "$1"; }

# kdc_whoami [ARGS]: ldapwhoami -Y GSSAPI -N (no reverse DNS) on $kdc_uri (KDC_URI
# instead when set: ldapwhoami refuses a second -H) with the credentials in $KRB5CCNAME
# and ARGS (-O secprops, -X authzid). Prints its stdout and stderr (the "SASL SSF: N"
# line, the answer, or the error with its code).
kdc_whoami() {
	timeout 20 ldapwhoami -Y GSSAPI -N -H "${KDC_URI:-$kdc_uri}" "$@" 2>&1
}
