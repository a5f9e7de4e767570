# Sourced by tests/integration/lib.sh and bench/lib.sh (bash, from the tree's root).

# Prints the port minidir logged in LOG ("listening on SCHEME://127.0.0.1:PORT/",
# SCHEME ldap unless given), waiting up to 5 s for it; prints nothing if it never came.
wait_port() {
	local port= scheme=${2:-ldap}
	for _ in $(seq 1 100); do
		port=$(sed -n "s#.*listening on $scheme://127.0.0.1:\([0-9]*\)/.*#\1#p" "$1" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	echo "$port"
}
