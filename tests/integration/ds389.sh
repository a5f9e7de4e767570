# shellcheck shell=bash
# A 389 Directory Server provider for the integration scripts (sourced after lib.sh):
# Debian's 389-ds-base, an instance made by dscreate without systemd under $work/ds (its
# own prefix, configuration, database, logs and pid file: nothing outside $work), on a
# private 127.0.0.1 port, with the Retro Changelog and Content Synchronization plugins on
# (as Red Hat's guide enables them for a syncrepl consumer), run in the foreground and
# stopped by PID. Suffix dc=example,dc=com with dscreate's sample entries.
DS_SUFFIX=dc=example,dc=com
DS_ADMIN="cn=Directory Manager"
DS_PW=secret389
DS_LIBDIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null || echo x86_64-linux-gnu)

# ds_create NAME: the instance $work/ds (slapd-NAME) on a free port ($ds_port, $ds_uri).
# About 6 s. Returns 1 (with not_ok) when dscreate fails.
ds_create() {
	# shellcheck disable=SC2154  # $work: use_work_dir (lib.sh) in the sourcing script
	local b=$work/ds name=$1
	ds_name=$name
	mkdir -p "$b/prefix/share/dirsrv/inf" "$b/etc/dirsrv" "$b/tmp" "$b/run" "$b/var"
	cp -r /etc/dirsrv/schema /etc/dirsrv/config "$b/etc/dirsrv/"
	pick_port ds_port 2 || return 1
	# shellcheck disable=SC2154  # ds_port: set by pick_port
	ds_uri=ldap://127.0.0.1:$ds_port
	# dscreate reads its paths from PREFIX/share/dirsrv/inf/defaults.inf: all under $b.
	cat > "$b/prefix/share/dirsrv/inf/defaults.inf" << EOF
[slapd]
product = 389 Directory Server
version = $(dpkg-query -W -f '${Version}' 389-ds-base | sed 's/+.*//')
with_systemd = 0
prefix = /usr
bin_dir = /usr/bin
sbin_dir = /usr/sbin
lib_dir = $DS_LIBDIR
data_dir = /usr/share
tmp_dir = $b/tmp
sysconf_dir = $b/etc
initconfig_dir = $b/etc/sysconfig
config_dir = $b/etc/dirsrv/slapd-{instance_name}
local_state_dir = $b/var
run_dir = $b/run
ldapi = $b/run/slapd-{instance_name}.socket
pid_file = $b/run/slapd-{instance_name}.pid
inst_dir = $b/var/lib/dirsrv/slapd-{instance_name}
plugin_dir = $DS_LIBDIR/dirsrv/plugins
system_schema_dir = /usr/share/dirsrv/schema
tmpfiles_d = $b/tmpfiles.d
user = root
group = root
root_dn = $DS_ADMIN
schema_dir = $b/etc/dirsrv/slapd-{instance_name}/schema
cert_dir = $b/etc/dirsrv/slapd-{instance_name}
lock_dir = $b/lock/dirsrv/slapd-{instance_name}
log_dir = $b/log/dirsrv/slapd-{instance_name}
access_log = $b/log/dirsrv/slapd-{instance_name}/access
audit_log = $b/log/dirsrv/slapd-{instance_name}/audit
error_log = $b/log/dirsrv/slapd-{instance_name}/errors
security_log = $b/log/dirsrv/slapd-{instance_name}/security
db_dir = $b/var/lib/dirsrv/slapd-{instance_name}/db
db_home_dir = $b/var/lib/dirsrv/slapd-{instance_name}/db
backup_dir = $b/var/lib/dirsrv/slapd-{instance_name}/bak
ldif_dir = $b/var/lib/dirsrv/slapd-{instance_name}/ldif
EOF
	mkdir -p "$b/etc/sysconfig" "$b/tmpfiles.d"
	cat > "$b/inst.inf" << EOF
[general]
config_version = 2
full_machine_name = localhost
selinux = False
systemd = False
start = False
strict_host_checking = False
[slapd]
instance_name = $name
port = $ds_port
secure_port = $((ds_port + 1))
self_sign_cert = False
root_dn = $DS_ADMIN
root_password = $DS_PW
user = root
group = root
[backend-userroot]
suffix = $DS_SUFFIX
sample_entries = yes
EOF
	if ! PREFIX=$b/prefix timeout 120 dscreate from-file "$b/inst.inf" > "$work/dscreate.log" 2>&1; then
		not_ok "dscreate: $(tail -5 "$work/dscreate.log")"
		return 1
	fi
	rm -f "$b/run/slapd-$name.pid" # dscreate leaves its stopped server's
	ds_conf=$b/etc/dirsrv/slapd-$name
}

# ds_start: runs ns-slapd in the foreground (-d 0), waiting until it answers; sets $dspid
# (added to $pids). Returns 1 (with not_ok) when it does not answer within 30 s.
ds_start() {
	/usr/sbin/ns-slapd -D "$ds_conf" -i "$work/ds/run/slapd-$ds_name.pid" -d 0 >> "$work/ds.log" 2>&1 &
	dspid=$!
	pids+=("$dspid")
	for _ in $(seq 1 300); do
		timeout 5 ldapsearch -x -H "$ds_uri" -LLL -b "" -s base vendorName 2> /dev/null |
			grep -q '^vendorName:' && return 0
		kill -0 "$dspid" 2> /dev/null || break
		sleep 0.1
	done
	not_ok "ns-slapd did not start: $(tail -5 "$work/ds.log")"
	return 1
}

# ds_stop: SIGTERM to $dspid, waiting (up to 30 s) until it has exited.
ds_stop() {
	kill "$dspid" 2> /dev/null || return 0
	for _ in $(seq 1 300); do
		kill -0 "$dspid" 2> /dev/null || return 0
		sleep 0.1
	done
}

# ds_modify [ARGS]: ldapmodify as the Directory Manager with ARGS (-f FILE), else the LDIF
# on stdin.
# shellcheck disable=SC2120  # ARGS: the sourcing scripts pass them
ds_modify() {
	timeout 30 ldapmodify -x -H "$ds_uri" -D "$DS_ADMIN" -w "$DS_PW" "$@" > /dev/null
}

# ds_enable_sync: 127.0.0.1 only, the Retro Changelog (logging nsUniqueId, which the sync
# plugin needs) and Content Synchronization plugins on; restarts the server for them.
# Returns 1 (with not_ok) when a step fails.
ds_enable_sync() {
	if ! ds_modify << EOF; then
dn: cn=config
changetype: modify
replace: nsslapd-listenhost
nsslapd-listenhost: 127.0.0.1

dn: cn=Retro Changelog Plugin,cn=plugins,cn=config
changetype: modify
replace: nsslapd-pluginEnabled
nsslapd-pluginEnabled: on
-
replace: nsslapd-attribute
nsslapd-attribute: nsuniqueid:targetUniqueId

dn: cn=Content Synchronization,cn=plugins,cn=config
changetype: modify
replace: nsslapd-pluginEnabled
nsslapd-pluginEnabled: on
EOF
		not_ok "enabling the sync plugins on 389-ds failed"
		return 1
	fi
	ds_stop
	ds_start
}
