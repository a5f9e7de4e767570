#!/usr/bin/env bash
# Controls per operation and paged-results cookies (issue 23), with python-ldap
# (controls_client.py) on the example directory, ou=contractors readable only by the
# cn=admins group: every operation applies each control it is given or refuses a critical
# one (bind, compare, WhoAmI, modify, cn=monitor; RFC 4511 4.1.11), and a paged cookie goes
# on only with the request that made it and not past a bind. The same controls are
# compared with slapd in tests/conformance (the ctl-* cases). Servers: minidir on
# 127.0.0.1, stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
EX=dc=example,dc=com

use_work_dir controls
if ! "$PYTHON" -c "import ldap" 2> /dev/null; then
	not_ok "python-ldap is not installed (scripts/deps.sh installs python3-ldap)"
	finish
fi
cat > "$work/minidir.conf" << CONF
listen = 127.0.0.1:0
database = $work/db.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = cn=admin,$EX
rootpw = root-secret
monitor_access = anonymous
access = to dn.subtree="ou=contractors,ou=people,$EX"
    by group="cn=admins,ou=groups,$EX" read
    by * none
access = to attrs=userPassword
    by self read
    by anonymous auth
    by * none
access = to * by * read
CONF
import_and_start "$work/minidir.conf" examples/example.ldif
# One table says which controls the server applies (server/ops/op_controls.c, read from the
# source now): every control server/ reads (its CONTROL_* of protocol/controls.h) has a row
# there, else a critical one would be refused and the root DSE would not list it; and the
# root DSE lists every row marked listed (clients such as ldap3, Net::LDAP and ldapjs ask it
# before they send a control).
listed=$(timeout 10 ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$port" -b "" -s base \
	"(objectClass=*)" supportedControl 2>&1 | sed -n 's/^supportedControl: //p')
rows=$(tr -d '\n' < server/ops/op_controls.c | grep -oE '[{]CONTROL_[A-Z_]+,[^}]*[}]' |
	sed -E 's/^[{](CONTROL_[A-Z_]+),.*[, ](true|false) *[}]$/\1 \2/')
[ -n "$rows" ] || not_ok "no CONTROL_ row found in server/ops/op_controls.c"
# The controls server/ reads: every CONTROL_ OID but the response controls' (sent, not read).
read_by_server=$(grep -rhoE '\bCONTROL_[A-Z_]+\b' server --include='*.c' --exclude=op_controls.c | sort -u |
	grep -vx 'CONTROL_MAX_SORT_KEYS\|CONTROL_[A-Z_]*_RESPONSE')
while read -r name; do
	[ -n "$name" ] || continue
	if grep -q "^$name " <<< "$rows"; then
		ok "op_controls.c has a row for $name, which server/ reads"
	else
		not_ok "server/ reads $name but server/ops/op_controls.c has no row for it"
	fi
done <<< "$read_by_server"
while read -r name flag; do
	[ -n "$name" ] || continue
	oid=$(sed -n "s/^#define $name \"\([0-9.]*\)\".*/\1/p" protocol/controls.h)
	[ -n "$oid" ] || { not_ok "$name: no OID in protocol/controls.h"; continue; }
	if [ "$flag" = true ] && grep -qx "$oid" <<< "$listed"; then
		ok "root DSE: supportedControl lists $name ($oid)"
	elif [ "$flag" = false ] && ! grep -qx "$oid" <<< "$listed"; then
		ok "root DSE: supportedControl leaves out $name ($oid), a row not listed"
	else
		not_ok "root DSE: supportedControl and $name ($oid, listed $flag) differ: $(tr '\n' ' ' <<< "$listed")"
	fi
done <<< "$rows"
relay_checks controls_client.py < <(timeout 120 "$PYTHON" tests/integration/controls_client.py "ldap://127.0.0.1:$port" 2>&1 ||
	echo "exit status $?")
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"
finish
