#!/bin/sh
# Installs the Debian packages minidir needs to build, test and run.
# Used by the Makefile (make run / make test) and by .ci/run, so a fresh
# Debian 12 machine needs nothing else. Does nothing when all are present.
set -eu

# "deps.sh bench" adds what the benchmarks need (packet captures, charts, the slapd peer).
BENCH_PKGS="tcpdump gnuplot-nox ethtool iproute2 slapd linux-perf"

PKGS="build-essential pkg-config libldap-dev liblmdb-dev lmdb-utils check \
libsubunit-dev ldap-utils libinih-dev libssl-dev libcrypt-dev strace clang-format"

[ "${1:-}" = bench ] && PKGS="$PKGS $BENCH_PKGS"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "deps: need root or sudo to install:$missing" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
