#!/usr/bin/env bash
# make image: an OCI image of minidir, built offline with buildah (no registry is asked for
# anything: the image starts FROM scratch). It holds what the minidir package installs to
# run the server (/usr/sbin/minidir, minidir-import, minidir-export, minidir-passwd,
# minidir-seed, the schema files in /usr/share/minidir/schema, the sample configuration),
# exactly the shared libraries ldd names for those programs (and the loader), the example
# directory, and an
# /etc/passwd and /etc/group with one user of its own, minidir (10001:10001), which the
# image runs as. Entrypoint: minidir -f /etc/minidir/minidir.conf: in the foreground,
# logging to standard error (minidir(8)); mount the configuration there (a Kubernetes
# ConfigMap: deploy/kubernetes/, docs/scaling-out.md). /var/lib/minidir is the database's
# directory, the minidir user's; the listen ports must be 1024 or above (no capability is
# granted), 3389 and 9100 in the examples.
#
# Usage: scripts/image.sh [-d DEB]... [-t TAG] [-o FILE]
#   -d DEB   take the files from this .deb (minidir's package, as dpkg-buildpackage made it)
#            instead of `make install PREFIX=/usr` into a staging directory (built in
#            build-image/, so that build/'s compiled-in schema path stays as it is)
#   -t TAG   the image's name (default minidir:VERSION, VERSION from conf/version.h)
#   -o FILE  save it there too, as an OCI archive (make image: build/minidir-image.tar), for
#            `podman load -i FILE` or `skopeo copy oci-archive:FILE ...` on another machine
# BUILDAH_ARGS (words) go before every buildah command: "--root DIR --runroot DIR" keeps the
# image out of the machine's container storage (tests/package/package_test.sh does that),
# "--storage-driver vfs" where overlay does not mount. As root, or rootless under
# `buildah unshare scripts/image.sh` (the files are given to the minidir user by chown).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "image: $*"; }
die() {
	echo "image: $*" >&2
	exit 1
}

debs=()
tag=
out=
while getopts d:t:o: opt; do
	case $opt in
	d) debs+=("$OPTARG") ;;
	t) tag=$OPTARG ;;
	o) out=$OPTARG ;;
	*) die "usage: scripts/image.sh [-d DEB]... [-t TAG] [-o FILE]" ;;
	esac
done

command -v buildah > /dev/null ||
	die "buildah not found: apt-get install buildah (scripts/deps.sh installs it). It builds the image from scratch, without a registry; podman can then run it (podman load -i the -o archive)."
[ "$(id -u)" = 0 ] || die "needs root to give the files to the image's user (chown): run it as root, or as \`buildah unshare $0\`"
read -ra bargs <<< "${BUILDAH_ARGS:-}"
bh() { buildah "${bargs[@]}" "$@"; }

version=$(sed -n 's/^#define MINIDIR_VERSION "\(.*\)"$/\1/p' conf/version.h)
[ -n "$version" ] || die "no MINIDIR_VERSION in conf/version.h"
tag=${tag:-minidir:$version}
uid=10001

tmp=$(mktemp -d "${TMPDIR:-/tmp}/minidir-image.XXXXXX")
ctr=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
	[ -z "$ctr" ] || bh rm "$ctr" > /dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- the package's files --------------------------------------------------------------
