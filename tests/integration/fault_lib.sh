# shellcheck shell=bash
# Shared by fault_test.sh and conn_memory_test.sh (sourced after lib.sh and use_work_dir):
# a config per part, a server started on it, stopped with its log checked.
# shellcheck disable=SC2154  # $work (use_work_dir) and $stop_why (stop_checked): lib.sh

# write_conf NAME [extra lines...]: $work/NAME.conf for $work/NAME.mdb
write_conf() {
	local name=$1
	shift
	{
		echo "listen = 127.0.0.1:0"
		echo "database = $work/$name.mdb"
		echo "schema_dir = $SCHEMA_DIR"
		echo "suffix = $BASE"
		echo "threads = 2"
		echo "rootdn = cn=admin,$BASE"
		echo "rootpw = root-secret"
		for l in "$@"; do echo "$l"; done
	} > "$work/$name.conf"
}

# start NAME [ULIMIT_N]: starts minidir on NAME.conf; sets pid and port.
start() {
	local name=$1 nofile=${2:-}
	: > "$work/$name.log" # emptied here: the background shell may open it after wait_port reads
	if [ -n "$nofile" ]; then
		(ulimit -n "$nofile" && exec "$BUILD/minidir" -f "$work/$name.conf") 2> "$work/$name.log" &
	else
		"$BUILD/minidir" -f "$work/$name.conf" 2> "$work/$name.log" &
	fi
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/$name.log")
	if [ -z "$port" ]; then
		not_ok "$name: server did not start: $(cat "$work/$name.log")"
		return 1
	fi
}

# stop PID NAME: SIGTERM; the server must exit 0 with no sanitizer report in NAME.log.
stop() {
	stop_checked "$1" "$work/$2.log" || not_ok "$2: $stop_why"
}
