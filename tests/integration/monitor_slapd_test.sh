#!/usr/bin/env bash
# slapd's cn=Monitor tree (docs/monitoring.md): the same queries against OpenLDAP slapd
# with back-monitor and against minidir, comparing the DNs and attribute names they
# answer (not the values), with each difference kept on purpose listed below with its
# reason; then the values that must be right: cn=Search's monitorOpCompleted goes up by
# exactly the searches made, cn=Current and the cn=Connection N entries count the open
# connections, and the root DSE names cn=Monitor. Both servers are real, on private
# 127.0.0.1 ports, read with ldapsearch as their rootdn.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/slapd_conf.sh # SCHEMADIR, MODULEDIR
SLAPD=${SLAPD:-/usr/sbin/slapd}
export LDAPNOINIT=1
use_work_dir monitor-slapd

# --- the two servers ----------------------------------------------------------------------
mkdir -p "$work/slapd-db"
cat > "$work/slapd.conf" << EOF
include $SCHEMADIR/core.schema
include $SCHEMADIR/cosine.schema
modulepath $MODULEDIR
moduleload back_mdb
moduleload back_monitor
pidfile $work/slapd.pid
argsfile $work/slapd.args
loglevel none
database mdb
suffix "dc=example,dc=com"
rootdn "cn=admin,dc=example,dc=com"
rootpw secret
directory $work/slapd-db
database monitor
access to * by dn.exact="cn=admin,dc=example,dc=com" read by * none
EOF
sport=
for _ in $(seq 1 10); do
	p=$(free_port) || break
	"$SLAPD" -f "$work/slapd.conf" -h "ldap://127.0.0.1:$p/" -d 0 >> "$work/slapd.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 1 100); do
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$p" -LLL -b "" -s base 1.1 > /dev/null 2>&1 && {
			sport=$p
			break
		}
		kill -0 "$spid" 2> /dev/null || break
		sleep 0.05
	done
	[ -n "$sport" ] && break
done
if [ -z "$sport" ]; then
	not_ok "slapd with back-monitor did not start: $(tail -5 "$work/slapd.log")"
	finish
fi

cat > "$work/minidir.conf" << CONF
listen = 127.0.0.1:0
database = $work/test.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
threads = 2
rootdn = cn=admin,$BASE
rootpw = root-secret
CONF
if ! out=$("$BUILD/minidir-import" -f "$work/minidir.conf" "$LDIF" 2>&1); then
	not_ok "import: $out"
	finish
fi
start_minidir "$work/minidir.conf" "$work/minidir.log"
mpid=$pid
mport=$port
if [ -z "$mport" ]; then
	not_ok "minidir did not start: $(tail -5 "$work/minidir.log")"
	finish
fi

