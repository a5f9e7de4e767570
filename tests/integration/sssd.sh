# shellcheck shell=bash
# SSSD's ldap provider as a client of the integration scripts (sourced after lib.sh):
# Debian's sssd-ldap and libnss-sss. sssd_ids NAME URI BINDDN PW BASE USER... runs an sssd
# (nss responder only, one domain "example.com", id_provider = ldap, ldap_schema = ad,
# IDs mapped from objectSid, groups from tokenGroups: SSSD's defaults for AD) against URI in a private mount namespace of its own: its
# configuration, caches, pipes and logs on tmpfs mounts over /etc/sssd, /var/lib/sss and
# /var/log/sssd there (nothing of the machine's is read or written; gone when it exits),
# /etc/nsswitch.conf replaced there by one that asks files then sss. It prints, for each
# USER, "USER: " and the names of the groups `id USER@example.com` lists (each looked up by
# its ID with getent), sorted, comma-separated; "USER: none" when sssd does not know the
# user (after three tries half a second apart). Every wait is
# bounded; sssd is stopped by PID inside the namespace. Needs root (unshare -m); logs in
# $work/sssd-NAME.log.
#
# SSSD_AUTH, when set, replaces the domain's schema and bind lines (ldap_schema = ad, the
# simple bind as BINDDN with PW, IDs from objectSid), e.g. for a GSSAPI bind with a keytab;
# SSSD_KRB5_CONF, a krb5.conf bound over /etc/krb5.conf in the namespace (sssd's
# ldap_child reads it to reach the KDC).
sssd_usable() {
	sssd_why=
	if ! [ -x /usr/sbin/sssd ] || ! [ -x /usr/libexec/sssd/sssd_nss ]; then
		sssd_why="sssd-ldap not installed"
	elif ! ls /lib/*/libnss_sss.so.2 /usr/lib/*/libnss_sss.so.2 > /dev/null 2>&1; then
		sssd_why="libnss-sss not installed"
	elif [ "$(id -u)" != 0 ]; then
		sssd_why="needs root"
	fi
	[ -z "$sssd_why" ]
}

sssd_ids() {
	local name=$1 uri=$2 binddn=$3 pw=$4 base=$5
	shift 5
	# shellcheck disable=SC2154  # $work: use_work_dir (lib.sh) in the sourcing script
	local d=$work/sssd-$name
	mkdir -p "$d"
	cat > "$d/sssd.conf" << EOF
[sssd]
services = nss
domains = example.com

[nss]
memcache_timeout = 0

[domain/example.com]
id_provider = ldap
ldap_uri = $uri
ldap_search_base = $base
${SSSD_AUTH:-"ldap_schema = ad
ldap_default_bind_dn = $binddn
ldap_default_authtok = $pw
ldap_id_mapping = true"}
ldap_referrals = false
ldap_tls_reqcert = never
ldap_network_timeout = 5
ldap_opt_timeout = 10
enumerate = false
cache_credentials = false
entry_cache_timeout = 1
use_fully_qualified_names = true
EOF
	printf 'passwd: files sss\ngroup: files sss\n' > "$d/nsswitch.conf"
	# shellcheck disable=SC2016  # expanded by the inner bash
	SSSD_KRB5_CONF=${SSSD_KRB5_CONF:-} timeout 90 unshare -m --propagation private bash -c '
		d=$1
		shift
		for m in /etc/sssd /var/lib/sss /var/log/sssd; do mkdir -p "$m" && mount -t tmpfs tmpfs "$m" || exit 1; done
		mkdir -p /var/lib/sss/db /var/lib/sss/pipes/private /var/lib/sss/mc /var/lib/sss/pubconf /var/lib/sss/gpo_cache
		install -m 600 "$d/sssd.conf" /etc/sssd/sssd.conf
		mount --bind "$d/nsswitch.conf" /etc/nsswitch.conf || exit 1
		if [ -n "$SSSD_KRB5_CONF" ]; then mount --bind "$SSSD_KRB5_CONF" /etc/krb5.conf || exit 1; fi
		/usr/sbin/sssd -i -d 3 --logger=stderr > "$d/sssd.log" 2>&1 &
		spid=$!
		for _ in $(seq 1 100); do [ -S /var/lib/sss/pipes/nss ] && break; sleep 0.1; done
		for u in "$@"; do
			# the backend may still be going online at the first ask: three tries
			for _ in 1 2 3; do
				out=$(timeout 30 id "$u@example.com" 2> /dev/null)
				[ -n "$out" ] && break
				sleep 0.5
			done
			if [ -z "$out" ]; then echo "$u: none"; continue; fi
			groups=$(for g in $(timeout 30 id -G "$u@example.com" 2> /dev/null); do
				timeout 10 getent group "$g" | cut -d: -f1
			done | LC_ALL=C sort | paste -sd, -)
			echo "$u: $groups"
		done
		kill "$spid" 2> /dev/null
		for _ in $(seq 1 50); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
	' bash "$d" "$@"
}
