# shellcheck shell=bash
# Sourced by tests/integration/lib.sh and tests/conformance/run.sh (bash, from the tree's
# root): ports for the peers a test starts on 127.0.0.1 (slapd, HAProxy, an HTTP
# endpoint), which must be named before they listen. minidir itself listens on port 0
# and logs the port the kernel gave it (scripts/wait_port.sh).
#
# Tests run several at a time (tests/run.sh), so "nothing listens there now" is not
# enough: two scripts could pick the same port before either binds it. A port is
# therefore reserved, by making the directory $PORT_DIR/PORT (mkdir is atomic) holding
# the reserving shell's PID, until that shell exits; a reservation whose shell is gone
# is taken over. Ports come from 20000-32767, below the kernel's ephemeral range
# (32768-60999), so no client socket of a test is given one of them meanwhile.
PORT_DIR=${PORT_DIR:-${TMPDIR:-/tmp}/minidir-ports}

# reserve_port PORT: status 0 when PORT was free (nothing on 127.0.0.1 listens on it, no
# running test holds it) and is now reserved for this shell ($$) until it exits.
reserve_port() {
	local p=$1 owner
	mkdir -p "$PORT_DIR" 2> /dev/null
	if ! mkdir "$PORT_DIR/$p" 2> /dev/null; then
		owner=$(cat "$PORT_DIR/$p/pid" 2> /dev/null) || return 1
		[ -n "$owner" ] && kill -0 "$owner" 2> /dev/null && return 1
		# its shell is gone: take it over (rename is atomic; one taker wins)
		mv "$PORT_DIR/$p" "$PORT_DIR/$p.stale.$$" 2> /dev/null || return 1
		rm -rf "$PORT_DIR/$p.stale.$$"
		mkdir "$PORT_DIR/$p" 2> /dev/null || return 1
	fi
	echo "$$" > "$PORT_DIR/$p/pid"
	# in use by something else: it stays reserved (by this shell), and is not given
	! ss -Hltn "sport = :$p" | grep -q .
}

# free_port [N]: prints a port P in 20000-32767 with P .. P+N-1 (N = 1 unless given) all
# reserved by reserve_port; status 1 when 100 tries found none.
free_port() {
	local p i n=${1:-1} got
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % (12768 - n)))
		got=1
		for ((i = 0; i < n; i++)); do
			reserve_port $((p + i)) || { got=0; break; }
		done
		[ "$got" = 1 ] && { echo "$p"; return 0; }
	done
	return 1
}

# release_ports: frees every port this shell ($$) reserved (the scripts call it at exit;
# a port left reserved is taken over once its shell is gone anyway).
release_ports() {
	local d
	for d in "$PORT_DIR"/*/pid; do
		[ -f "$d" ] && [ "$(cat "$d" 2> /dev/null)" = "$$" ] && rm -rf "${d%/pid}"
	done
	return 0
}
