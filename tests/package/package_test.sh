#!/usr/bin/env bash
# The Debian package as a stranger uses it (issue 25): the .debs built from a clean copy
# of the tree (dpkg-buildpackage -us -uc -b), lintian, no file or dependency of slapd's
# package, dpkg -i, what the postinst made (the minidir user, the ssl-cert group,
# /var/lib/minidir), the installed unit through systemd-analyze, the example imported as
# the documented command does it, the unit's ExecStart run as the unit's user inside the
# unit's sandbox (a private mount namespace: everything read-only but the unit's
# StateDirectory, RuntimeDirectory and LogsDirectory, /tmp and /home empty, slapd's files
# hidden), searched, bound as the example rootdn, its access log rotated with the shipped
# logrotate file, run as a replica of a private slapd, then dpkg --purge: nothing left but
# the minidir user (Debian policy keeps it). On the way, the OCI image scripts/image.sh
# builds from the .deb (make image), its entrypoint run by buildah where it can run a
# container here ("not checked: WHY" where it cannot).
#   make test-package          (root: it installs packages; CI runs it as a step of its own)
# As another user every check needs root: it prints SKIP (needs root) and exits 1 (nothing
# was tested), or 0 with PACKAGE_TEST_ALLOW_SKIP=1.
set -eu
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

if [ "$(id -u)" != 0 ]; then
	skip "needs root" "the package built, installed with dpkg -i, run under the unit's sandbox, purged"
	summary package || [ "${PACKAGE_TEST_ALLOW_SKIP:-}" = 1 ]
	exit
fi
for tool in dpkg-buildpackage lintian logrotate systemd-analyze unshare setpriv runuser ldapsearch \
	ldapwhoami ldapadd git; do
	command -v "$tool" > /dev/null || { echo "package_test: $tool not found (scripts/deps.sh installs it)" >&2; exit 1; }
done
# The test installs into this machine and purges at the end: a minidir of the admin's
# (a package, or its files) is not touched.
for p in minidir minidir-tools; do
	if dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed"; then
		echo "package_test: package $p is installed here: dpkg --purge it first" >&2
		exit 1
	fi
done
for d in /etc/minidir /var/lib/minidir /var/log/minidir /run/minidir /usr/sbin/minidir; do
	[ ! -e "$d" ] || { echo "package_test: $d exists here: the test would replace or remove it" >&2; exit 1; }
done

use_work_dir package
installed=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
	stop_pids_and_work
	[ -z "$installed" ] || dpkg --purge minidir-tools minidir > /dev/null 2>&1 || true
	rm -rf /run/minidir
}
trap cleanup EXIT

# A free port in 20000-29999 (a connect to it is refused).
free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 10000))
		(exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null || { echo "$p"; return; }
	done
}
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# --- build ---------------------------------------------------------------------
# A clean copy: the files git knows (tracked, and new ones not ignored) as they are in
# the working tree, without build/ or anything else a build left.
src=$work/src/minidir
mkdir -p "$src"
git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2> /dev/null | tar -xf - -C "$src"
t0=$(date +%s)
if (cd "$src" && dpkg-buildpackage -us -uc -b) > "$work/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b from a clean copy ($(elapsed))"
else
	not_ok "dpkg-buildpackage: $(tail -15 "$work/build.log")"
	finish
fi
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
deb=$work/src/minidir_${version}_$arch.deb
tools_deb=$work/src/minidir-tools_${version}_$arch.deb
[ -f "$deb" ] && [ -f "$tools_deb" ] && ok "built minidir and minidir-tools $version" ||
	not_ok "built: $(cd "$work/src" && echo -- *.deb)"

# lintian: no error, and no warning that debian/*.lintian-overrides does not explain.
lint=$(lintian "$work/src/minidir_${version}_$arch.changes" 2>&1 | grep -v "running with root privileges" || true)
grep -qE '^[EW]: ' <<< "$lint" && not_ok "lintian: $(grep -E '^[EW]: ' <<< "$lint" | head -10)" ||
	ok "lintian: no error, no warning left unexplained"

