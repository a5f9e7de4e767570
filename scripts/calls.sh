#!/bin/sh
# Checks the call graph of server/ by name, as scripts/layers.sh checks its includes:
# a module (a .c file) calls a function or reads a symbol another module defines, read
# from the built objects (what one references undefined, another defines). It fails on
#   - a circle of calls among the modules of one room (server/net/conn calling
#     server/net/conn_tls while conn_tls calls back into conn);
#   - a call up a room (server/net calling a function of server/ops by name).
# Calls through a pointer (struct server's dispatch, the worker's hooks, the send
# policies) are not seen: they are the upcalls, named where they are made.
# Exit status 0 when the checks pass, 1 when one fails, 2 when there is nothing to read.
#
# Usage: scripts/calls.sh [BUILD]   (default build; after make all; NM=nm for objects
#                                    built without LTO, gcc-nm by default)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
nm=${NM:-gcc-nm}
cd "$root"
[ -d "$build/server" ] || { echo "calls: no $build/server (make all first)" >&2; exit 2; }

# "D MODULE SYMBOL" for each definition, "U MODULE SYMBOL" for each reference.
symbols() {
	for o in "$build"/server/*.o "$build"/server/*/*.o; do
		[ -f "$o" ] || continue
		mod=${o#"$build"/}
		mod=${mod%.o}
		[ -f "$mod.c" ] || continue # left over from a file since moved or removed
		"$nm" --defined-only "$o" | awk -v m="$mod" 'NF == 3 && $2 ~ /[TDRB]/ { print "D", m, $3 }'
		"$nm" -u "$o" | awk -v m="$mod" '{ print "U", m, $NF }'
	done
}

symbols | awk '
function room(m,    d) {
	d = m; sub(/\/[^\/]*$/, "", d)
	if (d == "server")
		return "server(shared)"
	return d
}
function rank(d,    order, r) {
	split("server(shared) server/db server/replica server/net server/monitor server/ops server/start", order, " ")
	for (r = 1; r <= 7; r++)
		if (order[r] == d)
			return r
	return -1
}
$1 == "D" { def[$3] = $2; next }
{ nu++; ufrom[nu] = $2; usym[nu] = $3 }
END {
	status = 0
	for (i = 1; i <= nu; i++) {
		a = ufrom[i]; s = usym[i]
		if (!(s in def) || def[s] == a)
			continue
		b = def[s]
		if (!((a " " b) in seen)) {
			seen[a " " b] = s
			ne++; from[ne] = a; to[ne] = b
		}
	}
	for (e = 1; e <= ne; e++) {
		ra = room(from[e]); rb = room(to[e])
		if (rank(rb) > rank(ra)) {
			printf "upward call: %s calls %s of %s\n", from[e], seen[from[e] " " to[e]], to[e]
			status = 1
		}
		if (ra == rb) {
			live[e] = 1; mods[from[e]] = 1; mods[to[e]] = 1
		}
	}
	# Who reaches whom by calls inside a room, grown one call at a time until nothing
	# changes; a call lies on a circle when its callee reaches its caller back.
	for (m in mods)
		reach[m, m] = 1
	do {
		grew = 0
		for (e = 1; e <= ne; e++) {
			if (!live[e])
				continue
			for (m in mods)
				if (reach[m, from[e]] && !reach[m, to[e]]) {
					reach[m, to[e]] = 1; grew = 1
				}
		}
	} while (grew)
	for (e = 1; e <= ne; e++)
		if (live[e] && reach[to[e], from[e]]) {
			printf "on a circle: %s calls %s of %s\n", from[e], seen[from[e] " " to[e]], to[e]
			status = 1
		}
	printf "calls: %s\n", status ? "FAILED" : "ok"
	exit status
}'
