# shellcheck shell=bash
# Where the load runs (docs/multicore.md), sourced by bench/lib.sh (for bench/floor.sh and
# bench/cores.sh) and by bench/run.sh: THREADS, the server's workers (its threads key; 2,
# the server's own default); SERVER_CPUS and CLIENT_CPUS, CPU lists for taskset -c (say 0-7 and 8-15 on a
# 16-CPU machine) that the servers and the load tools are started on. Empty (the default):
# no taskset, the kernel places both on every CPU, as on a 2-core machine where they must
# share. $SERVER_ON and $CLIENT_ON are the command prefixes (empty, or taskset -c LIST):
# "${SERVER_ON[@]}" CMD & keeps $! the command's own PID, since taskset execs it.
THREADS=${THREADS:-2}
SERVER_CPUS=${SERVER_CPUS:-}
CLIENT_CPUS=${CLIENT_CPUS:-}
# shellcheck disable=SC2034 # read by the scripts that source this file
SERVER_ON=() CLIENT_ON=()
# shellcheck disable=SC2034
[ -z "$SERVER_CPUS" ] || SERVER_ON=(taskset -c "$SERVER_CPUS")
# shellcheck disable=SC2034
[ -z "$CLIENT_CPUS" ] || CLIENT_ON=(taskset -c "$CLIENT_CPUS")
# cpu_count [LIST]: how many CPUs a taskset list names ("0-3,8" is 5); no LIST: nproc's.
cpu_count() {
	[ -n "${1:-}" ] || { nproc; return; }
	tr ',' '\n' <<< "$1" | awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n }'
}