# --- nothing of slapd's -----------------------------------------------------------
files=$({ dpkg -c "$deb" && dpkg -c "$tools_deb"; } | awk '{ print substr($6, 2) }')
slapd_files=$(dpkg -L slapd 2> /dev/null | sort -u || true)
both=$(comm -12 <(grep -v '/$' <<< "$files" | sort -u) <(echo "$slapd_files") | grep -v '^$' || true)
[ -z "$both" ] && ok "dpkg -c: no file of slapd's package ($(grep -vc '/$' <<< "$files") files)" ||
	not_ok "dpkg -c: files slapd ships too: $both"
grep -qx '/usr/share/minidir/schema/core.schema' <<< "$files" && ok "dpkg -c: the schemas in /usr/share/minidir/schema" ||
	not_ok "dpkg -c: no /usr/share/minidir/schema/core.schema"
# The admin's documents in /usr/share/doc/minidir (before: only the examples).
# (dh_compress gzips the larger ones)
grep -qxE '/usr/share/doc/minidir/README.md(.gz)?' <<< "$files" &&
	grep -qxE '/usr/share/doc/minidir/install.md(.gz)?' <<< "$files" &&
	grep -qxE '/usr/share/doc/minidir/reliability.md(.gz)?' <<< "$files" &&
	ok "dpkg -c: README.md and docs/ in /usr/share/doc/minidir" ||
	not_ok "dpkg -c: /usr/share/doc/minidir holds $(grep -c '^/usr/share/doc/minidir/' <<< "$files") files: $(grep '^/usr/share/doc/minidir/' <<< "$files" | head -5 | tr '\n' ' ')"
