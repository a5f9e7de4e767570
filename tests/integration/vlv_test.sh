#!/usr/bin/env bash
# Virtual List View (draft-ietf-ldapext-ldapv3-vlv-09) with python-ldap (vlv_client.py) on
# the example directory: an address book's windows on one connection, greaterThanOrEqual,
# a foreign contextID, and the errors ldapsearch cannot send (no sort control, paged
# results, a malformed control). The windows' numbers are compared with slapd's sssvlv in
# tests/conformance (the vlv-* cases). Servers: minidir on 127.0.0.1, stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
EX=dc=example,dc=com

use_work_dir vlv
if ! "$PYTHON" -c "import ldap" 2> /dev/null; then
	not_ok "python-ldap is not installed (scripts/deps.sh installs python3-ldap)"
	finish
fi
cat > "$work/minidir.conf" << CONF
listen = 127.0.0.1:$(free_port)
database = $work/db.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = cn=admin,$EX
rootpw = root-secret
access = to attrs=userPassword by * none
access = to * by * read
CONF
import_and_start "$work/minidir.conf" examples/example.ldif
relay_checks vlv_client.py < <(timeout 120 "$PYTHON" tests/integration/vlv_client.py "ldap://127.0.0.1:$port" 2>&1 ||
	echo "exit status $?")
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"
finish
