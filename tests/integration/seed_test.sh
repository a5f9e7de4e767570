#!/usr/bin/env bash
# A new replica seeded from a peer (issue 52): replica A follows a real slapd provider
# (tests/integration/provider.sh, example.ldif and SEED_ENTRIES more) and hands out
# /snapshot (server/monitor/snapshot.c) over HTTPS (metrics_tls, certificates of
# tls_certs.sh) to the addresses snapshot_allow names; replica B, started from no file with
# syncrepl seed=https://A/snapshot and tls_ca_file, takes A's copy (server/replica/seed.c),
# checks it and follows the provider from its cookie: the provider sends B only what
# changed since (its log says so), and B converges with the changes made meanwhile.
# Refused seeds fall back to a full refresh, logged: an address snapshot_allow leaves out
# (403, on B's plain http:// endpoint), a copy of a replica of another filter, a peer that
# does not answer, a peer whose certificate does not chain to tls_ca_file. /snapshot
# itself: 403 without snapshot_allow, the copy's trailers (length and SHA-256, or XXH3-128
# when asked) match what curl received, HEAD answers headers only; A's endpoint speaks no plain HTTP, and a
# client that stalls its handshake (a bare connection, half a ClientHello) holds no other.
# minidir-seed (tools/minidir_seed.c) fetches A's copy into a file, refuses a file that is
# there, a certificate of another CA and a copy of another filter, leaving nothing; it
# takes a copy from a peer that knows only SHA-256 and refuses one whose checksum differs
# (snapshot_peer.py).
# Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SEED_ENTRIES=${SEED_ENTRIES:-1000}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir seed
provider_setup && provider_add_generated "$SEED_ENTRIES" && provider_start || finish
PROV=ldap://127.0.0.1:$port
mport="" bmport="" gmport="" dead="" # set by pick_port
pick_port mport || finish
certs=$work/certs
tests/integration/tls_certs.sh "$certs" || { not_ok "tls_certs.sh"; finish; }
CURL=(curl --cacert "$certs/ca.pem")

# A: the peer, with the HTTP endpoint over TLS and snapshot_allow.
replica_conf a refreshAndPersist "metrics_listen = 127.0.0.1:$mport
metrics_tls = yes
tls_cert_file = $certs/server.pem
tls_key_file = $certs/server.key
snapshot_allow = 127.0.0.1/32"
replica_run a
apid=$rpid alog=$rlog
aport=$(wait_port "$alog")
REP=ldap://127.0.0.1:$aport
[ -n "$aport" ] && converge 120 && ok "replica A converged with the provider in ${took}s" ||
	{ not_ok "replica A: $(tail -3 "$alog") $(cat "$work/diff" 2> /dev/null)"; finish; }