# Every absolute path the installed configuration sets (comments aside) is the package's
# or one of the unit's directories: none is slapd's (its schema files, /etc/ldap/schema).
mkdir "$work/x"
dpkg -x "$deb" "$work/x"
outside=
for path in $(grep -v '^[[:space:]]*#' "$work/x/etc/minidir/minidir.conf" | grep -oE '(^|[ =])/[^ ,"]+' | tr -d ' ='); do
	case $path in
	/var/lib/minidir/* | /var/log/minidir/* | /run/minidir/*) ;;
	*) [ -e "$work/x$path" ] || outside="$outside $path" ;;
	esac
done
[ -z "$outside" ] && ok "the installed configuration names only the package's paths" ||
	not_ok "the installed configuration names paths the package does not ship:$outside"

# --- the OCI image (make image, scripts/image.sh) from these .debs -----------------------
# Built with buildah from scratch in a container storage of the test's own (vfs: nothing
# mounted, nothing left in the machine's), then its entrypoint run as the image says
# (user, working directory), by buildah run with chroot isolation (the host's network),
# on the example imported by the image's own minidir-import: searched, /readyz asked,
# stopped by SIGTERM. Where buildah is missing or cannot run a container, "not checked".
image_check() {
	local t1 bargs img_log ctr entry user iport mport mpid bpid dn code st uid
	t1=$(date +%s)
	if ! command -v buildah > /dev/null; then
		skip "not checked: buildah not found (scripts/deps.sh installs it)" "the OCI image and its entrypoint"
		return
	fi
	bargs="--root $work/containers --runroot $work/containers-run --storage-driver vfs"
	img_log=$work/image.log
	if ! BUILDAH_ARGS=$bargs ./scripts/image.sh -d "$deb" -t "minidir:${version%-*}" -o "$work/minidir-image.tar" > "$img_log" 2>&1; then
		not_ok "scripts/image.sh -d $deb: $(tail -5 "$img_log")"
		return
	fi
	# shellcheck disable=SC2086  # $bargs: words
	bh() { buildah $bargs "$@"; }
	ok "scripts/image.sh from the .deb: minidir:${version%-*}, $(sed -n 's/^image: saved .* (\([0-9]* KiB\)).*/\1/p' "$img_log") as an OCI archive ($(($(date +%s) - t1)) s)"
	entry=$(bh inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "minidir:${version%-*}" | tr -d '[]')
	user=$(bh inspect --type image --format '{{.OCIv1.Config.User}}' "minidir:${version%-*}")
	[ "$entry" = "/usr/sbin/minidir -f /etc/minidir/minidir.conf" ] && [ "$user" = 10001:10001 ] &&
		ok "image: entrypoint $entry, user $user" || not_ok "image: entrypoint \"$entry\", user \"$user\""
	ctr=$(bh from "minidir:${version%-*}")
	if ! out=$(bh run --isolation chroot "$ctr" -- /usr/sbin/minidir --version 2>&1); then
		skip "not checked: buildah run cannot run a container here: $(tail -1 <<< "$out")" "the image's entrypoint"
		bh rm "$ctr" > /dev/null 2>&1 || true
		return
	fi
	iport=$(free_port) mport=$(free_port)
	mkdir -m 0755 "$work/image-conf"
	printf 'listen = 127.0.0.1:%s\ndatabase = /var/lib/minidir/minidir.mdb\nsuffix = dc=example,dc=com\nmetrics_listen = 127.0.0.1:%s\n' \
		"$iport" "$mport" > "$work/image-conf/minidir.conf"
	chmod 0644 "$work/image-conf/minidir.conf"
	out=$(bh run --isolation chroot -v "$work/image-conf:/etc/minidir:ro" "$ctr" -- /usr/sbin/minidir-import \
		-f /etc/minidir/minidir.conf /usr/share/doc/minidir/examples/example.ldif 2>&1) &&
		ok "image: its minidir-import, as its user: $(tail -1 <<< "$out")" || not_ok "image: minidir-import: $out"
	# shellcheck disable=SC2086  # $bargs, $entry: words
	buildah $bargs run --isolation chroot -v "$work/image-conf:/etc/minidir:ro" "$ctr" -- $entry \
		> "$work/image-server.log" 2>&1 &
	bpid=$!
	pids+=("$bpid")
	for _ in $(seq 1 100); do grep -q "listening on" "$work/image-server.log" && break; kill -0 "$bpid" 2> /dev/null || break; sleep 0.05; done
	# The server's own PID among buildah run's descendants (buildah-chroot-exec starts it),
	# to stop it with SIGTERM: buildah run kills its child instead of passing the signal on.
	mpid=
	local todo=("$bpid") p
	while [ ${#todo[@]} -gt 0 ] && [ -z "$mpid" ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		[ "$p" != "$bpid" ] && [ "$(cat "/proc/$p/comm" 2> /dev/null)" = minidir ] && mpid=$p
		mapfile -t -O "${#todo[@]}" todo < <(pgrep -P "$p" || true)
	done
	dn=$(ldapsearch -LLL -x -H "ldap://127.0.0.1:$iport" -b dc=example,dc=com '(uid=alice)' dn 2>&1 | sed -n 's/^dn: //p')
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/readyz" || true)
	st=/proc/$mpid/status
	uid=$(awk '/^Uid:/ { print $2 }' "$st" 2> /dev/null || true)
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] && [ "$code" = 200 ] && [ "$uid" = 10001 ] &&
		ok "image: its entrypoint (buildah run, uid $uid) answers ldapsearch ($dn) and /readyz 200" ||
		not_ok "image: entrypoint: search \"$dn\", /readyz \"$code\", uid \"$uid\"; $(tail -5 "$work/image-server.log")"
	if [ -n "$mpid" ] && kill -TERM "$mpid" 2> /dev/null && wait "$bpid" &&
		grep -q 'info: stopped' "$work/image-server.log"; then
		ok "image: the server stops on SIGTERM, buildah run exits 0 (image check: $(($(date +%s) - t1)) s)"
	else
		not_ok "image: stop: $(tail -3 "$work/image-server.log")"
		kill "$bpid" 2> /dev/null || true
	fi
	bh rm "$ctr" > /dev/null 2>&1 || true
}
image_check

if dpkg -i "$deb" "$tools_deb" > "$work/dpkg-i.log" 2>&1; then
	installed=yes
	ok "dpkg -i minidir minidir-tools"
else
	not_ok "dpkg -i: $(tail -10 "$work/dpkg-i.log")"
	installed=yes # whatever it left, purged at exit
	finish
