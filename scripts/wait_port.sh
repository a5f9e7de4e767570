# shellcheck shell=bash
# Sourced by tests/integration/lib.sh and bench/lib.sh (bash, from the tree's root).

# wait_port LOG [SCHEME [WORDS [SECONDS]]]: prints the port minidir logged in LOG
# ("WORDS SCHEME://127.0.0.1:PORT/": SCHEME ldap, WORDS "listening on" unless given),
# waiting up to SECONDS (15: a loaded machine can take seconds to start a server) for it;
# prints nothing if it never came.
wait_port() {
	local port='' scheme=${2:-ldap} words=${3:-listening on}
	for _ in $(seq 1 $((${4:-15} * 20))); do
		port=$(sed -n "s#.*$words $scheme://127.0.0.1:\([0-9]*\)/.*#\1#p" "$1" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	echo "$port"
}