for _ in $(seq 1 50); do
	[ "$("${CURL[@]}" -s -o /dev/null -w '%{http_code}' "https://127.0.0.1:$mport/readyz")" = 200 ] && break
	sleep 0.1
done
grep -q "metrics_listen: serving .* on https://127.0.0.1:$mport" "$alog" &&
	ok "A's endpoint serves https:// (metrics_tls)" || not_ok "A's endpoint: $(grep metrics_listen "$alog")"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/healthz")
[ "$code" != 200 ] && ok "plain http:// to the TLS endpoint gets no answer ($code)" ||
	not_ok "plain http:// to the TLS endpoint: $code"

# Two clients that stall their handshakes (a bare connection, a TLS record header and no
# more) hold no other: /healthz is answered at once beside them.
exec 7<> "/dev/tcp/127.0.0.1/$mport" 8<> "/dev/tcp/127.0.0.1/$mport"
printf '\x16\x03\x01\x01' >&8
t0=$(date +%s%N)
code=$("${CURL[@]}" -s -m 4 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$mport/healthz")
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$code" = 200 ] && [ "$ms" -lt 2000 ] &&
	ok "/healthz over TLS beside two stalled handshakes: 200 in ${ms} ms" ||
	not_ok "/healthz beside stalled handshakes: $code in ${ms} ms"
exec 7>&- 8>&-

# /snapshot as curl sees it: the bytes, then the trailers that name their length and sum.
snap=https://127.0.0.1:$mport/snapshot
code=$("${CURL[@]}" -s -D "$work/snap.hdr" -o "$work/snap.mdb" -w '%{http_code}' --raw "$snap" 2> /dev/null)
code2=$("${CURL[@]}" -s -o "$work/snap2.mdb" -w '%{http_code}' "$snap")
sum=$(sha256sum < "$work/snap2.mdb" | cut -d' ' -f1)
size=$(stat -c %s "$work/snap2.mdb")
raw_trailer=$(tail -c 200 "$work/snap.mdb" | tr -d '\r' | grep -a "^X-Snapshot")
if [ "$code" = 200 ] && [ "$code2" = 200 ] && grep -qi "^transfer-encoding: chunked" "$work/snap.hdr" &&
	echo "$raw_trailer" | grep -q "^X-Snapshot-Sha256: $sum\$" &&
	echo "$raw_trailer" | grep -q "^X-Snapshot-Bytes: $size\$"; then
	ok "/snapshot: 200, chunked, $size bytes whose SHA-256 the trailers name"
else
	not_ok "/snapshot: $code/$code2, trailers '$raw_trailer', sha $sum size $size"
fi
n=$(mdb_stat -n -a "$work/snap2.mdb" 2> /dev/null | grep -c "Status of")
[ "$n" -ge 5 ] && ok "the copy is an LMDB file of $n tables (mdb_stat)" ||
	not_ok "mdb_stat of the copy: $(mdb_stat -n -a "$work/snap2.mdb" 2>&1 | head -3)"
# Asked for XXH3-128, as a replica asks (server/copy_digest.h): the Trailer header and the
# trailer name it, and its value is what xxhsum -H2 prints for the bytes.
code=$("${CURL[@]}" -s -H "X-Snapshot-Digest: xxh3-128" -D "$work/snapx.hdr" -o "$work/snapx.raw" \
	-w '%{http_code}' --raw "$snap" 2> /dev/null)
xsum=$(xxhsum -H2 < "$work/snap2.mdb" | cut -d' ' -f1)
raw_trailer=$(tail -c 200 "$work/snapx.raw" | tr -d '\r' | grep -a "^X-Snapshot")
if [ "$code" = 200 ] && grep -qi "^trailer: X-Snapshot-Bytes, X-Snapshot-Xxh3-128" "$work/snapx.hdr" &&
	echo "$raw_trailer" | grep -q "^X-Snapshot-Xxh3-128: $xsum\$" &&
	echo "$raw_trailer" | grep -q "^X-Snapshot-Bytes: $size\$"; then
	ok "/snapshot asked for xxh3-128: the trailers name the XXH3-128 xxhsum computes ($xsum)"
else
	not_ok "/snapshot xxh3-128: $code, $(grep -i trailer "$work/snapx.hdr"), trailers '$raw_trailer', xxhsum $xsum"
fi
head=$("${CURL[@]}" -s -I -o /dev/null -w '%{http_code} %{size_download}' "$snap")
[ "$head" = "200 0" ] && ok "HEAD /snapshot: 200, no body" || not_ok "HEAD /snapshot: $head"

# B: seeded from A. The provider sends only what changed since A's cookie.
# describe UID TEXT: the provider's uid=UID gets description TEXT.
describe() {
	printf 'dn: uid=%s,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: %s\n' "$1" "$EX" "$2" |
		ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > /dev/null 2>&1
}
describe user.1 "changed before B started"
pick_port bmport || finish
replica_conf b refreshAndPersist "metrics_listen = 127.0.0.1:$bmport
tls_ca_file = $certs/ca.pem"
sed -i "s|retry=\"1 +\"|retry=\"1 +\" seed=$snap|" "$work/b.conf"
replica_run b
bpid=$rpid blog=$rlog
bport=$(wait_port "$blog")
REP=ldap://127.0.0.1:$bport
if [ -n "$bport" ] && grep -q "syncrepl seed=$snap: [0-9]* bytes, [0-9]* entries" "$blog" && converge 60; then
	ok "replica B seeded from A and converged in ${took}s: $(grep -o "seed=[^ ]*: [0-9]* bytes, [0-9]* entries, in [0-9.]* s" "$blog")"
else
	not_ok "replica B: $(grep -i seed "$blog" | tail -3) $(tail -2 "$blog") $(cat "$work/diff" 2> /dev/null)"
fi
refresh=$(grep -o "refresh done ([a-z ]*): [0-9]* entries added or changed" "$blog" | head -1)
added=$(echo "$refresh" | grep -o "[0-9]* entries" | cut -d' ' -f1)
[ -n "$added" ] && [ "$added" -lt 100 ] &&
	ok "B's first refresh from the copy's cookie brought $added entries, not the $SEED_ENTRIES and more of a full one" ||
	not_ok "B's first refresh: '$refresh'"
describe user.2 "changed while B runs"
converge 30 && ok "a change on the provider reaches the seeded replica B (${took}s)" ||
	not_ok "B after a change: $(cat "$work/diff")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$bmport/snapshot")
[ "$code" = 403 ] && ok "/snapshot without snapshot_allow: 403" || not_ok "/snapshot on B: $code"

# wait_refreshed LOG: until LOG says a refresh is done, 60 s at most (a full refresh of
# SEED_ENTRIES under SAN=1 takes 10 or more).
wait_refreshed() {
	for _ in $(seq 1 600); do
		grep -q "refresh done" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# Refused seeds: each one logged with why, and a full refresh instead, nothing left behind.
# refused NAME WHY SEED_URL [FILTER [CONF]]: a refreshOnly replica whose seed must be
# refused; CONF: lines more for its configuration (default: A's CA as tls_ca_file).
refused() {
	replica_conf "$1" refreshOnly "${5:-tls_ca_file = $certs/ca.pem}"
	sed -i "s|retry=\"1 +\"|retry=\"1 +\" seed=$3 ${4:+filter=$4}|" "$work/$1.conf"
	replica_run "$1"
	local p n
	p=$(wait_port "$rlog")
	wait_refreshed "$rlog"
	n=$(timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$p" -LLL -b "$EX" "(uid=user.7)" 1.1 2> /dev/null | grep -c "^dn:")
	if [ -n "$p" ] && grep -q "syncrepl seed=$3: .*$2.*; a full refresh from the provider instead" "$rlog" &&
		grep -q "refresh done" "$rlog" && [ "$n" = 1 ] && [ ! -e "$work/$1.mdb.seed" ]; then
		ok "seed refused ($2), logged; a full refresh instead, nothing left behind"
	else
		not_ok "refused seed ($2): found $n; $(grep -i seed "$rlog" | tail -2) $(tail -2 "$rlog")"
	fi
	stop_checked "$rpid" "$rlog" || not_ok "$1 stop: $stop_why"
}
refused c "the peer answered HTTP 403" "http://127.0.0.1:$bmport/snapshot"
refused d "the copy replicates" "$snap" "(!(uid=user.5))"
pick_port dead || finish
refused e "onnect" "http://127.0.0.1:$dead/snapshot"
refused f "certificate did not verify against $certs/other-ca.pem" "$snap" "" "tls_ca_file = $certs/other-ca.pem"

# minidir-seed: A's copy into a file, with the checks of seed=.
seed_tool() { "$BUILD/minidir-seed" -f "$work/$1.conf" "$snap" "$work/$2" 2>&1; }
out=$(seed_tool b tool.mdb) && st=0 || st=$?
n=$(mdb_stat -n -a "$work/tool.mdb" 2> /dev/null | grep -c "Status of")
if [ "$st" = 0 ] && echo "$out" | grep -q "tool.mdb: [0-9]* bytes, [0-9]* entries" && [ "$n" -ge 5 ] &&
	[ ! -e "$work/tool.mdb.seed" ]; then
	ok "minidir-seed: $out"
else
	not_ok "minidir-seed: status $st, $out, $n tables"
fi
out=$(seed_tool b tool.mdb) && st=0 || st=$?
[ "$st" = 1 ] && echo "$out" | grep -q "tool.mdb exists: it is not replaced" &&
	ok "minidir-seed refuses a file that is there (status 1)" || not_ok "minidir-seed onto a file: $st, $out"
out=$(seed_tool f tool2.mdb) && st=0 || st=$?
[ "$st" = 1 ] && echo "$out" | grep -q "certificate did not verify against $certs/other-ca.pem" &&
	[ ! -e "$work/tool2.mdb" ] && [ ! -e "$work/tool2.mdb.seed" ] &&
	ok "minidir-seed refuses a certificate of another CA, nothing left: $out" ||
	not_ok "minidir-seed, another CA: $st, $out"
out=$(seed_tool d tool3.mdb) && st=0 || st=$?
[ "$st" = 1 ] && echo "$out" | grep -q "the copy replicates" && [ ! -e "$work/tool3.mdb" ] &&
	[ ! -e "$work/tool3.mdb.seed" ] &&
	ok "minidir-seed refuses a copy of another filter, nothing left" ||
	not_ok "minidir-seed, another filter: $st, $out"

# minidir-seed without a config takes any replica's copy and says what it holds; as root,
# the file goes to the owner of its directory. A server whose syncrepl key replicates more
# than the copy (G leaves user.5 out; H takes all) drops the copy's cookie and refreshes in
# full (with the cookie, the provider would name user.5 present and never send it).
pick_port gmport || finish
replica_conf g refreshOnly "metrics_listen = 127.0.0.1:$gmport
snapshot_allow = 127.0.0.1/32"
sed -i 's|retry="1 +"|retry="1 +" filter="(!(uid=user.5))"|' "$work/g.conf"
replica_run g
gpid=$rpid glog=$rlog
wait_refreshed "$glog"
mkdir "$work/hdir"
owner=$(id -un):$(id -gn)
if [ "$(id -u)" = 0 ]; then
	chown nobody:nogroup "$work/hdir"
	owner=nobody:nogroup
fi
out=$("$BUILD/minidir-seed" "http://127.0.0.1:$gmport/snapshot" "$work/hdir/h.mdb" 2>&1) && st=0 || st=$?
got_owner=$(stat -c %U:%G "$work/hdir/h.mdb" 2> /dev/null)
if [ "$st" = 0 ] && echo "$out" | grep -q "h.mdb holds $EX, replicating provider=$PROV .*filter=(!(uid=user.5))" &&
	[ "$got_owner" = "$owner" ]; then
	ok "minidir-seed without a config: the copy and what it replicates, owned by $got_owner: $(echo "$out" | tail -n +2 | tr '\n' ' ')"
else
	not_ok "minidir-seed without a config: $st, owner $got_owner (want $owner), $out"
fi
stop_checked "$gpid" "$glog" || not_ok "G stop: $stop_why"
replica_conf h refreshOnly
sed -i "s|^database = .*|database = $work/hdir/h.mdb|" "$work/h.conf"
replica_run h
hpid=$rpid hlog=$rlog
wait_refreshed "$hlog"
hport=$(wait_port "$hlog")
n=$(timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$hport" -LLL -b "$EX" "(uid=user.5)" 1.1 2> /dev/null | grep -c "^dn:")
if grep -q "the syncrepl key replicates .*: its cookie is dropped, a full refresh follows" "$hlog" &&
	grep -q "no cookie: full refresh" "$hlog" && [ "$n" = 1 ]; then
	ok "a file seeded from a replica of less: its cookie dropped, a full refresh brings user.5"
else
	not_ok "H on G's copy: user.5 found $n; $(grep -i -e cookie -e replicate "$hlog" | head -3)"
fi
stop_checked "$hpid" "$hlog" || not_ok "H stop: $stop_why"

# Other peers (snapshot_peer.py, serving A's copy): one that knows only SHA-256 (a minidir
# older than the XXH3 checksum) is followed; one whose checksum differs is refused.
# peer_seed MODE FILE: minidir-seed from such a peer; sets out and st, and asked (what
# the peer saw requested).
peer_seed() {
	local pport ppid
	pick_port pport || return 1
	python3 tests/integration/snapshot_peer.py "$pport" "$work/snap2.mdb" "$1" > "$work/peer.log" 2>&1 &
	ppid=$!
	pids+=("$ppid")
	for _ in $(seq 1 50); do
		grep -q listening "$work/peer.log" && break
		sleep 0.1
	done
	out=$("$BUILD/minidir-seed" -f "$work/b.conf" "http://127.0.0.1:$pport/snapshot" "$work/$2" 2>&1) && st=0 || st=$?
	asked=$(grep -o "asked: .*" "$work/peer.log")
	kill "$ppid" 2> /dev/null
	wait "$ppid" 2> /dev/null
}
peer_seed sha-256 old.mdb
[ "$st" = 0 ] && [ "$asked" = "asked: xxh3-128" ] && echo "$out" | grep -q "old.mdb: [0-9]* bytes" &&
	ok "minidir-seed asks for xxh3-128 and takes an older peer's SHA-256: $out" ||
	not_ok "minidir-seed from an older peer: $st, $asked, $out"
for mode in sha-256-wrong xxh3-128-wrong; do
	peer_seed "$mode" bad.mdb
	[ "$st" = 1 ] && echo "$out" | grep -q "its ${mode%-wrong} is [0-9a-f]*, the peer's [0-9a-f]*" &&
		[ ! -e "$work/bad.mdb" ] && [ ! -e "$work/bad.mdb.seed" ] &&
		ok "minidir-seed refuses a copy whose ${mode%-wrong} differs, nothing left: $out" ||
		not_ok "minidir-seed, $mode: $st, $out"
done

stop_checked "$bpid" "$blog" && ok "B stops on SIGTERM, exit 0" || not_ok "B stop: $stop_why"
stop_checked "$apid" "$alog" && ok "A stops on SIGTERM, exit 0" || not_ok "A stop: $stop_why"
finish
