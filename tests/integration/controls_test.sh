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
# The root DSE lists every control the server implements (server/ops/ops.h's OP_CONTROL_*,
# read from the source now): clients (ldap3, Net::LDAP, ldapjs) ask it before they send one.
listed=$(timeout 10 ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$port" -b "" -s base \
	"(objectClass=*)" supportedControl 2>&1 | sed -n 's/^supportedControl: //p')
implemented=$(sed -n 's/^#define \(OP_CONTROL_[A-Z_]*\) "\([0-9.]*\)".*/\1 \2/p' server/ops/ops.h)
[ -n "$implemented" ] || not_ok "no OP_CONTROL_ definition found in server/ops/ops.h"
while read -r name oid; do
	[ -n "$oid" ] || continue
	if grep -qx "$oid" <<< "$listed"; then
		ok "root DSE: supportedControl lists $name ($oid)"
	else
		not_ok "root DSE: supportedControl lacks $name ($oid): $(tr '\n' ' ' <<< "$listed")"
	fi
done <<< "$implemented"
relay_checks controls_client.py < <(timeout 120 "$PYTHON" tests/integration/controls_client.py "ldap://127.0.0.1:$port" 2>&1 ||
	echo "exit status $?")
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"
finish