fi
out=$(minidir --version 2>&1) && [ "$out" = "minidir ${version%-*}" ] &&
	ok "minidir --version: $out (debian/changelog: $version)" || not_ok "minidir --version: \"$out\", package $version"
deps=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances minidir minidir-tools 2> /dev/null | grep -v '^ ' | sort -u)
[ -n "$deps" ] && ! grep -qxE 'slapd|<slapd>' <<< "$deps" &&
	ok "minidir's dependencies do not pull slapd ($(wc -l <<< "$deps") packages)" ||
	not_ok "minidir's dependencies: $(grep -E 'slapd' <<< "$deps" || echo none found)"

# --- what the postinst made ---------------------------------------------------------
home=$(getent passwd minidir | cut -d: -f6)
[ "$home" = /var/lib/minidir ] && ok "postinst (systemd-sysusers): the minidir user, home /var/lib/minidir" ||
	not_ok "postinst: minidir user: $(getent passwd minidir || echo none)"
getent group ssl-cert > /dev/null && ok "postinst: the ssl-cert group exists (the unit's SupplementaryGroups=)" ||
	not_ok "postinst: no ssl-cert group"
[ "$(stat -c '%U:%G %a' /var/lib/minidir 2> /dev/null)" = "minidir:minidir 750" ] &&
	ok "postinst (systemd-tmpfiles): /var/lib/minidir minidir:minidir 0750" ||
	not_ok "/var/lib/minidir: $(stat -c '%U:%G %a' /var/lib/minidir 2>&1)"
# (before: /var/log/minidir came only with the unit's first start, LogsDirectory=)
[ "$(stat -c '%U:%G %a' /var/log/minidir 2> /dev/null)" = "minidir:minidir 750" ] &&
	ok "postinst (systemd-tmpfiles): /var/log/minidir minidir:minidir 0750, before any start" ||
	not_ok "/var/log/minidir: $(stat -c '%U:%G %a' /var/log/minidir 2>&1)"
conf=/etc/minidir/minidir.conf
[ "$(stat -c '%U:%G %a' "$conf")" = "root:minidir 640" ] && ok "postinst: $conf root:minidir 0640" ||
	not_ok "$conf: $(stat -c '%U:%G %a' "$conf")"
# (A commented line names the compiled-in default; the sandbox below hides slapd's schema.)
grep -qxE '#?schema_dir = /usr/share/minidir/schema' "$conf" && ok "$conf: schema_dir = /usr/share/minidir/schema" ||
	not_ok "$conf: $(grep schema_dir "$conf")"

unit=/lib/systemd/system/minidir.service
out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ] && ok "systemd-analyze verify $unit: clean" ||
	not_ok "systemd-analyze verify: $out"
