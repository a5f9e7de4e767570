#!/usr/bin/env bash
# Database reload: a new minidir-import of the database file is served without a
# restart or a dropped connection, while searches that started before it (a paged one
# between pages, a paused one whose client does not read) finish on the data they
# started with; two reloads later such a search ends with unwillingToPerform and its
# file is unmapped. A file for another suffix, one that is not a database, or one
# imported under another schema is refused with a log line and the served one kept. A reload under a searchrate load
# costs no search. Clients: python-ldap (reload_client.py), ldapsearch, searchrate.
# Servers: minidir on 127.0.0.1, stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
BASE=dc=reload,dc=test
PEOPLE=ou=people,$BASE

use_work_dir reload
finish() {
	echo "# reload: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}
if ! "$PYTHON" -c "import ldap" 2> /dev/null; then
	not_ok "python-ldap is not installed (scripts/deps.sh installs python3-ldap)"
	finish
fi
"$PYTHON" tests/integration/reload_client.py gen "$work"
write_conf() { # write_conf NAME SUFFIX: $work/NAME.conf for $work/NAME.mdb
	printf 'listen = 127.0.0.1:0\ndatabase = %s\nschema_dir = %s\nsuffix = %s\nthreads = 2\nwrite_timeout = 0\nmonitor_access = anonymous\n' \
		"$work/$1.mdb" "$SCHEMA_DIR" "$2" > "$work/$1.conf"
}
write_conf db "$BASE"
write_conf other dc=other,dc=test
log=$work/server.log
"$BUILD/minidir-import" -q -f "$work/db.conf" "$work/v1.ldif" || not_ok "import v1"
"$BUILD/minidir" -f "$work/db.conf" > "$log" 2>&1 &
pid=$!
pids+=("$pid")
port=$(wait_port "$log")
if [ -z "$port" ]; then
	not_ok "server did not start: $(cat "$log")"
	finish
fi
URL=ldap://127.0.0.1:$port

# reloads N: waits up to 10 s for the Nth "database reloaded" line; 0 when it came.
reloads() {
	for _ in $(seq 1 200); do
		[ "$(grep -c "database reloaded: $work/db.mdb" "$log")" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# The re-import the client runs: v2, v3, v1, v2... in turn, then the server's line.
cat > "$work/reimport.sh" << EOF
#!/bin/sh
n=\$(( \$(cat "$work/n" 2>/dev/null || echo 0) + 1 ))
echo \$n > "$work/n"
"$BUILD/minidir-import" -q -f "$work/db.conf" "$work/v\$(( n % 3 + 1 )).ldif" || exit 1
for _ in \$(seq 1 200); do
	[ "\$(grep -c "database reloaded: $work/db.mdb" "$log")" -ge \$n ] && exit 0
	sleep 0.05
done
echo "no reload line after import \$n" >&2
exit 1
EOF
chmod +x "$work/reimport.sh"
client() { # client MODE: reload_client.py's lines, counted here
	local out
	out=$(timeout 120 "$PYTHON" tests/integration/reload_client.py "$1" "$URL" "$pid" "$work/db.mdb" "$work/reimport.sh" 2>&1)
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) not_ok "${l#not ok - }" ;;
		*) [ -n "$l" ] && not_ok "$1: $l" ;;
		esac
	done <<< "$out"
}

# --- v1 -> v2 under a paged and a paused search -------------------------------------------
client across
grep -q "database reloaded: $work/db.mdb (463 entries, imported [0-9]*Z; generation 2)" "$log" &&
	ok "the reload is logged: $(grep -o "database reloaded: .*" "$log" | head -1 | sed "s#$work/##")" ||
	not_ok "no reload line: $(tail -3 "$log")"
# What the importer tells the admin is what was just seen: served without a restart.
help=$("$BUILD/minidir-import" --help | tr '\n' ' ')
case $help in
*"within a second, without a restart"*) ok "minidir-import --help says a running server serves the import within a second" ;;
*) not_ok "minidir-import --help does not say the import is served within a second: $help" ;;
esac
mon() { ldapsearch -x -LLL -H "$URL" -b cn=monitor -s base "$1" | sed -n "s/^$1: //p"; }
[ "$(mon databaseReloads)" = 1 ] && [ "$(mon databaseGeneration)" = 2 ] && [ "$(mon databaseEntries)" = 463 ] &&
	ok "cn=monitor: databaseReloads 1, databaseGeneration 2, databaseEntries 463" ||
	not_ok "cn=monitor: reloads $(mon databaseReloads), generation $(mon databaseGeneration), entries $(mon databaseEntries)"

