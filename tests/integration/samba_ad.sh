# shellcheck shell=bash
# A Samba Active Directory domain controller for the integration scripts (sourced after
# lib.sh): Debian's samba-ad-dc (Samba 4.17), a domain provisioned by samba-tool under
# $work/ad (database, smb.conf, TLS key, sockets, pid file, logs: nothing outside $work),
# run in the foreground in one process (-M single) and stopped by PID. Realm EXAMPLE.COM,
# NetBIOS domain EXAMPLE, base DC=example,DC=com, no DNS server (--dns-backend=NONE), only
# the LDAP service (server services = ldap: no smbd, KDC, RPC, NetBIOS or winbindd).
#
# Ports: Samba's LDAP server listens on 389, 636, 3268 and 3269 whatever smb.conf says (no
# option moves them). So the DC runs alone in a network namespace of its own (unshare -n,
# its loopback up, nothing else in it; gone when the DC exits: nothing to remove), and
# ns_relay.py relays two private ports of the host's 127.0.0.1 into it: $ad_uri
# (ldap://127.0.0.1:$ad_port, to 389) and $ad_ldaps (ldaps://127.0.0.1:$ad_port+1, to
# 636; the TLS is the DC's own, with the self-signed certificate Samba makes at its first
# start). Making the namespace needs root (CAP_SYS_ADMIN): ad_usable says why not.
#
# What Samba wants of a client: a simple bind only over TLS (ldaps, or StartTLS on
# $ad_uri; plain ldap and even ldapi answer "Strong(er) authentication required"); no
# anonymous search but of the root DSE. ad_search / ad_modify bind as Administrator over
# ldaps without checking the certificate. The DC's files are reachable from the host too:
# ad_tool runs samba-tool on its sam.ldb directly (while it runs, as on a real DC).
AD_REALM=EXAMPLE.COM
AD_DOMAIN=EXAMPLE
AD_BASE=DC=example,DC=com
AD_ADMIN=Administrator@example.com
# shellcheck disable=SC2034  # read by the sourcing scripts
AD_ADMIN_DN=CN=Administrator,CN=Users,$AD_BASE
AD_PW=Passw0rd.AD

# ad_usable: status 0 when this machine can run the DC (samba-tool installed, root, a
# network namespace can be made), else 1 with the reason in $ad_why (for lib.sh's skip).
ad_usable() {
	ad_why=
	if ! command -v samba-tool > /dev/null || ! [ -x /usr/sbin/samba ]; then
		ad_why="samba-ad-dc not installed"
	elif [ "$(id -u)" != 0 ]; then
		ad_why="needs root"
	elif ! unshare -n true 2> /dev/null; then
		ad_why="cannot make a network namespace"
	fi
	[ -z "$ad_why" ]
}

# ad_provision: the domain under $work/ad (about 7 s), its smb.conf $ad_conf, and two free
# ports ($ad_port, $ad_port+1: $ad_uri, $ad_ldaps). Returns 1 (with not_ok) when
# samba-tool fails.
ad_provision() {
	# shellcheck disable=SC2154  # $work: use_work_dir (lib.sh) in the sourcing script
	local d=$work/ad
	mkdir -p "$d/run" "$d/log"
	# An empty configuration read instead of /etc/samba/smb.conf, whose [global] settings
	# and shares samba-tool would otherwise copy into the new smb.conf.
	: > "$d/empty.conf"
	pick_port ad_port 2 || return 1
	# shellcheck disable=SC2154  # ad_port: set by pick_port
	ad_uri=ldap://127.0.0.1:$ad_port
	ad_ldaps=ldaps://127.0.0.1:$((ad_port + 1))
	ad_conf=$d/etc/smb.conf
	# --targetdir puts private, state, lock, cache and binddns dirs under $d; the options
	# put the rest there (their defaults are under /run/samba, /var/lib/samba and
	# /var/log/samba). server services = ldap: the DC's LDAP server only.
	if ! timeout 300 samba-tool domain provision -s "$d/empty.conf" --targetdir="$d" \
		--realm="$AD_REALM" --domain="$AD_DOMAIN" --server-role=dc --dns-backend=NONE \
		--adminpass="$AD_PW" --host-name=dc1 --host-ip=127.0.0.1 \
		--option="pid directory = $d/run" \
		--option="ncalrpc dir = $d/run/ncalrpc" \
		--option="winbindd socket directory = $d/run/winbindd" \
		--option="ntp signd socket directory = $d/run/ntp_signd" \
		--option="log file = $d/log/samba.log" \
		--option="interfaces = lo" --option="bind interfaces only = yes" \
		--option="server services = ldap" \
		> "$work/ad_provision.log" 2>&1; then
		not_ok "samba-tool domain provision: $(grep -v '^INFO' "$work/ad_provision.log" | tail -5)"
		return 1
	fi
}