# 2.0: what systemd 252 gave main's unit before issue 25 (as in install_test.sh).
out=$(systemd-analyze security --offline=yes "$unit" 2>&1) || true
level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<< "$out")
[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' &&
	ok "systemd-analyze security: exposure $level (at most 2.0)" || not_ok "systemd-analyze security: \"$level\""

# --- the first import, as minidir(8) and docs/install.md say -------------------------
ldif=/usr/share/doc/minidir/examples/example.ldif
cmp -s "$ldif" examples/example.ldif && ok "the package ships $ldif" || not_ok "no $ldif (debian/minidir.examples)"
# The unit's ExecCondition= before any import: nothing to serve, so systemd would skip it.
read -ra cond <<< "$(sed -n 's/^ExecCondition=//p' "$unit")"
status=0
out=$(runuser -u minidir -- "${cond[@]}" 2>&1) || status=$?
[ "${#cond[@]}" -gt 0 ] && [ "$status" = 1 ] && grep -q "no database at /var/lib/minidir/minidir.mdb" <<< "$out" &&
	ok "unit: ExecCondition=${cond[*]} before the import: exit 1, \"$out\"" ||
	not_ok "unit: ExecCondition=\"${cond[*]}\" before the import: exit $status, \"$out\""
# As root, as docs/install.md says: the database is given to /var/lib/minidir's owner.
out=$(minidir-import -f "$conf" "$ldif" 2>&1) &&
	[ "$(stat -c %U:%G /var/lib/minidir/minidir.mdb 2> /dev/null)" = minidir:minidir ] &&
	grep -q "owned by minidir:minidir" <<< "$out" &&
	ok "minidir-import -f $conf as root: $(tail -1 <<< "$out")" ||
	not_ok "minidir-import as root: $out; owner $(stat -c %U:%G /var/lib/minidir/minidir.mdb 2>&1)"
status=0
out=$(runuser -u minidir -- "${cond[@]}" 2>&1) || status=$?
[ "$status" = 0 ] && ok "unit: ExecCondition= after the import: exit 0" ||
	not_ok "unit: ExecCondition= after the import: exit $status, \"$out\""

# --- the unit's ExecStart, as the unit runs it -----------------------------------------
key() { sed -n "s/^$1=//p" "$unit" | tail -1; }
read -ra exec_start <<< "$(key ExecStart)"
user=$(key User) group=$(key Group) groups=$(key SupplementaryGroups) umask=$(key UMask)
caps=$(key AmbientCapabilities)
[ "${exec_start[0]}" = /usr/sbin/minidir ] && [ "${exec_start[1]}" = -f ] && [ "${exec_start[2]}" = "$conf" ] &&
	[ -n "$user" ] && ok "unit: ExecStart=${exec_start[*]}, User=$user Group=$group SupplementaryGroups=$groups" ||
	not_ok "unit: ExecStart=${exec_start[*]} User=$user"
# The directories systemd makes for the unit, owned by its user, with the unit's modes.
writable=()
for kv in StateDirectory:/var/lib RuntimeDirectory:/run LogsDirectory:/var/log; do
	name=$(key "${kv%%:*}")
	[ -n "$name" ] || continue
	mode=$(key "${kv%%:*}Mode")
	install -d -o "$user" -g "$group" -m "${mode:-0755}" "${kv#*:}/$name"
	writable+=("${kv#*:}/$name")
done
[ "${writable[*]}" = "/var/lib/minidir /run/minidir /var/log/minidir" ] &&
	ok "unit: StateDirectory, RuntimeDirectory, LogsDirectory: ${writable[*]}" ||
	not_ok "unit: writable directories: ${writable[*]}"

# sandbox CONF LOG: ExecStart with CONF for its -f, in a private mount namespace as
# ProtectSystem=strict, ProtectHome, PrivateTmp and ProtectProc=invisible make it (every
# mount read-only but the unit's directories; /tmp, /var/tmp, /home, /root empty;
# other users' processes hidden) and with slapd's schema and modules hidden, then as the
# unit's user, groups, umask and capability (setpriv, no new privileges). Sets $pid.
sandbox() {
	local argv=("${exec_start[@]}")
	argv[2]=$1
	# shellcheck disable=SC2016  # the script's variables are its own, expanded inside
	unshare --mount --propagation private bash -c '
		set -e
		n=$1; shift
		for d in "${@:1:n}"; do mount --bind "$d" "$d"; done
		shift "$n"
		findmnt -rn -o TARGET | while read -r m; do
			case $m in /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;; esac
			for d in /var/lib/minidir /run/minidir /var/log/minidir; do [ "$m" = "$d" ] && continue 2; done
			mount -o remount,bind,ro "$m"
		done
		for d in /tmp /var/tmp /home /root /run/user /etc/ldap/schema /usr/lib/ldap; do
			[ ! -d "$d" ] || mount -t tmpfs -o mode=0755 tmpfs "$d"
		done
		mount -t proc -o hidepid=invisible proc /proc
		if touch /usr/.minidir-probe 2> /dev/null; then echo "sandbox: /usr is writable" >&2; exit 97; fi
		umask "$UMASK"
		groups=--clear-groups
		[ -z "$GROUPS_" ] || groups=--groups=$GROUPS_
		exec setpriv --reuid="$U" --regid="$G" "$groups" --inh-caps=-all,+"$CAP" \
			--ambient-caps=-all,+"$CAP" --bounding-set=-all,+"$CAP" --no-new-privs -- "$@"
	' sandbox "${#writable[@]}" "${writable[@]}" "${argv[@]}" > "$2" 2>&1 &
	pid=$!
	pids+=("$pid")
}
export U=$user G=$group GROUPS_=$groups UMASK=${umask:-0022}
cap=${caps#CAP_}
export CAP=${cap,,}

# The installed configuration with listen changed (a test port) and the unit's other
# modes on: an ldapi:// socket in /run/minidir, the access log in /var/log/minidir (its
# commented example line) and TLS with a key that only group ssl-cert reads (0640
# root:ssl-cert, Debian's habit), through SupplementaryGroups=.
port=$(free_port)
tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1 || not_ok "tls_certs.sh: $(cat "$work/certs.log")"
install -m 0644 "$work/pki/server.pem" /etc/minidir/server.pem
install -m 0640 -g ssl-cert "$work/pki/server.key" /etc/minidir/server.key
sed -e "s|^listen = .*|listen = 127.0.0.1:$port\nlisten = ldapi:///run/minidir/ldapi|" -e '/^access_log = /d' \
	-e "s|^#access_log = /var/log/minidir/access.log$|access_log = /var/log/minidir/access.log|" \
	-e "s|^#tls_cert_file = /etc/minidir/server.pem$|tls_cert_file = /etc/minidir/server.pem|" \
	-e "s|^#tls_key_file = /etc/minidir/server.key$|tls_key_file = /etc/minidir/server.key|" \
	"$conf" > /etc/minidir/package-test.conf
chown root:minidir /etc/minidir/package-test.conf
chmod 0640 /etc/minidir/package-test.conf
for want in "access_log = /var/log/minidir/access.log" "tls_cert_file = /etc/minidir/server.pem" \
	"tls_key_file = /etc/minidir/server.key"; do
	grep -qx "$want" /etc/minidir/package-test.conf ||
		not_ok "the installed configuration has no '#$want' line to turn on"
done
# minidir(8)'s check as the service's user reads the key through its ssl-cert membership
# (before: the group came from the unit's SupplementaryGroups= only, and -t failed).
echo "pid_file = /run/minidir/minidir.pid" >> /etc/minidir/package-test.conf
out=$(runuser -u minidir -- minidir -t -f /etc/minidir/package-test.conf 2>&1) &&
	ok "runuser -u minidir -- minidir -t with the key 0640 root:ssl-cert: $(tail -1 <<< "$out")" ||
	not_ok "runuser -u minidir -- minidir -t: $out"
sandbox /etc/minidir/package-test.conf "$work/server.log"
mpid=$pid
for _ in $(seq 1 100); do grep -q "listening on" "$work/server.log" && break; kill -0 "$mpid" 2> /dev/null || break; sleep 0.05; done
search() { # PORT FILTER: the DNs found, anonymously
	ldapsearch -LLL -x -H "ldap://127.0.0.1:$1" -b dc=example,dc=com "$2" dn 2>&1 | sed -n 's/^dn: //p'
}
if ! grep -q "listening on ldap://127.0.0.1:$port/" "$work/server.log"; then
	not_ok "the unit's ExecStart in its sandbox did not listen on $port: $(tail -5 "$work/server.log")"
else
	dn=$(search "$port" '(uid=alice)')
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] &&
		ok "in the unit's sandbox, no slapd file visible: ldapsearch finds $dn" || not_ok "search: \"$dn\""
	dn=$(LDAPTLS_CACERT=$work/pki/ca.pem LDAPTLS_REQCERT=demand ldapsearch -LLL -x -ZZ \
		-H "ldap://127.0.0.1:$port" -b dc=example,dc=com '(uid=carol)' dn 2>&1 | sed -n 's/^dn: //p')
	[ "$dn" = "uid=carol,ou=people,dc=example,dc=com" ] &&
		ok "StartTLS with the key only group ssl-cert reads (SupplementaryGroups=): $dn" ||
		not_ok "StartTLS: \"$dn\"; $(tail -3 "$work/server.log")"
	dn=$(ldapsearch -LLL -x -H ldapi://%2Frun%2Fminidir%2Fldapi -b dc=example,dc=com '(uid=alice)' dn 2>&1 |
		sed -n 's/^dn: //p')
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] && [ -S /run/minidir/ldapi ] &&
		ok "ldapi:// in /run/minidir (RuntimeDirectory=): $dn" || not_ok "ldapi: \"$dn\"; $(ls -l /run/minidir)"
	st=/proc/$mpid/status
	uid=$(awk '/^Uid:/ { print $2 }' "$st") gids=$(awk '/^Groups:/ { $1 = ""; print }' "$st")
	capeff=$(awk '/^CapEff:/ { print $2 }' "$st")
	[ "$uid" = "$(id -u "$user")" ] && grep -qw "$(getent group ssl-cert | cut -d: -f3)" <<< "$gids" &&
		[ "$capeff" = 0000000000000400 ] &&
		ok "runs as $user, in group ssl-cert, CAP_NET_BIND_SERVICE only" ||
		not_ok "runs as uid $uid, groups$gids, CapEff $capeff"

	# The example rootdn of the installed configuration (a live line or a commented one)
	# cannot be bound to with any password until the admin sets one.
	rootdn=$(sed -n 's/^#* *rootdn *= *//p' "$conf" | head -1)
	[ -n "$rootdn" ] || rootdn=cn=admin,$(sed -n 's/^suffix *= *//p' "$conf" | head -1)
	rootpw=$(sed -n 's/^#* *rootpw *= *//p' "$conf" | head -1)
	bad=
	for pw in secret "$rootpw" admin password changeme minidir "$rootdn" x; do
		rc=0
		ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "$rootdn" -w "$pw" > /dev/null 2>&1 || rc=$?
		[ "$rc" = 49 ] || [ "$rc" = 53 ] || bad="$bad \"$pw\"=>$rc"
	done
	[ -n "$rootdn" ] && [ -z "$bad" ] && ok "bind as the example rootdn $rootdn fails with every password tried (49/53)" ||
		not_ok "bind as the example rootdn \"$rootdn\" with:$bad"

	# logrotate with the shipped file, its postrotate sending SIGHUP to this server.
	log=/var/log/minidir/access.log
	for _ in $(seq 1 50); do grep -q 'uid=alice' "$log" 2> /dev/null && break; sleep 0.1; done
	# The shipped file as it is, on a machine without systemd running (this one: the
	# test fails if it has it): its postrotate signals the pid file's process (before:
	# "systemctl kill ... || true" failed without a word and the server kept the old file).
	[ ! -d /run/systemd/system ] || not_ok "systemd runs here: the pid-file path of the postrotate is not tried"
	[ "$(cat /run/minidir/minidir.pid 2> /dev/null)" = "$mpid" ] && ok "pid_file: /run/minidir/minidir.pid holds $mpid" ||
		not_ok "pid_file: \"$(cat /run/minidir/minidir.pid 2>&1)\", server $mpid"
	if out=$(logrotate -f -s "$work/logrotate.state" /etc/logrotate.d/minidir 2>&1); then
		ok "logrotate -f /etc/logrotate.d/minidir without systemd (postrotate: SIGHUP to the pid file's server)"
	else
		not_ok "logrotate: $out"
	fi
	# The SIGHUP is asynchronous: the next search once the server says it reopened the file.
	for _ in $(seq 1 50); do grep -q "access log $log opened" "$work/server.log" && break; sleep 0.1; done
	search "$port" '(uid=bob)' > /dev/null
	for _ in $(seq 1 50); do grep -q 'uid=bob' "$log" 2> /dev/null && break; sleep 0.1; done
	# (Lines a worker still buffered at the SIGHUP may go to either file: not asserted.)
	grep -q 'uid=alice' "$log.1" 2> /dev/null && ! grep -q 'uid=bob' "$log.1" && grep -q 'uid=bob' "$log" &&
		[ "$(stat -c %U "$log")" = minidir ] &&
		ok "after the rotation new lines go to the new $log (minidir's), the first ones in access.log.1" ||
		not_ok "rotation: $(stat -c '%n %U %s' /var/log/minidir/* | tr '\n' ' '); server: $(tail -3 "$work/server.log")"
	stop_checked "$mpid" "$work/server.log" && ok "the server stops on SIGTERM" || not_ok "stop: $stop_why"
	# Neither systemd nor a pid file (removed at the clean stop): the rotation says so.
	status=0
	out=$(logrotate -f -s "$work/logrotate.state" /etc/logrotate.d/minidir 2>&1) || status=$?
	[ "$status" != 0 ] && grep -q "no systemd and no /run/minidir/minidir.pid" <<< "$out" &&
		ok "logrotate without systemd or pid file fails saying so: $(grep -o 'no systemd.*' <<< "$out" | head -1)" ||
		not_ok "logrotate with no one to signal: exit $status, \"$out\""