pkg=$tmp/pkg
if [ ${#debs[@]} -gt 0 ]; then
	for d in "${debs[@]}"; do
		say "files from $d"
		dpkg-deb -x "$d" "$pkg"
	done
else
	say "make B=build-image PREFIX=/usr INSTALL_STRIP=-s DESTDIR=$pkg install (log: build-image/install.log)"
	mkdir -p build-image
	make --no-print-directory -j"$(nproc 2> /dev/null || echo 2)" B=build-image PREFIX=/usr INSTALL_STRIP=-s \
		DESTDIR="$pkg" install > build-image/install.log 2>&1 ||
		die "make install failed: $(tail -5 build-image/install.log)"
	install -D -m 0644 examples/example.ldif "$pkg/usr/share/doc/minidir/examples/example.ldif"
fi
progs=(minidir minidir-import minidir-export minidir-passwd minidir-seed)
for p in "${progs[@]}"; do
	[ -x "$pkg/usr/sbin/$p" ] || die "no /usr/sbin/$p in the package's files"
done
[ -f "$pkg/usr/share/minidir/schema/core.schema" ] || die "no /usr/share/minidir/schema in the package's files"

# --- the image's root -----------------------------------------------------------------
root=$tmp/root
say "root file system in $root"
install -d "$root/usr/sbin" "$root/usr/share/minidir" "$root/etc/minidir" \
	"$root/usr/share/doc/minidir/examples"
install -d -m 1777 "$root/tmp"
for p in "${progs[@]}"; do
	install -m 0755 "$pkg/usr/sbin/$p" "$root/usr/sbin/"
done
cp -a "$pkg/usr/share/minidir/schema" "$root/usr/share/minidir/"
install -m 0644 "$pkg/etc/minidir/minidir.conf" "$root/etc/minidir/minidir.conf"
gunzip -c -f "$pkg/usr/share/doc/minidir/examples/example.ldif"* > "$root/usr/share/doc/minidir/examples/example.ldif"
install -m 0644 LICENSE "$root/usr/share/doc/minidir/LICENSE"

# Exactly the shared libraries the programs load (ldd: the loader and every DT_NEEDED,
# recursively), each at the path ldd names. Nothing minidir dlopen()s comes with them:
# Cyrus SASL's mechanism plugins (sasl2/) are not there, so SASL GSSAPI is not offered
# by this image; SASL EXTERNAL and simple binds are minidir's own.
libs=$(for p in "${progs[@]}"; do ldd "$root/usr/sbin/$p"; done |
	awk '/not found/ { print "MISSING " $1; next } { for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' | sort -u)
! grep -q '^MISSING' <<< "$libs" || die "ldd: libraries not found: $(grep '^MISSING' <<< "$libs" | tr '\n' ' ')"
n=0
while read -r lib; do
	install -D -m 0644 "$(readlink -f "$lib")" "$root$lib"
	n=$((n + 1))
done <<< "$libs"
chmod 0755 "$root"/lib*/ld-linux* 2> /dev/null || true
say "$n shared libraries (ldd of ${progs[*]})"

# The one user: no shell, home the database's directory. nsswitch.conf: users and groups
# from these files; hosts from /etc/hosts and DNS (a provider named by its Service).
cat > "$root/etc/passwd" << EOF
root:x:0:0:root:/root:/usr/sbin/nologin
minidir:x:$uid:$uid:minidir:/var/lib/minidir:/usr/sbin/nologin
EOF
cat > "$root/etc/group" << EOF
root:x:0:
minidir:x:$uid:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
install -d -m 0750 -o "$uid" -g "$uid" "$root/var/lib/minidir"
install -d -m 0755 -o "$uid" -g "$uid" "$root/run/minidir"
chown -R 0:0 "$root/usr" "$root/etc"
chown root:"$uid" "$root/etc/minidir/minidir.conf"
chmod 0640 "$root/etc/minidir/minidir.conf"
tar --numeric-owner -C "$root" -cf "$tmp/root.tar" .
say "root file system: $(du -sk "$root" | cut -f1) KiB"

# --- the image ------------------------------------------------------------------------
say "buildah from scratch; add the root; config; commit $tag"
ctr=$(bh from scratch)
bh add "$ctr" "$tmp/root.tar" / > /dev/null
bh config --entrypoint '["/usr/sbin/minidir", "-f", "/etc/minidir/minidir.conf"]' --cmd '' \
	--user "$uid:$uid" --workingdir /var/lib/minidir --env PATH=/usr/sbin:/usr/bin \
	--port 3389 --port 9100 --volume /var/lib/minidir \
	--label "org.opencontainers.image.title=minidir" \
	--label "org.opencontainers.image.description=minidir, a read-only LDAPv3 server" \
	--label "org.opencontainers.image.version=$version" \
	--label org.opencontainers.image.licenses=BSD-2-Clause "$ctr"
bh commit --quiet --format oci --rm "$ctr" "$tag" > "$tmp/id"
ctr=
say "built $tag ($(cut -c1-12 "$tmp/id"))"
if [ -n "$out" ]; then
	mkdir -p "$(dirname "$out")"
	rm -f "$out"
	bh push --quiet "$tag" "oci-archive:$out:$tag"
	say "saved $out ($(du -k "$out" | cut -f1) KiB): podman load -i $out"
fi