# ad_start: runs samba in the foreground in a new network namespace and the relay into it,
# waiting until the root DSE answers through the relay; sets $adpid (samba, added to
# $pids) and $ad_relay (the relay, added too). The first start makes the TLS key (about
# 2 s in all). Returns 1 (with not_ok) when it does not answer within 60 s.
ad_start() {
	local me i
	me=$(readlink /proc/self/ns/net)
	# unshare and sh exec: $adpid is samba's PID. stdin: /dev/null (samba -i, not used,
	# would exit at its end).
	# shellcheck disable=SC2016  # expanded by the inner sh
	unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
		samba -F -M single --debug-stdout -d 1 -s "$ad_conf" \
		>> "$work/samba.log" 2>&1 < /dev/null &
	adpid=$!
	pids+=("$adpid")
	# the relay must enter the DC's namespace, not the one unshare started in
	for i in $(seq 1 100); do
		[ "$(readlink "/proc/$adpid/ns/net" 2> /dev/null)" != "$me" ] && break
		sleep 0.02
	done
	python3 tests/integration/ns_relay.py "$adpid" "$ad_port:389" "$((ad_port + 1)):636" \
		> "$work/ad_relay.log" 2>&1 &
	ad_relay=$!
	pids+=("$ad_relay")
	for i in $(seq 1 600); do
		if [ "$i" -gt 20 ] && ! grep -q listening "$work/ad_relay.log"; then
			not_ok "ns_relay.py did not start: $(tail -3 "$work/ad_relay.log")"
			return 1
		fi
		timeout 5 ldapsearch -x -H "$ad_uri" -LLL -b "" -s base highestCommittedUSN 2> /dev/null |
			grep -q '^highestCommittedUSN:' && return 0
		kill -0 "$adpid" 2> /dev/null || break
		sleep 0.1
	done
	not_ok "samba did not start: $(tail -5 "$work/samba.log")"
	return 1
}

# ad_stop: SIGTERM to $adpid, waiting (up to 30 s) until it has exited, then stops the
# relay (ad_start starts both again, on the same ports).
ad_stop() {
	local p
	for p in "$adpid" "$ad_relay"; do
		kill "$p" 2> /dev/null || continue
		for _ in $(seq 1 300); do
			kill -0 "$p" 2> /dev/null || break
			sleep 0.1
		done
		wait "$p" 2> /dev/null
	done
	return 0
}

# ad_search ARGS / ad_modify ARGS: ldapsearch / ldapmodify as Administrator over ldaps
# (the certificate not checked: LDAPTLS_REQCERT=never, which LDAPNOINIT, set by
# provider.sh, would make libldap ignore; LDAPCONF and LDAPRC keep the machine's and the
# user's ldap.conf out).
ad_ldap() {
	env -u LDAPNOINIT LDAPTLS_REQCERT=never LDAPCONF=/dev/null LDAPRC=minidir-no-ldaprc \
		timeout 30 "$@"
}
ad_search() {
	ad_ldap ldapsearch -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" "$@"
}
# shellcheck disable=SC2120  # ARGS: the sourcing scripts pass them
ad_modify() {
	ad_ldap ldapmodify -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" "$@"
}

# ad_tool ARGS: samba-tool ARGS on the DC's database (its smb.conf names it), e.g.
# `ad_tool user add alice 'Alice.Pass1'` or `ad_tool group addmembers staff alice`.
ad_tool() {
	timeout 60 samba-tool "$@" -s "$ad_conf"
}

# ad_dirsync COOKIE ARGS: a DirSync search (flags 0, no attribute count limit) as
# Administrator of the whole domain (DirSync answers only at a naming context's root),
# from COOKIE (base64, as ldapsearch prints it; empty: from the start), with ldapsearch's
# further ARGS (filter, attributes). Prints the LDIF; the new cookie is its
# "# cookie:: " line (ad_cookie reads it).
ad_dirsync() {
	local c=$1
	shift
	ad_search -o ldif-wrap=no -b "$AD_BASE" -E "!dirSync=0/0${c:+/$c}" "$@"
}
# ad_cookie: the cookie of ad_dirsync's output on stdin.
ad_cookie() {
	sed -n 's/^# cookie:: //p'
}
