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
if ! "$BUILD/minidir-import" -q -f "$work/minidir.conf" examples/example.ldif > "$work/import.log" 2>&1; then
	not_ok "import: $(cat "$work/import.log")"
	finish
fi
start_minidir "$work/minidir.conf" "$work/minidir.log"
if [ -z "$port" ]; then
	not_ok "server did not start: $(cat "$work/minidir.log")"
	finish
fi
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) not_ok "vlv_client.py: $line" ;;
	esac
done < <(timeout 120 "$PYTHON" tests/integration/vlv_client.py "ldap://127.0.0.1:$port" 2>&1 ||
	echo "exit status $?")
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"
finish
