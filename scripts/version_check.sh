#!/bin/sh
# Checks that the version is written once: conf/version.h's MINIDIR_VERSION (what
# --version and the root DSE's vendorVersion print) is the version every man page's .TH
# line names ("minidir X.Y.Z" in its footer) and debian/changelog's newest entry, so that a release that changes the header
# and forgets a page fails make docs-check. Every man/*.[1-8] is checked, a new page too.
#
# Exit status 0 when all agree; 1 with one line per page that differs on standard error.
#
# Usage: scripts/version_check.sh   (from anywhere: the tree's files)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
header=$root/conf/version.h
version=$(sed -n 's/^#define MINIDIR_VERSION "\([^"]*\)"$/\1/p' "$header")
if [ -z "$version" ]; then
	echo "version_check: no #define MINIDIR_VERSION \"X.Y.Z\" line in $header" >&2
	exit 1
fi
bad=0
pages=0
for page in "$root"/man/*.[1-8]; do
	[ -f "$page" ] || continue
	pages=$((pages + 1))
	th=$(grep -m1 '^\.TH ' "$page" || true)
	case $th in
	*"\"minidir $version\""*) ;;
	*)
		echo "version_check: man/${page##*/}: .TH does not name \"minidir $version\" (conf/version.h): ${th:-no .TH line}" >&2
		bad=1
		;;
	esac
done
# debian/changelog's newest entry: upstream version VERSION, any Debian revision after it.
changelog=$root/debian/changelog
deb=$(sed -n '1s/^minidir (\([^)-]*\)\(-[^)]*\)\{0,1\}).*/\1/p' "$changelog" 2> /dev/null || true)
if [ "$deb" != "$version" ]; then
	echo "version_check: debian/changelog's first entry is \"${deb:-no minidir (VERSION-REV) line}\", not $version (conf/version.h)" >&2
	bad=1
fi
if [ "$pages" = 0 ]; then
	echo "version_check: no man page under $root/man" >&2
	exit 1
fi
[ "$bad" = 0 ] && echo "version_check: conf/version.h, debian/changelog and $pages man pages name $version"
exit "$bad"