# --- refused files: another suffix, not a database ----------------------------------------
ls_() { ldapsearch -x -LLL -H "$URL" -b "$PEOPLE" "$@"; }
refused() { # refused WHAT WANT: the log says WANT, and v2 still serves
	local n
	for _ in $(seq 1 60); do
		n=$(grep -c "database not reloaded: .*$2" "$log")
		[ "$n" -ge 1 ] && break
		sleep 0.05
	done
	if [ "$n" -ge 1 ] && ls_ "(uid=u60)" cn | grep -q "^cn: V1 user 60"; then
		ok "$1 is refused and the served database kept: $(grep -o "database not reloaded: .*$2.*" "$log" | tail -1 | sed "s#$work/##g")"
	else
		not_ok "$1: $(tail -2 "$log")"
	fi
}
printf 'dn: dc=other,dc=test\nobjectClass: dcObject\nobjectClass: organization\no: O\ndc: other\n\n' > "$work/other.ldif"
"$BUILD/minidir-import" -q -f "$work/other.conf" "$work/other.ldif" || not_ok "import of another suffix"
mv "$work/other.mdb" "$work/db.mdb"
refused "a database of another suffix" 'holds suffix "dc=other,dc=test" but the configuration says suffix = dc=reload,dc=test'
head -c 65536 /dev/urandom > "$work/junk"
mv "$work/junk" "$work/db.mdb"
refused "a file that is not a database" "opening database"
[ "$(grep -c "database not reloaded" "$log")" = 2 ] && ok "a refused file is refused once, not every second" ||
	not_ok "refusals logged $(grep -c "database not reloaded" "$log") times"
echo 1 > "$work/n" # the next import is v3
# --- the bound: searches two reloads old end ------------------------------------------------
client bound
"$BUILD/minidir-import" -q -f "$work/db.conf" "$work/v2.ldif"
kill -HUP "$pid"
reloads 4 && ok "a re-import and SIGHUP: reloaded" || not_ok "re-import and SIGHUP: no reload line"

# --- reloads under load: no search fails ------------------------------------------------------
# At most 30 s of load; stopped (SIGINT: it prints its summary) a second after the last reload.
timeout 60 "$BUILD/searchrate" -h 127.0.0.1 -p "$port" -b "$PEOPLE" -s one -f "(uid=u[0-9])" \
	-t 2 --numConnections 4 -i 1 -I 30 > "$work/sr.out" 2>&1 &
sr=$!
for v in 3 1 2; do
	sleep 1
	"$BUILD/minidir-import" -q -f "$work/db.conf" "$work/v$v.ldif"
done
reloads 7
sleep 1
kill -INT "$sr"
wait "$sr"
rc=$?
under=$(grep -c "database reloaded: $work/db.mdb" "$log")
errors=$(sed -n 's/^ *Total errors: *\([0-9]*\).*/\1/p' "$work/sr.out")
searches=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' "$work/sr.out")
if [ "$rc" = 0 ] && [ "$errors" = 0 ] && [ "${searches:-0}" -gt 0 ] && [ "$under" -ge 7 ]; then
	ok "3 reloads under a searchrate load: $searches searches, 0 errors"
else
	not_ok "reloads under load: rc $rc, $searches searches, $errors errors, $under reloads; $(tail -5 "$work/sr.out")"
fi
n=$(grep -c "db.mdb" "/proc/$pid/maps")
[ "$n" = 1 ] && ok "one database file mapped after it all" || not_ok "$n database maps: $(grep db.mdb "/proc/$pid/maps")"

# --- a schema change: a file imported under another schema is refused until a restart ------
# (the server keeps the schema it started with: its new types' filters would match nothing)
write_conf sudo "$BASE"
echo "schema = core cosine inetorgperson nis $PWD/tests/data/schema/sudo.schema" >> "$work/sudo.conf"
"$BUILD/minidir-import" -q -f "$work/sudo.conf" "$work/v1.ldif" || not_ok "import under sudo.schema"
mv "$work/sudo.mdb" "$work/db.mdb"
refused "a file imported under another schema" \
	"imported with schema [0-9a-f]\{16\}, the server runs [0-9a-f]\{16\} (schema = core cosine inetorgperson nis); restart minidir"
out=$("$BUILD/minidir" -t -f "$work/db.conf" 2>&1)
case $out in
*"warning: $work/db.mdb was imported with schema "*", the server runs "*"run minidir-import again with this configuration"*)
	ok "minidir -t on it warns: the file was imported under another schema" ;;
*) not_ok "minidir -t on a file of another schema: $out" ;;
esac

if stop_checked "$pid" "$log"; then ok "SIGTERM stops the server cleanly (exit 0, no sanitizer report)"; else not_ok "stop: $stop_why"; fi
pids=()
finish
