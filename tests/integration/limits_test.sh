#!/usr/bin/env bash
# What a search may cost (max_filter_items, max_search_work) and how a costly one shares
# its worker: a real minidir (one worker) on 500 entries of bench/gen-ldif.sh, ldapsearch
# and python-ldap (slice_client.py). A filter over the item limit answers
# adminLimitExceeded (11) for anonymous and bound users, not for the rootdn; so does a
# search over the work limit (set by SIGHUP); ordinary searches are unaffected; and a
# lookup is answered while a costly search runs on the same worker, also when the cost is
# one entry's (an OR of 900 member items on a group of 10,000 members).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
. tests/integration/lib.sh
use_work_dir limits
EX=dc=example,dc=com
ADMIN="cn=admin,$EX"

bench/gen-ldif.sh 500 "$EX" > "$work/data.ldif"
cat >> "$work/data.ldif" << EOF
dn: uid=tester,ou=people,$EX
objectClass: inetOrgPerson
uid: tester
cn: Tester
sn: Tester
userPassword: tester-secret

dn: cn=biggroup,$EX
objectClass: groupOfNames
cn: biggroup
EOF
# A group of 10,000 members (who need not exist): one entry whose evaluation is costly.
awk -v ex="$EX" 'BEGIN { for (j = 0; j < 10000; j++) printf "member: uid=member.%d,ou=people,%s\n", j, ex }' \
	>> "$work/data.ldif"
cat > "$work/minidir.conf" << EOF
listen = 127.0.0.1:0
database = $work/db.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
threads = 1
rootdn = $ADMIN
rootpw = root-secret
EOF
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || {
	not_ok "import"
	finish
}
start_minidir "$work/minidir.conf" "$work/minidir.log"
[ -n "$port" ] || {
	not_ok "minidir did not start: $(head -3 "$work/minidir.log")"
	finish
}
URL=ldap://127.0.0.1:$port

# or_of N ITEM: "(|ITEM0...ITEM(N-1))" with J in ITEM replaced by the item's number.
or_of() {
	awk -v n="$1" -v item="$2" 'BEGIN { printf "(|"; for (j = 0; j < n; j++) { s = item;
		gsub(/J/, j, s); printf "%s", s }; printf ")" }'
}
# search NAME WANT_RC [GREP] ldapsearch-args...: ldapsearch's exit status (the result
# code) is WANT_RC, and its output holds GREP when given (not starting with -).
search() {
	local name=$1 want=$2 pat='' rc=0
	shift 2
	case ${1:-} in -*) ;; *)
		pat=$1
		shift
		;;
	esac
	timeout 120 ldapsearch -x -LLL -o ldif-wrap=no -H "$URL" "$@" > "$work/out" 2>&1 || rc=$?
	if [ "$rc" != "$want" ]; then
		not_ok "$name: result $rc, expected $want: $(head -c 300 "$work/out")"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$work/out"; then
		not_ok "$name: no \"$pat\" in: $(head -c 300 "$work/out")"
	else
		ok "$name (result $rc)"
	fi
}
# Every and, or, not and item counts: an OR of 1,000 items is 1,001.
f1001=$(or_of 1000 "(uid=nomatch.J)")
as_user=(-D "uid=tester,ou=people,$EX" -w tester-secret)
as_root=(-D "$ADMIN" -w root-secret)

# --- max_filter_items (default 1000) ------------------------------------------------
search "1,001 filter items, anonymous: adminLimitExceeded" 11 \
	"the filter has 1001 items, more than the 1000 allowed (max_filter_items)" -b "$EX" "$f1001" 1.1
search "1,001 filter items, a bound user: adminLimitExceeded" 11 "max_filter_items" \
	"${as_user[@]}" -b "$EX" "$f1001" 1.1
search "1,001 filter items, the rootdn: not limited" 0 "${as_root[@]}" -b "$EX" "$f1001" 1.1
search "1,000 filter items, anonymous: searched" 0 -b "$EX" \
	"$(or_of 998 "(uid=nomatch.J)" | sed 's/)$/(uid=user.42))/')" uid
