#!/usr/bin/env bash
# Packaging: the man pages document every config key the parser accepts and every
# option each program's --help prints (both lists read from the code and the programs,
# never written down here), and render without warnings; the systemd unit verifies;
# `make install DESTDIR=... PREFIX=/usr` lays out the tree a package ships; the
# *installed* minidir-import and minidir then import and serve examples/example.ldif,
# as root switching to nobody by the user/group keys, and as the unit runs it (an
# unprivileged user with CAP_NET_BIND_SERVICE only, on a port below 1024).
#   BUILD=build tests/integration/install_test.sh
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/integration/lib.sh
use_work_dir install
chmod 0755 "$work" # the server, once nobody, reads its config here on SIGHUP

case $BUILD in
build) make_args=() ;;
build-san) make_args=(SAN=1) ;;
build-tsan) make_args=(TSAN=1) ;;
*)
	echo "install_test: BUILD=$BUILD: make install builds into build/, build-san/ or build-tsan/ only" >&2
	exit 1
	;;
esac

for tool in groff make ldapsearch; do
	command -v "$tool" > /dev/null || { echo "install_test: $tool not found (scripts/deps.sh installs it)" >&2; exit 1; }
done
version=$(sed -n 's/^#define MINIDIR_VERSION "\(.*\)"/\1/p' conf/version.h)
[ -n "$version" ] || { echo "install_test: no MINIDIR_VERSION in conf/version.h" >&2; exit 1; }

# A page as plain text: no hyphenation, lines long enough that no option is broken.
render() { groff -man -Tascii -P-cbou -rHY=0 -rLL=250n "$1" 2> /dev/null; }

# --- man pages ----------------------------------------------------------------
pages="man/minidir.8 man/minidir-import.8 man/minidir-export.8 man/minidir-seed.8 man/minidir.conf.5
	man/searchrate.1"
for page in $pages; do
	if [ ! -f "$page" ]; then
		not_ok "$page: missing"
		continue
	fi
	warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1) && [ -z "$warn" ] &&
		ok "$page renders without warnings" || not_ok "$page: groff -ww: $warn"
	grep -q "^\.TH .*\"minidir $version\"" "$page" && ok "$page: .TH names version $version" ||
		not_ok "$page: .TH does not name minidir $version: $(grep '^\.TH' "$page")"
done

# Every key the parser accepts: each word of conf/config.c and config.h that the parser,
# given "WORD = x", does not answer with "unknown key" (however the code spells its keys).
probe=$work/probe.conf
keys=$(grep -ohE '\b[a-z][a-z0-9_]*\b' conf/config.c conf/config.h | sort -u | while read -r w; do
	printf 'database = %s/none.mdb\nsuffix = dc=example,dc=com\n%s = x\n' "$work" "$w" > "$probe"
	case $("$BUILD/minidir-export" -q -f "$probe" 2>&1) in
	*"unknown key"* | *"syntax error"*) ;;
	*) echo "$w" ;;
	esac
done)
nkeys=$(echo "$keys" | wc -w)
if [ "$nkeys" -ge 25 ] && echo "$keys" | grep -qx listen && echo "$keys" | grep -qx tls_cert_file; then
	ok "the parser accepts $nkeys keys"
else
	not_ok "the parser accepts $nkeys keys of the words in conf/config.c: $keys"
fi
conf5=$(render man/minidir.conf.5)
missing_man='' missing_conf=''
for k in $keys; do
	# A tagged paragraph of its own ("KEY = VALUE" at the page's left margin).
	grep -qE "^ {7}$k = " <<< "$conf5" || missing_man="$missing_man $k"
	grep -qE "^#? ?$k =" conf/minidir.conf || missing_conf="$missing_conf $k"
done
[ -z "$missing_man" ] && ok "minidir.conf(5) documents every key" ||
	not_ok "minidir.conf(5) does not document:$missing_man"
[ -z "$missing_conf" ] && ok "conf/minidir.conf shows every key" ||
	not_ok "conf/minidir.conf does not show:$missing_conf"

