#!/usr/bin/env bash
# Safe defaults and ownership done for the admin (issue 25):
# - the configuration make install ships (`make install DESTDIR=... PREFIX=/usr`) has no
#   live rootdn/rootpw: served as installed, no bind as the examples' admin succeeds, with
#   the examples' password or any other, and nobody reads a userPassword but its owner;
# - minidir -t and start-up warn, naming rootpw's FILE:LINE, when rootpw verifies the
#   examples' password ("secret": plaintext, {SSHA} with a fresh salt, {CRYPT}), and not
#   for another password;
# - minidir --can-serve, the unit's ExecCondition=: 0 with a database or a syncrepl key,
#   1 and one line on stderr without, 255 on a configuration error;
# - a database the server may not read: the error names the file (or its directory), its
#   owner, mode and the server's user, and says how to fix it, at start-up and at a reload;
# - minidir-import run as root gives the database to the config's user/group, or to its
#   directory's owner when that is not root, and says so (a throwaway user, removed at
#   the end; those checks print SKIP (needs root) as another user).
#   BUILD=build tests/integration/safe_test.sh
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/integration/lib.sh
use_work_dir safe
chmod 0755 "$work" # a server run as the throwaway user reads its config here
export LDAPNOINIT=1
EX=dc=example,dc=com
ADMIN=cn=admin,$EX

# make install builds into the BUILD the variant's flag names.
declare -A variant=([build]="" [build-san]=SAN=1 [build-tsan]=TSAN=1)
[ -n "${variant[$BUILD]+set}" ] || { echo "safe_test: BUILD=$BUILD: not build, build-san or build-tsan" >&2; exit 1; }
make_args=()
[ -z "${variant[$BUILD]}" ] || make_args=("${variant[$BUILD]}")

# The throwaway user of the root checks (and the user a server runs as): removed at exit.
tmpuser=
cleanup() {
	stop_pids_and_work
	[ -z "$tmpuser" ] || userdel "$tmpuser" 2> /dev/null || true
}
trap cleanup EXIT
if [ "$(id -u)" = 0 ]; then
	tmpuser=fix-safe-$$
	useradd -r -M -d /nonexistent -s /usr/sbin/nologin -U "$tmpuser"
fi

# --- the installed configuration ------------------------------------------------------
dest=$work/dest
# (into a copy of $BUILD: tests run beside this one use its programs)
own_build=$(private_build) || { not_ok "cannot copy $BUILD"; exit 1; }
make_args+=("B=$own_build")
make --no-print-directory "${make_args[@]}" install DESTDIR="$dest" PREFIX=/usr > "$work/install.log" 2>&1 ||
	{ not_ok "make install: $(tail -5 "$work/install.log")"; exit 1; }
ok "make install DESTDIR=... PREFIX=/usr"
installed=$dest/etc/minidir/minidir.conf
live=$(grep -E '^(rootdn|rootpw)[[:space:]]*[=:]' "$installed" || true)
[ -z "$live" ] && ok "installed minidir.conf: no live rootdn or rootpw" ||
	not_ok "installed minidir.conf sets: $live"
grep -qE '^#.*minidir-passwd -s PASSWORD' "$installed" &&
	ok "installed minidir.conf: says how to make a hash (minidir-passwd -s PASSWORD)" ||
	not_ok "installed minidir.conf: no word of minidir-passwd"

# Served as installed, its database, address and schema files (installed under $dest, not
# in /usr/share/minidir/schema, which the installed configuration names) moved into $work.
mkdir "$work/inst"
sed -e "s|^database = .*|database = $work/inst/minidir.mdb|" -e "s|^listen = .*|listen = 127.0.0.1:0|" \
	-e "s|^#\{0,1\}schema_dir = .*|schema_dir = $dest/usr/share/minidir/schema|" "$installed" > "$work/inst.conf"
"$BUILD/minidir-import" -q -f "$work/inst.conf" examples/example.ldif ||
	not_ok "import into the installed configuration"
