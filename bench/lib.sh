# shellcheck shell=bash
# Shared by the bench/*.sh scripts (sourced first, bash): set -u, the tree's root as
# the working directory, $BUILD and $SUFFIX, a temp dir ($work) and
# the processes the script started ($pids), stopped by PID at exit. A script that
# has more to undo at exit (network namespaces) defines bench_cleanup_extra.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
SUFFIX=${SUFFIX:-dc=example,dc=com} # bench/gen-ldif.sh's entries go below it
pids=()

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}
need() { for c in "$@"; do command -v "$c" > /dev/null 2>&1 || die "$c is missing (scripts/deps.sh bench)"; done; }

# bench_init NAME: $work, a temp dir removed at exit (kept with KEEP=1) with every
# process in $pids stopped.
bench_init() {
	work=$(mktemp -d "/tmp/minidir-$1.XXXXXX") || die "mktemp failed"
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}
bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$p" 2> /dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	if declare -F bench_cleanup_extra > /dev/null; then bench_cleanup_extra; fi
	[ -n "${KEEP:-}" ] && { echo "kept $work" >&2; return; }
	rm -rf "$work"
}
# forget PID: drops an ended process from $pids (so its number, perhaps reused, is never
# signalled at exit).
forget() {
	local p keep=()
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}
# bench_directory N CONF [LINE...]: $work/data.ldif, N entries of bench/gen-ldif.sh under
# $SUFFIX, and the minidir config CONF (listen on any port, database $work/db.mdb, the
# suffix, then each LINE) with that LDIF imported.
bench_directory() {
	local n=$1 conf=$2
	shift 2
	bench/gen-ldif.sh "$n" "$SUFFIX" > "$work/data.ldif" || die "gen-ldif.sh failed"
	printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "suffix = $SUFFIX" "$@" > "$conf"
	"$BUILD/minidir-import" -q -f "$conf" "$work/data.ldif" || die "minidir-import failed"
}
# bench_slapd_import [LINE...]: $work/slapd.conf, a slapd with two threads, the core,
# cosine, inetorgperson and nis schemas, each global LINE (TLS files, say) and one back-mdb
# database for $SUFFIX in $work/slapd, into which $work/data.ldif is loaded with slapadd -q.
bench_slapd_import() {
	mkdir -p "$work/slapd"
	{
		for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
		echo "modulepath /usr/lib/ldap"
		echo "moduleload back_mdb"
		echo "pidfile $work/slapd.pid"
		for line in "$@"; do echo "$line"; done
		echo "threads 2"
		echo "loglevel 0"
		echo "database mdb"
		echo "suffix \"$SUFFIX\""
		echo "directory $work/slapd"
		echo "maxsize 1073741824"
	} > "$work/slapd.conf"
	timeout 120 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 ||
		die "slapadd failed: $(tail -3 "$work/slapadd.log")"
}
# wait_port LOG [SCHEME]: the port minidir logged in LOG.
. scripts/wait_port.sh