grep -q "^uid: user.42$" "$work/out" && ok "1,000 items: the entry matching the last item" ||
	not_ok "1,000 items: uid=user.42 not found: $(head -c 200 "$work/out")"
search "1,001 filter items on the root DSE: adminLimitExceeded" 11 -b "" -s base "$f1001"

# Each substrings piece counts as an item: an OR of 17 items of 60 pieces is 1 + 17 * 60 =
# 1,021 items (before, 18), of 16 items 961.
many_pieces="(cn=*$(printf 'q*%.0s' $(seq 1 60)))"
search "17 items of 60 substrings pieces, anonymous: adminLimitExceeded" 11 \
	"the filter has 1021 items" -b "$EX" "$(or_of 17 "$many_pieces")" 1.1
search "16 items of 60 substrings pieces, anonymous: searched" 0 -b "$EX" "$(or_of 16 "$many_pieces")" 1.1
# Pieces RFC 4515 cannot write (libldap's parser refuses them), sent as raw BER: an empty
# piece, and more than 64 in one item, are protocolError (2), as slapd answers an empty one.
# raw_substr PIECES EMPTY: the result code of a substrings item of PIECES pieces, the
# second empty when EMPTY is 1 (tests/integration/substr_client.py).
raw_substr() { "$PYTHON" tests/integration/substr_client.py "$port" "$EX" "$1" "$2"; }
for case in "2 1:an empty substrings piece" "65 0:65 substrings pieces in one item" \
	"64 0:64 substrings pieces in one item"; do
	args=${case%%:*} name=${case#*:}
	want=2
	[ "$name" = "64 substrings pieces in one item" ] && want=0
	# shellcheck disable=SC2086 # two words: the pieces and the empty flag
	got=$(raw_substr $args 2>&1)
	[ "$got" = "$want" ] && ok "$name, raw BER: result $got" ||
		not_ok "$name, raw BER: $got, expected $want"
done

# --- max_search_work, set by SIGHUP ---------------------------------------------------
# 200,000 units: a typeless :dn: item costs about 17 on each entry here (12 values, 4 DN
# AVAs, the item), so 100 of them over 502 entries need ~850,000.
echo "max_search_work = 200000" >> "$work/minidir.conf"
kill -HUP "$pid"
for _ in $(seq 1 100); do grep -q "max_search_work = 200000" "$work/minidir.log" && break; sleep 0.05; done
grep -q "SIGHUP: max_search_work = 200000" "$work/minidir.log" && ok "SIGHUP sets max_search_work" ||
	not_ok "SIGHUP: no max_search_work line in: $(tail -3 "$work/minidir.log")"
costly=$(or_of 100 "(:dn:caseIgnoreMatch:=nomatch.J)")
search "over max_search_work, anonymous: adminLimitExceeded" 11 "max_search_work" -b "$EX" "$costly" 1.1
search "over max_search_work, a bound user: adminLimitExceeded" 11 "max_search_work" \
	"${as_user[@]}" -b "$EX" "$costly" 1.1
search "over max_search_work, sorted: adminLimitExceeded" 11 "max_search_work" \
	-E sss=cn:caseIgnoreOrderingMatch -b "$EX" "$costly" 1.1
search "over max_search_work, paged: adminLimitExceeded" 11 "max_search_work" \
	-E pr=10/noprompt -b "$EX" "$costly" 1.1
search "over max_search_work, the rootdn: not limited" 0 "${as_root[@]}" -b "$EX" "$costly" 1.1
# The same items on a narrower base cost less: allowed.
search "the same filter on one entry: searched" 0 -b "uid=user.7,ou=people,$EX" -s base \
	"$(printf '%s' "$costly" | sed 's/)$/(uid:dn:=user.7))/')" uid
grep -q "^uid: user.7$" "$work/out" && ok "one entry: the :dn: item matched" || not_ok "one entry: no uid=user.7"
# Ordinary searches under the low limit: an indexed lookup, an unindexed substring over
# every entry (sn is the entry's number: 19, 190-199, 1900-1999 of 0-499: 11), everything.
search "an indexed lookup" 0 "^dn: uid=user.123," -b "$EX" "(uid=user.123)" 1.1
search "an unindexed substring search over every entry" 0 -b "$EX" "(sn=19*)" sn
n=$(grep -c "^sn: 19" "$work/out")
[ "$n" = 11 ] && ok "the substring search found all 11 entries" || not_ok "substring search: $n entries, expected 11"
search "a substring search paged by 20" 0 -E pr=20/noprompt -b "$EX" "(sn=1*)" 1.1
n=$(grep -c "^dn: " "$work/out")
[ "$n" = 111 ] && ok "paged: all 111 entries" || not_ok "paged: $n entries, expected 111"
search "a sorted search" 0 -E sss=cn:caseIgnoreOrderingMatch -b "$EX" "(sn=2*)" cn
n=$(grep -c "^cn: " "$work/out")
[ "$n" = 111 ] && ok "sorted: all 111 entries" || not_ok "sorted: $n entries, expected 111"

# --- slicing: a lookup while a costly search runs on the one worker -------------------
# 3,000 :dn: items over 502 entries (about 25 million units, seconds of work): it yields
# after every few candidates; before, it yielded after 512 candidates, that is never here.
# slice_case WHO PW ITEMS LOOKUP [ITEM [HEAVY_BASE [WANT_RC]]]: slice_client.py's checks.
slice_case() {
	local out l
	out=$("$PYTHON" tests/integration/slice_client.py "$URL" "$EX" "$@" 2>&1)
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) not_ok "${l#not ok - }" ;;
		"#"*) echo "$l" ;;
		*) not_ok "slice_client.py: $l" ;;
		esac
	done <<< "$out"
}
slice_case "$ADMIN" root-secret 3000 "(uid=user.250)"