out=$("$BUILD/minidir" -t -f "$work/inst.conf" 2>&1) || true
case $out in
*"configuration and database OK"*"warning"*|*"warning"*"configuration and database OK"*) not_ok "installed configuration: minidir -t warns: $out" ;;
*"configuration and database OK"*) ok "installed configuration: minidir -t passes without a warning" ;;
*) not_ok "installed configuration: minidir -t: $out" ;;
esac
start_minidir "$work/inst.conf" "$work/inst.log"
if [ -z "$port" ]; then
	not_ok "the installed configuration did not start: $(tail -3 "$work/inst.log")"
else
	url=ldap://127.0.0.1:$port
	# A wrong password is answered invalidCredentials (49): the one the examples gave, the
	# old default's, and others; none may bind as the admin.
	for pw in secret '{SSHA}rdl+PB0MGZGrpb6QN3IWGMe8hL5iKyTs' admin root-secret x; do
		rc=0
		ldapwhoami -x -H "$url" -D "$ADMIN" -w "$pw" > "$work/who.out" 2>&1 || rc=$?
		[ "$rc" = 49 ] && ok "installed configuration: bind as $ADMIN with \"$pw\": invalidCredentials" ||
			not_ok "installed configuration: bind as $ADMIN with \"$pw\": exit $rc, $(cat "$work/who.out")"
	done
	# An empty password is an unauthenticated bind (RFC 4513 5.1.2): whatever it is
	# answered, it reads no password hash.
	hashes=$(ldapsearch -LLL -x -H "$url" -D "$ADMIN" -w '' -b "$EX" '(userPassword=*)' userPassword 2>&1 |
		grep -c '^userPassword' || true)
	[ "$hashes" = 0 ] && ok "installed configuration: $ADMIN with no password reads no userPassword" ||
		not_ok "installed configuration: $ADMIN with no password read $hashes userPassword values"
	# A user's own bind still works, and shows only that user's hash (the access rules).
	hashes=$(ldapsearch -LLL -x -H "$url" -D "uid=alice,ou=people,$EX" -w alice-secret -b "$EX" \
		'(userPassword=*)' userPassword 2>&1 | grep -c '^userPassword' || true)
	[ "$hashes" = 1 ] && ok "installed configuration: alice binds and reads her own userPassword only" ||
		not_ok "installed configuration: alice read $hashes userPassword values"
	stop_checked "$pid" "$work/inst.log" && ok "installed configuration: stops on SIGTERM" ||
		not_ok "stop: $stop_why"
fi

# --- the examples' password as rootpw ----------------------------------------------------
ssha() { # PASSWORD: an {SSHA} value of it with a fresh salt
	python3 -c 'import base64, hashlib, os, sys
s = os.urandom(8)
print("{SSHA}" + base64.b64encode(hashlib.sha1(sys.argv[1].encode() + s).digest() + s).decode())' "$1"
}
"$BUILD/minidir-import" -q -f "$work/inst.conf" examples/example.ldif
# rootpw_conf NAME VALUE: $work/NAME.conf, the installed one with rootdn and rootpw set
# (rootpw on its line $rootpw_line).
rootpw_conf() {
	{
		cat "$work/inst.conf"
		echo "rootdn = $ADMIN"
		echo "rootpw = $2"
	} > "$work/$1.conf"
	rootpw_line=$(wc -l < "$work/$1.conf")
}
for form in plain ssha crypt; do
	case $form in
	plain) v=secret ;;
	ssha) v=$(ssha secret) ;;
	crypt) v="{CRYPT}$(openssl passwd -6 secret)" ;;
	esac
	rootpw_conf "ex-$form" "$v"
	want="warning: $work/ex-$form.conf:$rootpw_line: rootpw is the examples' password"
	out=$("$BUILD/minidir" -t -f "$work/ex-$form.conf" 2>&1) || true
	grep -qF "$want" <<< "$out" && grep -q "configuration and database OK" <<< "$out" &&
		ok "minidir -t warns about rootpw \"secret\" as $form, naming FILE:LINE: ${want#*: }" ||
		not_ok "minidir -t, rootpw \"secret\" as $form ($v): $out"