# Every option each program's --help prints, in its page's OPTIONS section as the head
# of a tagged paragraph ("-f CONFIG", "-h, --help", "--version").
for prog_page in minidir:man/minidir.8 minidir-import:man/minidir-import.8 \
	minidir-export:man/minidir-export.8 minidir-seed:man/minidir-seed.8 \
	searchrate:man/searchrate.1; do
	prog=${prog_page%%:*} page=${prog_page#*:}
	help=$("$BUILD/$prog" --help 2>&1) || { not_ok "$prog --help: exit status $?"; continue; }
	opts=$(grep -oE '(^|[][ ,(|])--?[A-Za-z][A-Za-z0-9-]*' <<< "$help" | sed 's/^[^-]*//' | sort -u)
	if ! grep -qx -- --version <<< "$opts" || ! grep -qx -- --help <<< "$opts"; then
		not_ok "$prog --help lists no --help or --version: $(tr '\n' ' ' <<< "$opts")"
	fi
	section=$(render "$page" | awk '/^OPTIONS$/ { on = 1; next } /^[A-Z]/ { on = 0 } on')
	missing=
	for o in $opts; do
		grep -qE -- "^ {7}(-[A-Za-z], )?$o([ ,]|$)" <<< "$section" || missing="$missing $o"
	done
	[ -z "$missing" ] && ok "$page documents all $(echo "$opts" | wc -w) options of $prog --help" ||
		not_ok "$page: OPTIONS lacks$missing"
	out=$("$BUILD/$prog" --version 2>&1) && [ "$out" = "$prog $version" ] &&
		ok "$prog --version: $out" || not_ok "$prog --version: \"$out\""
done

# --- debian/ -----------------------------------------------------------------------
# Build-Depends are packages scripts/deps.sh installs (so CI's machine builds the .deb;
# tests/package/package_test.sh builds it), and debian/changelog's upstream version is
# the programs' (--version above).
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed -e 's/^Build-Depends://' -e '/^[A-Z]/d' |
	tr ',' '\n' | sed -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^$' | grep -v '^debhelper-compat$')
missing=
for d in $bdeps; do grep -qE "(^|[ \"])$d( |\"|\$)" scripts/deps.sh || missing="$missing $d"; done
[ -n "$bdeps" ] && [ -z "$missing" ] && ok "debian/control: every Build-Depends is in scripts/deps.sh ($(tr "\n" " " <<< "$bdeps"))" ||
	not_ok "debian/control: Build-Depends not in scripts/deps.sh:$missing"
deb_version=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "${deb_version%-*}" = "$version" ] && ok "debian/changelog: $deb_version, upstream $version" ||
	not_ok "debian/changelog: $deb_version, but the programs say $version"

# --- make install -------------------------------------------------------------
dest=$work/dest
# (into a copy of $BUILD: tests run beside this one use its programs)
own_build=$(private_build) || { not_ok "cannot copy $BUILD"; exit 1; }
make_args+=("B=$own_build")
if out=$(make --no-print-directory "${make_args[@]}" install DESTDIR="$dest" PREFIX=/usr 2>&1); then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	not_ok "make install: $out"
	exit 1
fi
for f in usr/sbin/minidir usr/sbin/minidir-import usr/sbin/minidir-export usr/sbin/minidir-seed \
	usr/bin/searchrate; do
	[ -x "$dest/$f" ] && [ "$(stat -c %a "$dest/$f")" = 755 ] && ok "installed /$f" ||
		not_ok "/$f: missing or not mode 0755"
done
for f in usr/share/man/man8/minidir.8 usr/share/man/man8/minidir-import.8 \
	usr/share/man/man8/minidir-export.8 usr/share/man/man8/minidir-seed.8 \
	usr/share/man/man5/minidir.conf.5 \
	usr/share/man/man1/searchrate.1 lib/systemd/system/minidir.service \
	usr/lib/sysusers.d/minidir.conf usr/lib/tmpfiles.d/minidir.conf etc/logrotate.d/minidir; do
	[ -f "$dest/$f" ] && [ "$(stat -c %a "$dest/$f")" = 644 ] && ok "installed /$f" ||
		not_ok "/$f: missing or not mode 0644"
