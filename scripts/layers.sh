#!/bin/sh
# Prints the include graph of minidir's own headers, per directory (a room), and checks it:
#   - layers, bottom to top:
#       protocol/                      LDAP's wire format, filters, DNs, schema
#       password/                      password schemes: checked, made, their cost classes
#       storage/ conf/                 the LMDB database; the configuration (side by side)
#       ldif/                          LDIF in and out: the importer and the exporter
#       server/ (shared ground)        log, clock, stats, access log, struct server
#       server/db/                     database generations and the file guard
#       server/replica/                the syncrepl consumer
#       server/net/                    engines, worker loop, connections, TLS, send policies
#       server/monitor/                cn=monitor, the operators' HTTP endpoint (/metrics)
#       server/ops/                    operations, search planning, access rules
#       server/start/                  start-up, shut-down, SIGHUP, main
#       tools/                         minidir-import, minidir-export, minidir-passwd, searchrate
#     A file includes headers of its own room and of the rooms below it, never above;
#   - from outside a room of server/, only the room's public headers are included: the
#     list "doors" below (server/ops/ops.h, server/monitor/monitor.h,
#     server/replica/replica.h, server/db/db.h; server/net/ has nine, each the door to
#     one part of the room: net.h, conn.h, conn_list.h, listeners.h, net_worker.h, reply.h,
#     tls.h, tls_socket.h, sasl.h). With one public header, a room as wide as server/net/ would declare in it
#     all the room gives, or include the headers that do: an umbrella through which the
#     whole room is reachable. Several listed doors let a file include what it uses and
#     no more, and keep the rest of the room its own (a header not listed is included by
#     no other room);
#   - no umbrella: a public header includes at most 2 headers of its own room, and none
#     of its room's other public headers (each door stands alone: one that includes
#     another makes both reachable through it);
#   - a private header (NAME_impl.h) is included only by its own room's files and is not
#     reachable from the room's public headers, nor from any header another room includes;
#   - only the writers write: outside storage/, a write transaction (struct db_write,
#     db_write_begin) is named by server/replica/ and ldif/ only, never by the read side;
#   - LMDB stays in storage/: <lmdb.h> is included by storage/'s files only (storage/db_impl.h
#     is the one that does), and storage/db_impl.h outside storage/ only by the tests of
#     storage and of the importer (tests/storage/, tests/ldif/), which build and inspect
#     files with LMDB directly; everything else reaches the database through storage's
#     handles (storage/db.h: struct db_read, struct db_write);
#   - no circle among the files of one room: a module is a .c file with its .h
#     (server/net/reply.c and server/net/reply.h are "server/net/reply"), and reply.c
#     including ops.h while ops.c includes reply.h is the circle reply -> ops -> reply.
# Edges listed in scripts/layers.allow ("A -> B  # reason", one a line) are
# tolerated: left out of all checks, and marked "(allowed)" in the graph.
# Exit status 0 when the checks pass, 1 when one fails, 2 on a bad allow-list.
#
# Usage: scripts/layers.sh [ALLOW_FILE]   (run from anywhere; default scripts/layers.allow)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
allow=${1:-$root/scripts/layers.allow}
[ -f "$allow" ] || allow=/dev/null
cd "$root"

# One "FROM TO" line per include: FROM the including module, TO the included one.
edges() {
	for dir in protocol password storage conf ldif server server/db server/replica server/net server/monitor server/ops server/start tools tools/searchrate; do
		for f in "$dir"/*.c "$dir"/*.h; do
			[ -f "$f" ] || continue
			mod=${f%.*}
			sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\/[A-Za-z0-9_/]*\)\.h".*/\1/p' "$f" |
			    while read -r to; do
				echo "$mod $to ${f##*.}"
			    done
		done
	done
}