done
start_minidir "$work/ex-ssha.conf" "$work/ex.log"
if [ -n "$port" ] && grep -qF "warning: $work/ex-ssha.conf:$rootpw_line: rootpw is the examples' password" "$work/ex.log"; then
	ok "start-up warns about rootpw \"secret\" ({SSHA}) at warning level"
else
	not_ok "start-up, rootpw \"secret\": $(cat "$work/ex.log")"
fi
[ -z "$port" ] || stop_checked "$pid" "$work/ex.log" || not_ok "stop: $stop_why"
# make run's examples/minidir.conf (from the tree's root, as make run starts): valid, its
# admin binds with "secret", and it is warned about, at its rootpw line.
sed "s|^database = .*|database = $work/run.mdb|" examples/minidir.conf > "$work/run.conf"
line=$(grep -n '^rootpw' "$work/run.conf" | cut -d: -f1)
"$BUILD/minidir-import" -q -f "$work/run.conf" examples/example.ldif || not_ok "import with examples/minidir.conf"
out=$("$BUILD/minidir" -t -f "$work/run.conf" 2>&1) || true
grep -q "configuration and database OK" <<< "$out" &&
	grep -qF "warning: $work/run.conf:$line: rootpw is the examples' password" <<< "$out" &&
	ok "make run's examples/minidir.conf: valid, and its example admin warned about at line $line" ||
	not_ok "examples/minidir.conf: $out"
for v in "$(ssha not-the-example)" secretx; do
	rootpw_conf other "$v"
	out=$("$BUILD/minidir" -t -f "$work/other.conf" 2>&1) || true
	case $out in
	*"examples' password"*) not_ok "rootpw $v warned about as the example's: $out" ;;
	*"configuration and database OK"*) ok "rootpw $v (not \"secret\"): no warning" ;;
	*) not_ok "rootpw $v: minidir -t: $out" ;;
	esac
done

# --- the README's minimal configuration, from a copy of the source tree --------------------
# Its five lines and commands, as a new user types them in a tree that was built, not
# installed (before: "schema: /usr/local/share/minidir/schema/core.schema: No such file or
# directory"); then examples/replica.conf's start (-t) the same way. The tree's tracked
# files are copied, its build linked: the programs find schema/ beside their directory.
tree=$work/tree
mkdir "$tree"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tree"
ln -s "$PWD/$BUILD" "$tree/build"
awk '/^## A minimal configuration/ { on = 1 } on && /^    [a-z]+ *= / { sub(/^    /, ""); print }
	on && /^## / && !/minimal/ { exit }' README.md > "$tree/my.conf"