fi

# --- a replica of a private slapd, in the same sandbox -------------------------------------
. tests/integration/provider.sh
if provider_setup && provider_start "$(free_port)"; then
	rport=$(free_port)
	rconf=/etc/minidir/package-replica.conf
	{
		sed -e "s|^listen = .*|listen = 127.0.0.1:$rport|" "$conf"
		# (provider_start set $port to slapd's.)
		printf 'syncrepl = rid=001 provider=ldap://127.0.0.1:%s bindmethod=simple\n' "$port"
		printf '\tbinddn="%s" credentials=secret searchbase="%s"\n' "$ADMIN" "$EX"
		printf '\ttype=refreshAndPersist retry="1 +"\n'
	} > "$rconf"
	sed -i "s|^database = .*|database = /var/lib/minidir/replica.mdb|" "$rconf"
	chown root:minidir "$rconf"
	chmod 0640 "$rconf"
	sandbox "$rconf" "$work/replica.log"
	rpid=$pid
	dn=
	for _ in $(seq 1 100); do
		dn=$(search "$rport" '(uid=alice)')
		[ -n "$dn" ] && break
		kill -0 "$rpid" 2> /dev/null || break
		sleep 0.1
	done
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] &&
		[ "$(stat -c %U /var/lib/minidir/replica.mdb 2> /dev/null)" = minidir ] &&
		ok "as a replica of slapd: its own database in /var/lib/minidir, $dn served" ||
		not_ok "replica: \"$dn\"; $(tail -5 "$work/replica.log")"
	ldapadd -x -H "ldap://127.0.0.1:$port" -D "$ADMIN" -w secret > "$work/ldapadd.log" 2>&1 << EOF || true
