#!/bin/sh
# Installs the Debian packages minidir needs to build, test and run.
# Used by the Makefile (make run / make test) and by .ci/run, so a fresh
# Debian 12 machine needs nothing else. Does nothing when all are present.
set -eu

# "deps.sh bench" adds what the benchmarks need (packet captures, charts, the slapd peer,
# and haproxy, also in PKGS: the load balancer in front of replicas in bench/scaleout.sh).
BENCH_PKGS="tcpdump gnuplot-nox ethtool iproute2 slapd linux-perf haproxy"

# slapd is only a test peer (minidir reads the tree's own schema/, never slapd's files): the
# reference of the conformance tests, the provider of the replica tests and the server of
# searchrate's TLS tests; its own service is kept from starting
# (see below). openssl makes those tests' throwaway certificates (tests/integration/tls_certs.sh);
# python3-ldap is the second client of tests/integration/tls_test.sh. groff-base renders
# the man pages and systemd's systemd-analyze verifies the unit (tests/integration/install_test.sh;
# installing the package starts nothing). clang builds
# make test SAN=1, make test TSAN=1 and make fuzz; libclang-rt-14-dev holds its sanitizer
# (ASan, UBSan, TSan) and libFuzzer runtimes (libclang_rt.fuzzer-x86_64.a).
PKGS="build-essential pkg-config libldap-dev liblmdb-dev lmdb-utils check \
libsubunit-dev ldap-utils libinih-dev libssl-dev libsasl2-dev libcurl4-openssl-dev libxxhash-dev liburing-dev libcrypt-dev libargon2-dev strace clang-format slapd \
procps diffutils clang libclang-rt-14-dev openssl python3-ldap groff-base systemd"
# libcurl4-openssl-dev: a new replica fetches its seed (syncrepl seed=, a peer's
# /snapshot over HTTP or HTTPS) with libcurl; libxxhash-dev: the copy's checksum (XXH3,
# ten times SHA-256's speed here; server/copy_digest.h).
# make shellcheck (a step of make test and .ci/run) runs shellcheck over every shell script.
PKGS="$PKGS shellcheck"
# haproxy: the load balancer in front of minidir in tests/integration/proxy_test.sh (the
# PROXY protocol, option ldap-check), which runs its own on private ports; the system's
# service is kept from starting, as slapd's (below). iproute2's ss picks free ports there.
PKGS="$PKGS haproxy iproute2"
# The Debian package (debian/, dpkg-buildpackage -us -uc -b) and make test-package
# (tests/package/package_test.sh): debhelper, dpkg-dev and fakeroot build it, lintian
# checks it, logrotate rotates its log with the shipped /etc/logrotate.d/minidir.
PKGS="$PKGS debhelper dpkg-dev fakeroot lintian logrotate"
# make image (scripts/image.sh) and make test-package's check of it: buildah builds the OCI
# image from scratch, offline, and runs its entrypoint (chroot isolation; no daemon, no
# registry).
PKGS="$PKGS buildah"
# tests/integration/chain_test.sh runs HAProxy in front of two replicas (its own config,
# ports and pid; the system's service is kept from starting, as for the benchmarks).
# tests/integration/http_test.sh (metrics_listen): curl asks the HTTP endpoint, promtool
# (Debian's prometheus package) checks /metrics, haproxy's option httpchk asks /readyz; the
# prometheus and haproxy system services are kept from starting, as slapd's below.
PKGS="$PKGS curl prometheus haproxy"
# 389-ds-base: the 389 Directory Server provider of tests/integration/ds389_test.sh (an
# instance made by dscreate without systemd in the test's own directory, run by PID; installing
# the package starts nothing). It pulls python3-lib389 (dscreate).
PKGS="$PKGS 389-ds-base"
# samba-ad-dc (and the provisioning files it only recommends): the Active Directory domain
# controller of tests/integration/ad_replica_test.sh (samba_ad.sh provisions a domain in the
# test's own directory and runs samba by PID in a network namespace of its own); its
# system services are kept from starting, as slapd's below.
PKGS="$PKGS samba-ad-dc samba-ad-provision"
# sssd-ldap and libnss-sss: SSSD's ldap provider as a client of ad_replica_test.sh (run in
# a private mount namespace over tmpfs; libnss-sss adds "sss" to /etc/nsswitch.conf, which
# answers nothing while no sssd runs); the system service is kept from starting.
PKGS="$PKGS sssd-ldap libnss-sss"
# The Kerberos peers of SASL GSSAPI binds (tests/integration/krb5_kdc.sh, krb5_probe.sh):
# krb5-kdc (krb5kdc, kdb5_util) runs a KDC made in the test's own directory on a private
# port, by PID; krb5-admin-server only for kadmin.local, which adds principals and writes
# the keytab straight into that database (its kadmind never runs); krb5-user (kinit,
# klist, kdestroy) gets the tickets; libsasl2-modules-gssapi-mit is Cyrus SASL's GSSAPI
# mechanism for slapd and ldapwhoami. Installing them starts the system's KDC and kadmind
# (their postinst scripts) and enables both units: kept from starting, as slapd's below.
# krb5-config (a dependency) writes /etc/krb5.conf, which the tests never read
# (KRB5_CONFIG).
PKGS="$PKGS krb5-kdc krb5-admin-server krb5-user libsasl2-modules-gssapi-mit"
# make perf-check (a step of .ci/run, bench/perf_check.sh) counts instructions with valgrind's
# callgrind; git builds the baseline commit it compares with.
PKGS="$PKGS valgrind git"

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
# Installing slapd would start a system LDAP server on port 389: a policy-rc.d
# that refuses service starts (Debian's mechanism, exit 101) prevents it.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
	$SUDO chmod +x /usr/sbin/policy-rc.d
	policy=yes
fi
# shellcheck disable=SC2086  # $missing is a list of package names, one word each
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || status=$?
[ -n "$policy" ] && $SUDO rm -f /usr/sbin/policy-rc.d
case " $missing " in
*" slapd "*) command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable slapd >/dev/null 2>&1 || true ;;
esac
case " $missing " in
*" haproxy "*) command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable haproxy >/dev/null 2>&1 || true ;;
esac
case " $missing " in
*" samba-ad-dc "*)
	command -v systemctl >/dev/null 2>&1 &&
		$SUDO systemctl disable samba-ad-dc smbd nmbd winbind >/dev/null 2>&1 || true ;;
esac
case " $missing " in
*" sssd-ldap "*) command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable sssd >/dev/null 2>&1 || true ;;
esac
case " $missing " in
*" krb5-kdc "* | *" krb5-admin-server "*)
	command -v systemctl >/dev/null 2>&1 &&
		$SUDO systemctl disable krb5-kdc krb5-admin-server >/dev/null 2>&1 || true ;;
esac
case " $missing " in
*" prometheus "*) command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable prometheus >/dev/null 2>&1 || true ;;
esac
exit "${status:-0}"