sed -i "s|^listen .*|listen = 127.0.0.1:0|" "$tree/my.conf"
cp examples/example.ldif "$tree/data.ldif"
readme_cmds=$(awk '/^## A minimal configuration/ { on = 1 } on && /^    (mkdir|build\/minidir-import|build\/minidir-export)/ {
	sub(/^    /, ""); sub(/ *#.*/, ""); print } on && /^## / && !/minimal/ { exit }' README.md)
[ "$(grep -c . "$tree/my.conf")" = 5 ] && [ "$(grep -c . <<< "$readme_cmds")" = 3 ] &&
	ok "README: 5 configuration lines and 3 commands read" ||
	not_ok "README: read $(grep -c . "$tree/my.conf") lines, commands: $readme_cmds"
grep -q "rootpw" "$tree/my.conf" || not_ok "README: no rootpw line in its configuration"
out=$(cd "$tree" && PATH=/usr/bin:/bin bash -ec "$readme_cmds" 2>&1 > "$tree/out.ldif") &&
	grep -q "^dn: uid=alice," "$tree/out.ldif" &&
	ok "README: import and export from a copy of the tree ($(grep -c '^dn: ' "$tree/out.ldif") entries)" ||
	not_ok "README: the commands from a copy of the tree: $out"
grep -q "schema_dir: the source tree's" <<< "$out" && ok "README: the import says it read the tree's schema" ||
	not_ok "README: no \"schema_dir: the source tree's\" in: $out"
out=$(cd "$tree" && build/minidir -t -f my.conf 2>&1) && grep -q "configuration and database OK" <<< "$out" &&
	ok "README: minidir -t from a copy of the tree" || not_ok "README: minidir -t: $out"
mkdir "$tree/var/r"
sed "s|^database = .*|database = var/r/replica.mdb|" examples/replica.conf > "$tree/replica.conf"
out=$(cd "$tree" && build/minidir -t -f replica.conf 2>&1) && grep -q "configuration and database OK" <<< "$out" &&
	ok "examples/replica.conf: minidir -t from a copy of the tree" || not_ok "examples/replica.conf: minidir -t: $out"

# minidir -t opens no access log: run as root before the service's first start it created
# a root-owned file the service's user could not open (before: the file was made).
mkdir "$work/tlog"
sed "s|^database = .*|database = var/my.mdb|" "$tree/my.conf" > "$tree/tlog.conf"
echo "access_log = $work/tlog/access.log" >> "$tree/tlog.conf"
out=$(cd "$tree" && build/minidir -t -f tlog.conf 2>&1) && [ ! -e "$work/tlog/access.log" ] &&
	grep -q "not opened by -t" <<< "$out" && ok "minidir -t creates no access log" ||
	not_ok "minidir -t and the access log: $(ls "$work/tlog"); $(tail -1 <<< "$out")"

# --- minidir --can-serve (the unit's ExecCondition=) ----------------------------------------
unit=$dest/lib/systemd/system/minidir.service
grep -qx "ExecCondition=/usr/sbin/minidir --can-serve -f /etc/minidir/minidir.conf" "$unit" &&
	ok "unit: ExecCondition=/usr/sbin/minidir --can-serve -f /etc/minidir/minidir.conf" ||
	not_ok "unit: ExecCondition: $(grep ExecCondition "$unit" || echo none)"
can_serve() { # CONF: "STATUS|STDOUT+STDERR" of minidir --can-serve -f CONF
	local rc=0 o
	o=$("$dest/usr/sbin/minidir" --can-serve -f "$1" 2>&1) || rc=$?
	echo "$rc|$o"
}
got=$(can_serve "$work/inst.conf")
[ "$got" = "0|" ] && ok "--can-serve with a database: exit 0, silent" || not_ok "--can-serve with a database: $got"
sed "s|^database = .*|database = $work/none/minidir.mdb|" "$work/inst.conf" > "$work/none.conf"
got=$(can_serve "$work/none.conf")
want="1|minidir: no database at $work/none/minidir.mdb and no syncrepl: import one with minidir-import -f $work/none.conf data.ldif"
[ "$got" = "$want" ] && ok "--can-serve without one: exit 1, \"${want#1|}\"" ||
	not_ok "--can-serve without a database: \"$got\""
{
	cat "$work/none.conf"
	echo "syncrepl = rid=001 provider=ldap://127.0.0.1:9 searchbase=\"$EX\""
} > "$work/replica.conf"
got=$(can_serve "$work/replica.conf")
[ "$got" = "0|" ] && ok "--can-serve, no database but a syncrepl key: exit 0" || not_ok "--can-serve, replica: $got"
printf 'threads = many\n' >> "$work/none.conf"
got=$(can_serve "$work/none.conf")
case $got in
"255|minidir: $work/none.conf:"[0-9]*": threads"*) ok "--can-serve on a configuration error: exit 255 (the unit fails), ${got#255|}" ;;
*) not_ok "--can-serve, a configuration error: $got" ;;
esac