done
conf=$dest/etc/minidir/minidir.conf
[ -f "$conf" ] && [ "$(stat -c %a "$conf")" = 640 ] && ok "installed /etc/minidir/minidir.conf, mode 0640" ||
	not_ok "/etc/minidir/minidir.conf: missing or not mode 0640"
grep -qx "database = /var/lib/minidir/minidir.mdb" "$conf" && ok "installed config: database in /var/lib/minidir" ||
	not_ok "installed config: $(grep '^database' "$conf")"
# The tree's schema files, named by the installed configuration (not slapd's /etc/ldap/schema).
want=$(cd schema && ls -- *.schema)
got=$(cd "$dest/usr/share/minidir/schema" 2> /dev/null && ls -- *.schema)
[ -n "$want" ] && [ "$got" = "$want" ] && cmp -s <(cat schema/*.schema) <(cat "$dest"/usr/share/minidir/schema/*.schema) &&
	ok "installed /usr/share/minidir/schema: $(echo "$got" | tr '\n' ' ')" ||
	not_ok "/usr/share/minidir/schema holds \"$got\", want \"$want\""
# (A commented line names the compiled-in default, which must then be the same.)
# Its dynamic_groups comment says what the server does on a replica (before: "not with
# syncrepl", while a replica computes them at each change: man minidir.conf).
tr '\n' ' ' < "$conf" | grep -q "replica (syncrepl) computes them again" &&
	! grep -q "not with syncrepl" "$conf" && ok "installed config: the dynamic_groups comment as the man page says" ||
	not_ok "installed config: the dynamic_groups comment: $(grep -A3 '^# Dynamic groups' "$conf")"
grep -qxE "#?schema_dir = /usr/share/minidir/schema" "$conf" && ok "installed config: schema_dir = /usr/share/minidir/schema" ||
	not_ok "installed config: $(grep 'schema_dir' "$conf")"
[ -d "$dest/var/lib/minidir" ] && ok "installed /var/lib/minidir" || not_ok "/var/lib/minidir: missing"
# Relative to the tree they were built in, nothing installed may name it.
left=$(grep -rlF -e "$PWD" -e "@SBINDIR@" -e "@SYSCONFDIR@" -e "@LOCALSTATEDIR@" "$dest" || true)
[ -z "$left" ] && ok "no build path or @PLACEHOLDER@ in the installed tree" ||
	not_ok "build path or placeholder in: $left"
unit=$dest/lib/systemd/system/minidir.service
grep -qx "ExecStart=/usr/sbin/minidir -f /etc/minidir/minidir.conf" "$unit" &&
	ok "unit: ExecStart=/usr/sbin/minidir -f /etc/minidir/minidir.conf" ||
	not_ok "unit: $(grep ExecStart= "$unit")"
# shellcheck disable=SC2016  # $MAINPID is the unit's, literal here
for want in User=minidir ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
	RuntimeDirectory=minidir StateDirectory=minidir LogsDirectory=minidir \
	SupplementaryGroups=ssl-cert AmbientCapabilities=CAP_NET_BIND_SERVICE \
	CapabilityBoundingSet=CAP_NET_BIND_SERVICE 'ExecReload=/bin/kill -HUP $MAINPID'; do
	grep -qxF "$want" "$unit" || { not_ok "unit: no $want"; continue; }
	ok "unit: $want"
done
grep -qE '^u minidir - ".*" /var/lib/minidir$' "$dest/usr/lib/sysusers.d/minidir.conf" &&
	ok "sysusers.d: the minidir user" || not_ok "sysusers.d: $(cat "$dest/usr/lib/sysusers.d/minidir.conf")"
# systemd fails a unit whose SupplementaryGroups= names a missing group: sysusers makes it.
grep -qE '^g ssl-cert -' "$dest/usr/lib/sysusers.d/minidir.conf" &&
	ok "sysusers.d: the ssl-cert group of SupplementaryGroups=" || not_ok "sysusers.d: no ssl-cert group"

# systemd-analyze checks the unit's syntax, its commands (run from the install tree) and
# its Documentation= pages (from the install tree's man pages). It also warns about other
# units it loads on the way (a machine with freeradius's unit failed here): only lines about
# minidir's unit are judged, the others shown.
# verify_unit WHAT [UNIT_PATH]: ok when no line of systemd-analyze verify is about minidir's
# unit (starts "minidir.service:" or with its path).
verify_unit() {
	local out rc=0 ours others
	out=$(env ${2:+SYSTEMD_UNIT_PATH="$2"} MANPATH="$dest/usr/share/man" \
		systemd-analyze verify "$work/verify/minidir.service" 2>&1) || rc=$?
	ours=$(awk -v p="$work/verify/minidir.service:" \
		'index($0, "minidir.service:") == 1 || index($0, p) == 1' <<< "$out")
	others=$(awk -v p="$work/verify/minidir.service:" \
		'NF && index($0, "minidir.service:") != 1 && index($0, p) != 1' <<< "$out")
	if [ -n "$others" ]; then
		echo "# $1: not judged, about other units: $(head -3 <<< "$others")"
	fi
	# (an exit status without a line of minidir's is another unit's)
	if [ -z "$ours" ] && { [ "$rc" = 0 ] || [ -n "$others" ]; }; then
		ok "$1: clean"
	else
		not_ok "$1: exit $rc: $ours"
	fi
}
if command -v systemd-analyze > /dev/null; then
	mkdir "$work/verify" "$work/other-units"
	sed "s|=/usr/sbin/|=$dest/usr/sbin/|" "$unit" > "$work/verify/minidir.service"
	verify_unit "systemd-analyze verify"
	# Another package's unit with an error, loaded on the way: not minidir's to judge.
	printf '[Unit]\nDescription=another package\n[Service]\nExecStart=/bin/true\n' \
		> "$work/other-units/network-online.target"
	verify_unit "systemd-analyze verify beside another package's broken unit" "$work/other-units:"
	grep -q "Unknown section 'Service'" <<< "$(SYSTEMD_UNIT_PATH=$work/other-units: \
		MANPATH=$dest/usr/share/man systemd-analyze verify "$work/verify/minidir.service" 2>&1)" &&
		ok "systemd-analyze verify: the other unit's warning was there to ignore" ||
		not_ok "systemd-analyze verify: the other unit was not loaded (the check above proves nothing)"
	# The bound: 2.0, the exposure systemd 252 (Debian 12) gave main's unit before
	# StateDirectory= and SupplementaryGroups= (+0.1) were added (issue 25); RemoveIPC=,
	# PrivateMounts= and ProtectProc= (-0.5) brought it to 1.7. No worse than 2.0.
	out=$(systemd-analyze security --offline=yes "$work/verify/minidir.service" 2>&1) || true
	level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<< "$out")
	[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' &&
		ok "systemd-analyze security: exposure $level (at most 2.0, main's before issue 25)" ||
		not_ok "systemd-analyze security: exposure \"$level\" above 2.0: $(grep '✗' <<< "$out" | head -20)"
else
	not_ok "systemd-analyze not found: the unit cannot be verified (scripts/deps.sh installs systemd)"
fi

# Installing again keeps an edited configuration.
echo "# edited" >> "$conf"
make --no-print-directory "${make_args[@]}" install DESTDIR="$dest" PREFIX=/usr > /dev/null 2>&1 &&
	tail -1 "$conf" | grep -qx "# edited" && ok "make install again keeps the configuration" ||
	not_ok "make install again replaced the configuration"

# The default PREFIX, /usr/local: the configuration under it, the unit naming it.
local_dest=$work/local
if make --no-print-directory "${make_args[@]}" install DESTDIR="$local_dest" > /dev/null 2>&1 &&
	[ -f "$local_dest/usr/local/etc/minidir/minidir.conf" ] &&
	grep -qx "database = /usr/local/var/lib/minidir/minidir.mdb" "$local_dest/usr/local/etc/minidir/minidir.conf" &&
	grep -qx "ExecStart=/usr/local/sbin/minidir -f /usr/local/etc/minidir/minidir.conf" \
		"$local_dest/usr/local/lib/systemd/system/minidir.service" &&
	[ -x "$local_dest/usr/local/sbin/minidir" ] && [ -f "$local_dest/usr/local/share/man/man5/minidir.conf.5" ]; then
	ok "make install with the default PREFIX: /usr/local/{sbin,etc,share/man,lib/systemd/system}"
else
	not_ok "make install with the default PREFIX: $(cd "$local_dest" 2> /dev/null && find . -type f | tr '\n' ' ')"
fi
make --no-print-directory "${make_args[@]}" uninstall DESTDIR="$local_dest" > /dev/null 2>&1 || true
left=$(cd "$local_dest" && find . -type f | sort | tr '\n' ' ' || true)
[ "$left" = "./usr/local/etc/minidir/minidir.conf " ] && ok "make uninstall leaves only the configuration" ||
	not_ok "make uninstall left: $left"

# --- the installed programs, run -----------------------------------------------
# What follows switches users (the user and group keys, runuser, setpriv): as another
# user each check is skipped by name and counted; what came before still counts.
if [ "$(id -u)" != 0 ]; then
	skip "needs root" "installed minidir as root, switching to nobody/nogroup: search, bind, pid_file, SIGHUP, stop"
	skip "needs root" "minidir-import as the service's user (runuser -u nobody)"
	skip "needs root" "as the unit runs it: nobody with CAP_NET_BIND_SERVICE only, on a port below 1024"
	summary install
	exit
fi
sbin=$dest/usr/sbin
ldif=examples/example.ldif

# (1) As root, switching to nobody/nogroup by the user and group keys; the configuration
# is the installed one with the database, address and pid file moved into $work, and its
# schema_dir, /usr/share/minidir/schema, in the install tree.
install -d -o nobody -g nogroup "$work/run"
mkdir "$work/db"
in_dest="schema_dir = $dest/usr/share/minidir/schema"
sed -e "s|^database = .*|database = $work/db/example.mdb|" -e "s|^listen = .*|listen = 127.0.0.1:0|" \
	"$conf" > "$work/root.conf"
printf 'user = nobody\ngroup = nogroup\npid_file = %s\n%s\n' "$work/run/minidir.pid" "$in_dest" >> "$work/root.conf"
chmod 0644 "$work/root.conf"
out=$("$sbin/minidir-import" -f "$work/root.conf" "$ldif" 2>&1) && ok "installed minidir-import: $out" ||
	not_ok "installed minidir-import: $out"
out=$("$sbin/minidir" -t -f "$work/root.conf" 2>&1) && ok "installed minidir -t: $(tail -n 1 <<< "$out")" ||
	not_ok "installed minidir -t: $out"
"$sbin/minidir" -f "$work/root.conf" > "$work/root.log" 2>&1 &
pid=$!
pids+=("$pid")
port=$(wait_port "$work/root.log")
search() { # PORT FILTER [ldapsearch options]: the DNs found
	local p=$1 f=$2
	shift 2
	ldapsearch -LLL -x -H "ldap://127.0.0.1:$p" -b dc=example,dc=com "$@" "$f" dn 2>&1 | sed -n 's/^dn: //p'
}
if [ -z "$port" ]; then
	not_ok "installed minidir as root did not start: $(tail -3 "$work/root.log")"
else
	dn=$(search "$port" '(uid=alice)')
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] && ok "installed minidir answers ldapsearch: $dn" ||
		not_ok "installed minidir: search for uid=alice: $dn"
	pw=$(ldapsearch -LLL -x -H "ldap://127.0.0.1:$port" -D uid=alice,ou=people,dc=example,dc=com \
		-w alice-secret -b dc=example,dc=com '(uid=alice)' userPassword 2>&1 | grep -c '^userPassword::' || true)
	[ "$pw" = 1 ] && ok "installed minidir: alice binds and reads her userPassword" ||
		not_ok "installed minidir: alice's bind and userPassword: $pw"
	uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" || true)
	gid=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" || true)
	u=$(id -u nobody) g=$(getent group nogroup | cut -d: -f3)
	[ "$uid" = "$u $u $u $u" ] && [ "$gid" = "$g $g $g $g" ] &&
		ok "installed minidir runs as nobody/nogroup (Uid $uid, Gid $gid)" ||
		not_ok "installed minidir: Uid $uid, Gid $gid (want $u, $g)"
	[ "$(cat "$work/run/minidir.pid" 2> /dev/null)" = "$pid" ] && ok "pid_file holds the server's PID" ||
		not_ok "pid_file: $(cat "$work/run/minidir.pid" 2>&1)"
	# What the unit's ExecReload sends: the server re-reads its config, as nobody, and serves on.
	kill -HUP "$pid" || true
	for _ in $(seq 1 50); do grep -q SIGHUP "$work/root.log" && break; sleep 0.1; done
	dn=$(search "$port" '(uid=bob)')
	grep -q SIGHUP "$work/root.log" && ! grep -q 'error' "$work/root.log" &&
		[ "$dn" = "uid=bob,ou=people,dc=example,dc=com" ] && ok "SIGHUP: reloaded, still serving" ||
		not_ok "SIGHUP: $dn; $(tail -3 "$work/root.log")"
	stop_checked "$pid" "$work/root.log" && ok "installed minidir stops on SIGTERM" || not_ok "stop: $stop_why"
	[ ! -e "$work/run/minidir.pid" ] && ok "pid_file removed at the stop" || not_ok "pid_file left"
fi

# (2) As the unit runs it: the database imported by the service's user (runuser, as the
# man pages say), the server started as that user with CAP_NET_BIND_SERVICE only, on a
# port below 1024.
install -d -o nobody -g nogroup -m 0750 "$work/unitdb"
sed -e "s|^database = .*|database = $work/unitdb/minidir.mdb|" "$conf" > "$work/unit.conf"
echo "$in_dest" >> "$work/unit.conf"
chmod 0644 "$work/unit.conf"
out=$(runuser -u nobody -- "$sbin/minidir-import" -q -f "$work/unit.conf" "$ldif" 2>&1) &&
	[ "$(stat -c %U "$work/unitdb/minidir.mdb")" = nobody ] &&
	ok "minidir-import as the service's user: the database is its own" ||
	not_ok "minidir-import as nobody: $out"
# A port below 1024 that nothing listens on (a connect to it is refused).
low=
for p in $(shuf -i 600-999 -n 20); do
	(exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null || { low=$p; break; }
done
sed -i "s|^listen = .*|listen = 127.0.0.1:$low|" "$work/unit.conf"
: > "$work/unit.log" # before the loop below reads it (the & runs the redirection late)
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all,+net_bind_service \
	--ambient-caps=-all,+net_bind_service --bounding-set=-all,+net_bind_service --no-new-privs \
	"$sbin/minidir" -f "$work/unit.conf" > "$work/unit.log" 2>&1 &
upid=$!
pids+=("$upid")
for _ in $(seq 1 100); do grep -q "listening on" "$work/unit.log" && break; sleep 0.05; done
if grep -q "listening on ldap://127.0.0.1:$low/" "$work/unit.log"; then
	dn=$(search "$low" '(uid=alice)')
	caps=$(awk '/^CapEff:/ { print $2 }' "/proc/$upid/status" || true)
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$upid/status" || true)
	[ "$dn" = "uid=alice,ou=people,dc=example,dc=com" ] && [ "$uid" = "$(id -u nobody)" ] &&
		[ "$caps" = 0000000000000400 ] &&
		ok "as the unit runs it (nobody, CAP_NET_BIND_SERVICE only): port $low, search answered" ||
		not_ok "as the unit runs it: dn \"$dn\", uid $uid, CapEff $caps"
	stop_checked "$upid" "$work/unit.log" && ok "unit-style server stops on SIGTERM" || not_ok "stop: $stop_why"
else
	not_ok "as the unit runs it: did not listen on port $low: $(tail -3 "$work/unit.log")"
fi

summary install