dn: uid=pkgtest,ou=people,$EX
objectClass: inetOrgPerson
uid: pkgtest
cn: pkgtest
sn: pkgtest
EOF
	dn=
	for _ in $(seq 1 100); do
		dn=$(search "$rport" '(uid=pkgtest)')
		[ -n "$dn" ] && break
		sleep 0.1
	done
	[ "$dn" = "uid=pkgtest,ou=people,$EX" ] && ok "the replica applies an add on slapd: $dn" ||
		not_ok "replica after an add: \"$dn\"; $(cat "$work/ldapadd.log"); $(tail -3 "$work/replica.log")"
	stop_checked "$rpid" "$work/replica.log" && ok "the replica stops on SIGTERM" || not_ok "replica stop: $stop_why"
	kill "$spid" 2> /dev/null || true # slapd (provider_start)
fi
rm -rf /run/minidir # RuntimeDirectory=: systemd removes it when the service stops

# --- purge ------------------------------------------------------------------------------
if dpkg --purge minidir-tools minidir > "$work/purge.log" 2>&1; then
	installed=
	ok "dpkg --purge minidir-tools minidir"
else
	not_ok "dpkg --purge: $(tail -5 "$work/purge.log")"
fi
left=
for f in $(grep -v '/$' <<< "$files") /etc/minidir /var/lib/minidir /var/log/minidir \
	/var/lib/systemd/deb-systemd-helper-enabled/minidir.service.dsh-also; do
	[ ! -e "$f" ] || left="$left $f"
done
status=$(dpkg-query -W -f='${db:Status-Status}' minidir 2> /dev/null || true)
[ -z "$left" ] && { [ -z "$status" ] || [ "$status" = not-installed ]; } &&
	ok "after the purge nothing is left (the minidir user may stay: $(getent passwd minidir > /dev/null && echo kept || echo gone))" ||
	not_ok "after the purge: left$left; dpkg status \"$status\""

finish