# --- a database the server may not read -------------------------------------------------------
# As root the server runs as the throwaway user and the file is root's (0600, as an
# import by root without user leaves it); as another user the file is its own, mode 0000.
mkdir "$work/deny"
chmod 0755 "$work/deny"
sed "s|^database = .*|database = $work/deny/minidir.mdb|" "$work/inst.conf" > "$work/deny.conf"
chmod 0644 "$work/deny.conf"
"$BUILD/minidir-import" -q -f "$work/deny.conf" examples/example.ldif
if [ -n "$tmpuser" ]; then
	# setpriv execs the server (runuser would stay its parent and take the SIGTERM).
	as_server=(setpriv --reuid="$tmpuser" --regid="$tmpuser" --clear-groups)
	me=$tmpuser:$tmpuser owner=root:root mode=0600
else
	as_server=(env)
	chmod 0000 "$work/deny/minidir.mdb"
	me=$(id -un):$(id -gn) owner=$me mode=0000
fi
out=$("${as_server[@]}" "$BUILD/minidir" -t -f "$work/deny.conf" 2>&1) || true
want="cannot read the database $work/deny/minidir.mdb: permission denied: it is owned by $owner, mode $mode, and minidir runs as $me"
case $out in
*"create it with"*) not_ok "an unreadable database: still says \"create it with\": $out" ;;
*"$want"*"chown $me $work/deny/minidir.mdb"*"sets user = ${me%%:*}"*)
	ok "an unreadable database: owner, mode, the server's user and the fix: ${want#cannot read the database }" ;;
*) not_ok "an unreadable database: $out" ;;
esac
# Its directory closed to the server: the directory is named.
chmod 0644 "$work/deny/minidir.mdb"
chmod 0700 "$work/deny"
[ -n "$tmpuser" ] || chmod 0000 "$work/deny"
out=$("${as_server[@]}" "$BUILD/minidir" -t -f "$work/deny.conf" 2>&1) || true
case $out in
*"permission denied on its directory $work/deny (owned by "*"runs as $me"*"chown $me $work/deny"*)
	ok "a database in a directory closed to the server: the directory, its owner and mode named" ;;
*) not_ok "a closed directory: $out" ;;
esac
chmod 0755 "$work/deny"
chmod 0600 "$work/deny/minidir.mdb"
# At a reload: the server serves a database it can read; a new one it cannot is refused
# with the same words, and the old one served on.
[ -z "$tmpuser" ] || chown "$me" "$work/deny/minidir.mdb"
"${as_server[@]}" "$BUILD/minidir" -f "$work/deny.conf" 2> "$work/deny.log" &
pid=$!
pids+=("$pid")
port=$(wait_port "$work/deny.log")
cp "$work/deny/minidir.mdb" "$work/deny/new.mdb"
if [ -n "$tmpuser" ]; then chown root:root "$work/deny/new.mdb"; else chmod 0000 "$work/deny/new.mdb"; fi
mv "$work/deny/new.mdb" "$work/deny/minidir.mdb"
for _ in $(seq 1 50); do grep -q "not reloaded" "$work/deny.log" && break; sleep 0.1; done
n=$(ldapsearch -LLL -x -H "ldap://127.0.0.1:$port" -b "$EX" -s base 1.1 2> /dev/null | grep -c '^dn:' || true)
grep -qF "database not reloaded: cannot read the database $work/deny/minidir.mdb: permission denied: it is owned by $owner" "$work/deny.log" &&
	[ "$n" = 1 ] && ok "a new database the server may not read: refused at the reload, named with its owner; the old one served" ||
	not_ok "reload of an unreadable database: $n; $(tail -3 "$work/deny.log")"
stop_checked "$pid" "$work/deny.log" || not_ok "stop: $stop_why"

# --- minidir-import as root: the database given to the server's user ----------------------------
# An unknown user is refused before anything is written, as the server would refuse it.
sed "s|^database = .*|database = $work/own/minidir.mdb|" "$work/inst.conf" > "$work/own.conf"
mkdir "$work/own"
printf 'user = no-such-user-%s\n' "$$" >> "$work/own.conf"
line=$(wc -l < "$work/own.conf")
rc=0
out=$("$BUILD/minidir-import" -f "$work/own.conf" examples/example.ldif 2>&1) || rc=$?
[ "$rc" = 1 ] && [ "$out" = "minidir-import: $work/own.conf:$line: user = no-such-user-$$: no such user" ] &&
	[ ! -e "$work/own/minidir.mdb" ] && ok "minidir-import: an unknown user is refused with CONFIG:LINE: ${out#minidir-import: }" ||
	not_ok "minidir-import, an unknown user: exit $rc, $out"