# LMDB stays in storage/: one "FILE: what" line per include that breaks it.
lmdb_leaks() {
	git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null |
	    while read -r f; do
		[ -f "$f" ] || continue
		case $f in
		storage/*) continue ;;
		esac
		if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*<lmdb\.h>' "$f"; then
			echo "$f: includes <lmdb.h> (only storage/ may: use storage/db.h's handles)"
		fi
		case $f in
		tests/storage/* | tests/ldif/*) continue ;;
		esac
		if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"storage/db_impl\.h"' "$f"; then
			echo "$f: includes storage/db_impl.h (only storage/ and its tests may)"
		fi
	    done
}
# The writers: one "FILE: what" line per product file outside storage/ that names a
# write transaction (struct db_write, db_write_begin) but is not one of the two writers,
# server/replica/ (a replica's changes) and ldif/ (the importer, through storage/db_load.h).
# The read side (operations, connections, the monitor, generations, start-up) holds read
# snapshots only, so no search or bind can write the file.
write_leaks() {
	git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null |
	    while read -r f; do
		[ -f "$f" ] || continue
		case $f in
		storage/* | server/replica/* | ldif/* | tests/* | fuzz/* | bench/*) continue ;;
		esac
		if grep -q 'struct db_write\|db_write_begin' "$f"; then
			echo "$f: names a write transaction (only server/replica/ and ldif/ write)"
		fi
	    done
}
leaks=$(lmdb_leaks; write_leaks)
if [ -n "$leaks" ]; then
	printf 'storage leak: %s\n' "$leaks" | sed '2,$s/^/storage leak: /'
fi

edges | sort -u | awk -v allow="$allow" -v leaks="$([ -n "$leaks" ] && echo 1 || echo 0)" '
# The room of a module: its directory; the top of server/ is the shared ground below every
# other room of server/ (start-up is server/start/, above them all).
function dir(m,    d) {
	d = m; sub(/\/[^\/]*$/, "", d)
	if (d == "server")
		return "server(shared)"
	if (d == "tools/searchrate")
		return "tools"
	return d
}
function rank(d,    order, r) {
	split("protocol password storage ldif server(shared) server/db server/replica server/net server/monitor server/ops server/start tools", order, " ")
	if (d == "conf")
		return 3
	for (r = 1; r <= 12; r++)
		if (order[r] == d)
			return r + (r > 2)
	return -1
}
function name(m,    n) { n = m; sub(/^.*\//, "", n); return n }
# The public headers of the rooms of server/: the only ones other rooms may include.
function doors(d,    out, m) {
	out = ""
	for (m in door)
		if (dir(m) == d)
			out = out (out == "" ? "" : ", ") m ".h"
	return out
}
BEGIN {
	status = leaks == 1
	split("server/net/net server/net/conn server/net/conn_list server/net/listeners " \
	      "server/net/net_worker server/net/reply server/net/tls server/net/tls_socket " \
	      "server/net/sasl " \
	      "server/monitor/monitor " \
	      "server/ops/ops server/replica/replica server/db/db", w, " ")
	for (i in w) {
		door[w[i]] = 1
		guarded[dir(w[i])] = 1
	}
	while ((getline line < allow) > 0) {
		n++
		if (line ~ /^[[:space:]]*(#|$)/)
			continue
		if (line !~ /^[[:space:]]*[a-z][a-z/]*\/[A-Za-z0-9_]+[[:space:]]+->[[:space:]]+[a-z][a-z/]*\/[A-Za-z0-9_]+[[:space:]]+#[[:space:]]*[^[:space:]]/) {
			printf "%s:%d: expected \"dir/a -> dir/b  # reason\": %s\n", allow, n, line
			bad = 1
			continue
		}
		split(line, w, /[[:space:]]+/)
		i = w[1] == "" ? 2 : 1
		allowed[w[i] " " w[i + 2]] = n
	}
	if (bad)
		exit 2
}
$1 != $2 && $3 == "h" {
	hfrom[++nh] = $1; hto[nh] = $2 # a header includes it: followed from a public header
}
$1 != $2 && !(($1 " " $2) in seen) {
	seen[$1 " " $2] = 1
	from[++ne] = $1; to[ne] = $2
	mods[$1] = 1; mods[$2] = 1
	if (($1 " " $2) in allowed)
		used[$1 " " $2] = 1
}
END {
	if (bad)
		exit 2
	split("protocol password storage conf ldif server(shared) server/db server/replica server/net server/monitor server/ops server/start tools", dirs, " ")
	for (d = 1; d <= 13; d++) {
		printf "%s/\n", dirs[d]
		nm = 0
		for (m in mods)
			if (dir(m) == dirs[d])
				list[++nm] = m
		# sort the modules of this directory by name (insertion sort: few)
		for (i = 2; i <= nm; i++)
			for (j = i; j > 1 && list[j - 1] > list[j]; j--) {
				t = list[j]; list[j] = list[j - 1]; list[j - 1] = t
			}
		for (i = 1; i <= nm; i++) {
			out = ""
			for (e = 1; e <= ne; e++) {
				if (from[e] != list[i])
					continue
				label = dir(to[e]) == dirs[d] ? name(to[e]) : to[e]
				if ((from[e] " " to[e]) in allowed)
					label = label "(allowed)"
				out = out " " label
			}
			printf "  %-20s ->%s\n", name(list[i]), out == "" ? " (nothing)" : out
		}
	}
	# Layers: an include may point to its own directory or to a lower layer.
	for (e = 1; e <= ne; e++) {
		a = dir(from[e]); b = dir(to[e])
		if (a == b || ((from[e] " " to[e]) in allowed))
			continue
		if (rank(b) < 0 || rank(b) >= rank(a)) {
			printf "layer violation: %s includes %s.h (%s may not include %s)\n", from[e], to[e], a, b
			status = 1
		} else if ((b in guarded) && !(to[e] in door)) {
			printf "room violation: %s includes %s.h (outside %s, include %s)\n", from[e], to[e], b, doors(b)
			status = 1
		}
	}
	# Umbrellas: a public header that includes many headers of its room, or another
	# public one, makes what they declare reachable through it.
	for (e = 1; e <= nh; e++) {
		if (!(hfrom[e] in door) || dir(hfrom[e]) != dir(hto[e]) || ((hfrom[e] " " hto[e]) in allowed))
			continue
		if (++inroom[hfrom[e]] == 3) {
			printf "umbrella: %s.h includes more than 2 headers of %s\n", hfrom[e], dir(hfrom[e])
			status = 1
		}
		if (hto[e] in door) {
			printf "umbrella: %s.h includes %s.h, another public header of %s\n", hfrom[e], hto[e], dir(hfrom[e])
			status = 1
		}
	}
	# Private headers (NAME_impl.h: the part of a struct that only its room may touch, as
	# struct conn_impl in server/net/conn_impl.h): included only by the files of their
	# room, and never reachable from a public header of the room, so that no other room
	# sees them even through it (the compiler then refuses their fields to other rooms).
	for (m in mods)
		if (m in door)
			pubreach[m] = 1
	changed = 1
	while (changed) {
		changed = 0
		for (e = 1; e <= nh; e++)
			if ((hfrom[e] in pubreach) && !(hto[e] in pubreach)) {
				pubreach[hto[e]] = 1
				changed = 1
			}
	}
	for (e = 1; e <= nh; e++)
		if (hto[e] ~ /_impl$/ && (hfrom[e] in pubreach)) {
			printf "private header: %s.h is reached from a public header through %s.h\n", hto[e], hfrom[e]
			status = 1
		}
	# A header of a room that includes a private header (directly or through the room
	# headers) is private too: no other room may include it either.
	for (e = 1; e <= nh; e++)
		if (hto[e] ~ /_impl$/ && dir(hfrom[e]) == dir(hto[e]))
			secret[hfrom[e]] = hto[e]
	changed = 1
	while (changed) {
		changed = 0
		for (e = 1; e <= nh; e++)
			if ((hto[e] in secret) && !(hfrom[e] in secret) && dir(hfrom[e]) == dir(hto[e])) {
				secret[hfrom[e]] = secret[hto[e]]
				changed = 1
			}
	}
	for (e = 1; e <= ne; e++)
		if ((to[e] in secret) && dir(from[e]) != dir(to[e]) && !((from[e] " " to[e]) in allowed)) {
			printf "private header: %s includes %s.h, which includes %s.h (only %s may)\n", from[e], to[e], secret[to[e]], dir(to[e])
			status = 1
		}
	for (e = 1; e <= ne; e++) {
		if (to[e] !~ /_impl$/ || ((from[e] " " to[e]) in allowed))
			continue
		if (dir(from[e]) != dir(to[e])) {
			printf "private header: %s includes %s.h (only %s may)\n", from[e], to[e], dir(to[e])
			status = 1
		}
	}
	# Circles inside one directory: peel modules with no incoming, then no outgoing
	# edges; whatever is left lies on a circle, and following edges finds one.
	for (e = 1; e <= ne; e++) {
		live[e] = dir(from[e]) == dir(to[e]) && !((from[e] " " to[e]) in allowed)
		if (live[e]) { indeg[to[e]]++; outdeg[from[e]]++ }
	}
	for (m in mods)
		alive[m] = 1
	do {
		changed = 0
		for (m in mods) {
			if (!alive[m] || (indeg[m] > 0 && outdeg[m] > 0))
				continue
			alive[m] = 0; changed = 1
			for (e = 1; e <= ne; e++)
				if (live[e] && (from[e] == m || to[e] == m)) {
					live[e] = 0; indeg[to[e]]--; outdeg[from[e]]--
				}
		}
	} while (changed)
	# Modules that reach each other (transitive closure over the few left) form
	# one knot of circles; it is reported with the edges inside it.
	na = 0
	for (m in mods)
		if (alive[m])
			node[++na] = m
	for (i = 1; i <= na; i++)
		for (j = 1; j <= na; j++)
			reach[i, j] = 0
	for (e = 1; e <= ne; e++)
		if (live[e])
			for (i = 1; i <= na; i++)
				if (node[i] == from[e])
					for (j = 1; j <= na; j++)
						if (node[j] == to[e])
							reach[i, j] = 1
	for (k = 1; k <= na; k++)
		for (i = 1; i <= na; i++)
			if (reach[i, k])
				for (j = 1; j <= na; j++)
					if (reach[k, j])
						reach[i, j] = 1
	for (i = 1; i <= na; i++) {
		if (done[i] || !reach[i, i])
			continue
		delete knot
		for (j = 1; j <= na; j++)
			if (reach[i, j] && reach[j, i]) {
				knot[node[j]] = 1; done[j] = 1
			}
		out = ""
		for (e = 1; e <= ne; e++)
			if (live[e] && (from[e] in knot) && (to[e] in knot))
				out = out (out == "" ? "" : ", ") from[e] " -> " to[e]
		printf "circle: %s\n", out
		status = 1
	}
	for (edge in allowed)
		if (!(edge in used)) {
			split(edge, w, " ")
			printf "note: %s:%d: %s -> %s is no longer included; remove the line\n", allow, allowed[edge], w[1], w[2]
		}
	printf "layers: %s\n", status ? "FAILED" : "ok"
	exit status
}'
