# Shared by the bench/*.sh scripts (sourced, bash, set -u): a temp dir ($work) and
# the processes the script started ($pids), stopped by PID at exit. A script that
# has more to undo at exit (network namespaces) defines bench_cleanup_extra.
BUILD=${BUILD:-build}
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
# wait_port LOG [SCHEME]: the port minidir logged in LOG.
. scripts/wait_port.sh