if [ -z "$tmpuser" ]; then
	skip "needs root" "minidir-import as root with user/group in the config: the database is theirs, said so"
	skip "needs root" "minidir-import as root without user: the database is its directory's owner's"
	skip "needs root" "minidir-import as root into root's directory: the database stays root's"
	summary safe
	exit
fi
sed -i '$d' "$work/own.conf"
# (1) user (and group) in the config.
printf 'user = %s\n' "$tmpuser" >> "$work/own.conf"
out=$("$BUILD/minidir-import" -f "$work/own.conf" examples/example.ldif 2>&1) || true
got=$(stat -c %U:%G:%a "$work/own/minidir.mdb" 2> /dev/null || echo none)
[ "$got" = "$tmpuser:$tmpuser:600" ] &&
	grep -qx "minidir-import: $work/own/minidir.mdb owned by $tmpuser:$tmpuser (the server's user)" <<< "$out" &&
	ok "minidir-import as root, user = $tmpuser: the database is $got, said so" ||
	not_ok "minidir-import as root, user = $tmpuser: $got; $out"
lockfiles=$(find "$work/own" -name '*lock*' -o -name '*.tmp.*')
[ -z "$lockfiles" ] && ok "minidir-import: no lock or temporary file left beside it" ||
	not_ok "minidir-import left: $lockfiles"
printf 'group = nogroup\n' >> "$work/own.conf"
"$BUILD/minidir-import" -q -f "$work/own.conf" examples/example.ldif || true
got=$(stat -c %U:%G "$work/own/minidir.mdb")
[ "$got" = "$tmpuser:nogroup" ] && ok "minidir-import as root, user and group = nogroup: $got" ||
	not_ok "minidir-import as root with group: $got"
# The server run as that user reads it (what the fix was for).
sed -i '/^group = /d; /^user = /d' "$work/own.conf"
sed "s|^database = .*|database = $work/own/minidir.mdb|" "$work/inst.conf" > "$work/own-read.conf"
chmod 0644 "$work/own-read.conf"
chmod 0755 "$work/own"
out=$(runuser -u "$tmpuser" -- "$BUILD/minidir" -t -f "$work/own-read.conf" 2>&1) || true
grep -q "configuration and database OK" <<< "$out" && ok "the server run as $tmpuser reads the database imported by root" ||
	not_ok "the server as $tmpuser: $out"
# (2) No user: the directory's owner (the package's /var/lib/minidir is minidir's).
chown "$tmpuser:nogroup" "$work/own"
out=$("$BUILD/minidir-import" -f "$work/own.conf" examples/example.ldif 2>&1) || true
got=$(stat -c %U:%G "$work/own/minidir.mdb")
[ "$got" = "$tmpuser:nogroup" ] &&
	grep -qx "minidir-import: $work/own/minidir.mdb owned by $tmpuser:nogroup (the owner of $work/own)" <<< "$out" &&
	ok "minidir-import as root, no user, directory $tmpuser's: the database is $got, said so" ||
	not_ok "minidir-import as root into $tmpuser's directory: $got; $out"
# (3) No user, root's directory: root's file, nothing said about owners.
chown root:root "$work/own"
out=$("$BUILD/minidir-import" -f "$work/own.conf" examples/example.ldif 2>&1) || true
got=$(stat -c %U:%G "$work/own/minidir.mdb")
[ "$got" = root:root ] && ! grep -q "owned by" <<< "$out" &&
	ok "minidir-import as root, no user, root's directory: the database stays root's" ||
	not_ok "minidir-import as root into root's directory: $got; $out"

summary safe