# s_ / m_ ARGS: ldapsearch against slapd / minidir as its rootdn, LDIF unwrapped.
s_() { ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$sport" -D cn=admin,dc=example,dc=com -w secret "$@"; }
m_() { ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$mport" -D "cn=admin,$BASE" -w root-secret "$@"; }

# shape < LDIF: one line "dn|attribute" per attribute of each entry (DN lowercased, the
# numbers of cn=Connection N and cn=Listener N as N), and "dn|" per entry.
shape() {
	awk '
		/^dn:/ { dn = tolower(substr($0, 5)); gsub(/connection [0-9]+/, "connection N", dn)
			gsub(/listener [0-9]+/, "listener N", dn); print dn "|"; next }
		/^[A-Za-z][A-Za-z0-9;-]*::? ?/ { a = $0; sub(/:.*/, "", a); print dn "|" tolower(a) }
	' | sort -u
}

# What slapd has that minidir leaves out on purpose, as grep -E patterns over shape's
# lines, each with its reason.
SLAPD_ONLY=(
	# back-monitor's views of slapd's own parts, which minidir has not: backends and
	# overlays, the SASL and logging subsystems (cn=Log is slapd's log level, changed
	# by a modify), the read/write waiters of its connection manager
	'^cn=(backends|overlays|sasl|log|waiters),cn=monitor\|'
	'^cn=[^,]+,cn=(backends|overlays|waiters),cn=monitor\|'
	# slapd's config database (cn=Database 0), its frontend and the monitor database
	# itself; minidir serves one database, cn=Database 0 here
	'^cn=(frontend|database [12]),cn=databases,cn=monitor\|'
	# the thread pool's queues: minidir's workers are event loops, not a pool
	'^cn=(runqueue|tasklist),cn=threads,cn=monitor\|'
	# back-mdb's own counters (olmMDB*) and the seeAlso to its cn=Backend entry
	'\|(olm[a-z]*|seealso)$'
	# empty values in slapd: no one created these entries
	'\|(creatorsname|modifiersname)$'
	# monitorConnectionMask: the poll mask of slapd's connection manager; minidir's
	# connections are an event loop's, with no such mask
	'\|monitorconnectionmask$'
)
# What minidir has that slapd has not: its own entries (tests and users read them,
# docs/monitoring.md) and its own counters on cn=monitor and cn=tls, named here one by one.
OWN_MONITOR='vendorname|starttime|uptime|threads|sendpolicy|ioengine|iosends|iosendsmore|iowaits|batchbytes|maxpendingbytes|currentconnections|totalconnections|shedconnections|pdutimeouts|inputshedconnections|proxyrefused|proxybadheaders|opsbind|opssearch|opsunbind|opsabandon|opsother|entriessent|databaseentries|databasecreated|databasegeneration|databasereloads|memobudgetbytes|recordmemobytes|recordmemoresidentbytes|recordmemohits|recordmemomisses|keymemobytes|keymemoresidentbytes|keymemohits|keymemomisses'
OWN_TLS='tlsenabled|kerneltls|kerneltlsconnections|tlsconnections|handshakes|resumedhandshakes|handshakefailures|starttls'
MINIDIR_ONLY=(
	'^cn=(batch|msg-more|nodelay-once|cork-toggle|tcp|latency|limits|replication),cn=monitor\|'
	"^cn=monitor\\|($OWN_MONITOR)\$"
	"^cn=tls,cn=monitor\\|($OWN_TLS)\$"
)
# drop_expected FILE PATTERNS...: FILE without the lines any pattern matches.
drop_expected() {
	local f=$1
	shift
	local re
	re=$(printf '%s|' "$@")
	grep -Ev "${re%|}" "$f" || true
}
# compare NAME ARGS...: the same search against both, the shapes compared.
compare() {
	local name=$1
	shift
	s_ "$@" 2>&1 | shape > "$work/s.shape"
	m_ "$@" 2>&1 | shape > "$work/m.shape"
	comm -23 "$work/s.shape" "$work/m.shape" > "$work/s-only"
	comm -13 "$work/s.shape" "$work/m.shape" > "$work/m-only"
	local missing extra
	missing=$(drop_expected "$work/s-only" "${SLAPD_ONLY[@]}")
	extra=$(drop_expected "$work/m-only" "${MINIDIR_ONLY[@]}")
	if [ ! -s "$work/s.shape" ]; then
		not_ok "$name: slapd answered nothing: $(s_ "$@" 2>&1 | head -3)"
	elif [ -z "$missing" ] && [ -z "$extra" ]; then
		ok "$name: the same DNs and attributes as slapd ($(wc -l < "$work/s.shape") lines; differences on purpose only)"
	else
		not_ok "$name: slapd only: $(echo "$missing" | head -20 | tr '\n' ' '); minidir only: $(echo "$extra" | head -20 | tr '\n' ' ')"
	fi
}

# --- the same queries ---------------------------------------------------------------------
compare "cn=Monitor base, user attributes" -b cn=Monitor -s base
compare "cn=Monitor base, operational attributes" -b cn=Monitor -s base +
compare "cn=Monitor one level, DNs" -b cn=Monitor -s one 1.1
compare "cn=Monitor subtree, all attributes" -b cn=Monitor '*' +
compare "cn=Current,cn=Connections monitorCounter" -b cn=Current,cn=Connections,cn=Monitor -s base monitorCounter
compare "cn=Operations one level monitorOpInitiated monitorOpCompleted" -b cn=Operations,cn=Monitor -s one monitorOpInitiated monitorOpCompleted
compare "cn=Statistics one level monitorCounter" -b cn=Statistics,cn=Monitor -s one monitorCounter
compare "cn=Threads one level monitoredInfo" -b cn=Threads,cn=Monitor -s one monitoredInfo
compare "cn=Time one level monitorTimestamp monitoredInfo" -b cn=Time,cn=Monitor -s one monitorTimestamp monitoredInfo
compare "cn=Listeners one level" -b cn=Listeners,cn=Monitor -s one '*' +
got=$(m_ -b cn=Listeners,cn=Monitor -s one '*' + | grep -E '^(labeledURI|monitorConnectionLocalAddress):' | sort | tr '\n' ' ')
if [ "$got" = "labeledURI: ldap://127.0.0.1:$mport/ monitorConnectionLocalAddress: IP=127.0.0.1:$mport " ]; then
	ok "cn=Listener 0: the address as bound (listen = 127.0.0.1:0 resolved to $mport)"
else
	not_ok "cn=Listener 0: '$got'"
fi
compare "the connections' entries" -b cn=Connections,cn=Monitor -s one '(objectClass=monitorConnection)' '*' +
compare "openldap_exporter's search" -b cn=Monitor '(|(objectClass=monitorCounterObject)(objectClass=monitorOperation)(objectClass=monitoredObject))' monitorCounter monitorOpInitiated monitorOpCompleted monitoredInfo
compare "the root DSE's monitorContext" -b "" -s base monitorContext

# --- values that must be right ------------------------------------------------------------
# value SEARCH-FUNCTION DN ATTR: the attribute's value.
value() { "$1" -b "$2" -s base "$3" | sed -n "s/^$3: //p"; }
for srv in s_ m_; do
	name=slapd
	[ "$srv" = m_ ] && name=minidir
	# The search that reads the counter is taken, not yet completed, when it is read; the
	# next read counts it and the searches between.
	before=$(value "$srv" cn=Search,cn=Operations,cn=Monitor monitorOpCompleted)
	for _ in 1 2 3 4 5; do "$srv" -b "" -s base 1.1 > /dev/null; done
	after=$(value "$srv" cn=Search,cn=Operations,cn=Monitor monitorOpCompleted)
	if [ -n "$before" ] && [ "$after" = $((before + 6)) ]; then
		ok "$name: cn=Search monitorOpCompleted went from $before to $after (5 searches and the reading one)"
	else
		not_ok "$name: cn=Search monitorOpCompleted went from '$before' to '$after', not by 6"
	fi
	binds0=$(value "$srv" cn=Bind,cn=Operations,cn=Monitor monitorOpCompleted)
	binds1=$(value "$srv" cn=Bind,cn=Operations,cn=Monitor monitorOpCompleted)
	if [ -n "$binds0" ] && [ "$binds1" = $((binds0 + 1)) ]; then
		ok "$name: cn=Bind monitorOpCompleted counts each bind ($binds0, then $binds1)"
	else
		not_ok "$name: cn=Bind monitorOpCompleted '$binds0' then '$binds1'"
	fi
done

# Three idle TCP connections to each, held open on descriptors 5-10 while counted.
port_of() { if [ "$1" = s_ ]; then echo "$sport"; else echo "$mport"; fi; }
exec 5<> "/dev/tcp/127.0.0.1/$sport" 6<> "/dev/tcp/127.0.0.1/$sport" 7<> "/dev/tcp/127.0.0.1/$sport"
exec 8<> "/dev/tcp/127.0.0.1/$mport" 9<> "/dev/tcp/127.0.0.1/$mport" 10<> "/dev/tcp/127.0.0.1/$mport"
sleep 0.2 # accepted by the servers' loops
for srv in s_ m_; do
	name=slapd
	[ "$srv" = m_ ] && name=minidir
	cur=$(value "$srv" cn=Current,cn=Connections,cn=Monitor monitorCounter)
	if [ "$cur" = 4 ]; then
		ok "$name: cn=Current counts the 3 idle connections and the reading one"
	else
		not_ok "$name: cn=Current is '$cur' with 3 idle connections and the reading one"
	fi
	"$srv" -b cn=Connections,cn=Monitor -s one '(objectClass=monitorConnection)' monitorConnectionAuthzDN monitorConnectionPeerAddress monitorConnectionListener > "$work/conns"
	n=$(grep -c '^dn: cn=Connection [0-9]*,' "$work/conns")
	bound=$(grep -ci "^monitorConnectionAuthzDN: cn=admin," "$work/conns")
	peers=$(grep -c "^monitorConnectionPeerAddress: IP=127.0.0.1:[0-9]*$" "$work/conns")
	listener=$(grep -c "^monitorConnectionListener: ldap://127.0.0.1:$(port_of "$srv")/$" "$work/conns")
	if [ "$n" = 4 ] && [ "$bound" = 1 ] && [ "$peers" = 4 ] && [ "$listener" = 4 ]; then
		ok "$name: 4 cn=Connection entries, the reading one bound as the rootdn, each with its peer and listener"
	else
		not_ok "$name: $n connection entries, $bound bound, $peers peers, $listener listeners: $(head -20 "$work/conns" | tr '\n' ' ')"
	fi
done
exec 5>&- 6>&- 7>&- 8>&- 9>&- 10>&-
sleep 0.2
cur=$(value m_ cn=Current,cn=Connections,cn=Monitor monitorCounter)
n=$(m_ -b cn=Connections,cn=Monitor -s one '(objectClass=monitorConnection)' 1.1 | grep -c '^dn:')
if [ "$cur" = 1 ] && [ "$n" = 1 ]; then
	ok "minidir: once they closed, cn=Current and the connection entries count the reading one only"
else
	not_ok "minidir: after the closes cn=Current is '$cur', $n connection entries"
fi

# The same rule as minidir's own cn=monitor (monitor_access, default: the rootdn only).
rc=0
ldapsearch -x -LLL -H "ldap://127.0.0.1:$mport" -b cn=Current,cn=Connections,cn=Monitor -s base > /dev/null 2>&1 || rc=$?
if [ "$rc" = 50 ]; then
	ok "an anonymous client may not read cn=Connections,cn=Monitor (50, monitor_access)"
else
	not_ok "an anonymous read of cn=Connections,cn=Monitor answered $rc, not 50"
fi
rc=0
m_ -b "cn=Nothing,cn=Operations,cn=Monitor" -s base > /dev/null 2>&1 || rc=$?
if [ "$rc" = 32 ]; then
	ok "a missing entry of the slapd tree is noSuchObject (32)"
else
	not_ok "a missing entry of the slapd tree answered $rc, not 32"
fi

if stop_checked "$mpid" "$work/minidir.log"; then
	ok "minidir stopped cleanly"
else
	not_ok "minidir: $stop_why"
fi
finish