# --- slicing one entry: a lookup while one group's evaluation runs --------------------
# 900 member items that match nothing on a group of 10,000 members: 120,000 units each,
# 108 million in all, past max_search_work set to 100 million: anonymous, it ends
# with 11 after about 1 s of work on that one entry. Before, that entry was evaluated in
# one slice and the lookup waited behind it, answered only after the 11.
sed -i 's/^max_search_work = .*/max_search_work = 100000000/' "$work/minidir.conf"
kill -HUP "$pid"
for _ in $(seq 1 100); do grep -q "max_search_work = 100000000" "$work/minidir.log" && break; sleep 0.05; done
grep -q "SIGHUP: max_search_work = 100000000" "$work/minidir.log" && ok "SIGHUP sets max_search_work to 100000000" ||
	not_ok "SIGHUP: no max_search_work = 100000000 line in: $(tail -3 "$work/minidir.log")"
member_item="(member=uid=nomatch.J,ou=people,$EX)"
slice_case "" "" 900 "(uid=user.250)" "$member_item" "cn=biggroup,$EX" 11
# The rootdn, whom no limit stops: all 108 million units, then success.
slice_case "$ADMIN" root-secret 900 "(uid=user.250)" "$member_item" "cn=biggroup,$EX" 0
# A group's evaluation cut across slices gives the answer one slice would: the last item
# matches (the group's last member), plain, paged and sorted, over the whole tree.
last_match=$(or_of 200 "(member=uid=nomatch.J,ou=people,$EX)" |
	sed "s/)\$/(member=uid=member.9999,ou=people,$EX))/")
for how in plain paged sorted; do
	case $how in
	plain) ctl=() ;;
	paged) ctl=(-E pr=1/noprompt) ;;
	sorted) ctl=(-E sss=cn:caseIgnoreOrderingMatch) ;;
	esac
	search "a group cut across slices, $how: searched" 0 "${as_root[@]}" "${ctl[@]}" -b "$EX" \
		"$last_match" cn
	n=$(grep -c "^dn: " "$work/out")
	[ "$n" = 1 ] && grep -q "^dn: cn=biggroup,$EX" "$work/out" &&
		ok "a group cut across slices, $how: the group found, alone" ||
		not_ok "a group cut across slices, $how: $n entries: $(head -c 200 "$work/out")"
done

if stop_checked "$pid" "$work/minidir.log"; then ok "clean stop"; else not_ok "stop: $stop_why"; fi
finish
