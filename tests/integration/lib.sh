# Shared by the integration scripts (sourced).

# Prints the port minidir logged in LOG ("listening on ldap://127.0.0.1:PORT/"),
# waiting up to 5 s for it; prints nothing if it never came.
wait_port() {
	local port=
	for _ in $(seq 1 100); do
		port=$(sed -n 's#.*listening on ldap://127.0.0.1:\([0-9]*\)/.*#\1#p' "$1" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	echo "$port"
}

# Turns ldapclient's "ok - ..." / "not ok - ..." output into ok/not_ok lines, with PREFIX.
client_report() {
	local prefix=$1 out=$2
	case $out in
	"ok - "*) while IFS= read -r l; do ok "$prefix${l#ok - }"; done <<< "$out" ;;
	*) not_ok "$prefix$out" ;;
	esac
}
