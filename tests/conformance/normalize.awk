# Normalizes one tool output for tests/conformance/run.sh, so that slapd's and
# minidir's answers compare equal exactly when they mean the same thing.
# Run with LC_ALL=C (byte semantics, byte-wise ordering), stdout as the input:
#
#   LC_ALL=C awk -v mode=MODE -v rc=EXIT -v errfile=STDERR-FILE -f normalize.awk STDOUT-FILE
#
# Prints "exit: EXIT", then "matched: DN" for stderr's "Matched DN:" line (the
# rest of stderr is free text and not compared), then stdout by mode:
#
#   -v mode=search    ldapsearch -LLL stdout: drop "#" comment lines (paged
#                     results cookies) but the VLV result's, kept last, lowercase attribute types, canonical
#                     entry DN escapes, server-assigned values -> <assigned>,
#                     attribute lines sorted within each entry, entries sorted
#                     by DN (case-insensitively) unless ordered=1.
#                     countonly=1 prints only "entries: N".
#   -v mode=whoami    ldapwhoami stdout: the authzId, canonical and lowercased
#                     (slapd answers with the normalized DN, which is lowercase).
#   -v mode=compare   ldapcompare stdout: TRUE / FALSE / UNDEFINED and the matched DN.
#   -v assigned="a b c"  lowercase attribute types whose values are server-assigned.

function hexval(h,   i, v, c) {
	v = 0
	for (i = 1; i <= length(h); i++) {
		c = index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
		v = v * 16 + c
	}
	return v
}

# A DN string with one spelling per value: RFC 4514 allows a special
# character escaped as \c or as \XX (slapd writes "cn=Smith\2C John", minidir
# "cn=Smith\, John"); both become \c, and hex-escaped printable ASCII that
# needs no escape becomes the character. Spaces around the RDN separators
# "," and "+" are dropped. Other bytes (UTF-8) are left as they are.
function canon_dn(s,   out, i, n, c, h, d, ch) {
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c == "\\" && i < n) {
			h = substr(s, i + 1, 2)
			if (h ~ /^[0-9A-Fa-f][0-9A-Fa-f]$/) {
				d = hexval(h)
				i += 2
				if (d >= 32 && d < 127) {
					ch = sprintf("%c", d)
					if (index(",+\"\\<>;=# ", ch) > 0)
						out = out "\\" ch
					else
						out = out ch
				} else {
					out = out "\\" toupper(h)
				}
			} else {
				out = out "\\" substr(s, i + 1, 1)
				i++
			}
			continue
		}
		if (c == "," || c == "+") {
			while (out ~ / $/ && out !~ /\\ $/)
				out = substr(out, 1, length(out) - 1)
			out = out c
			while (i < n && substr(s, i + 1, 1) == " ")
				i++
			continue
		}
		out = out c
	}
	return out
}

function flush_entry(   i, j, t) {
	if (!inentry)
		return
	# insertion sort of the attribute lines (entries are small)
	for (i = 2; i <= nlines; i++) {
		t = lines[i]
		for (j = i - 1; j >= 1 && lines[j] > t; j--)
			lines[j + 1] = lines[j]
		lines[j + 1] = t
	}
	body = ""
	for (i = 1; i <= nlines; i++)
		body = body lines[i] "\n"
	nent++
	ent_dn[nent] = dnline
	ent_body[nent] = body
	ent_key[nent] = ordered ? sprintf("%08d", nent) : tolower(dnline) "\001" dnline
	nlines = 0
	dnline = ""
	inentry = 0
}

BEGIN {
	# the result: the exit status, then the matched DN from stderr
	print "exit: " rc
	if (errfile != "") {
		while ((getline line < errfile) > 0)
			if (line ~ /^Matched DN: /)
				print "matched: " tolower(canon_dn(substr(line, 13)))
		close(errfile)
	}
	nassigned = split(assigned, alist, " ")
	for (i = 1; i <= nassigned; i++)
		isassigned[alist[i]] = 1
	nlines = 0
	nent = 0
	inentry = 0
}

mode == "search" {
	# The VLV response control (ldapsearch prints "# vlvResultpos=P count=C context=X
	# (RC) TEXT"): targetPosition, contentCount and the result are compared; the
	# contextID is each server's own. Every other comment line is dropped.
	if ($0 ~ /^# vlvResult/) {
		v = $0
		sub(/ context=[^ ]*/, "", v)
		sub(/^# vlvResult/, "", v)
		sub(/\) .*$/, ")", v)
		vlv = vlv "vlvResult: " v "\n"
		next
	}
	if ($0 ~ /^#/)
		next
	if ($0 == "") {
		flush_entry()
		next
	}
	if (!inentry) {
		inentry = 1
		if ($0 ~ /^dn: /)
			dnline = "dn: " canon_dn(substr($0, 5))
		else
			dnline = $0
		next
	}
	p = index($0, ":")
	if (p == 0) {
		lines[++nlines] = $0
		next
	}
	type = tolower(substr($0, 1, p - 1))
	rest = substr($0, p)
	base = type
	sub(/;.*/, "", base)
	if ((base in isassigned) && length(rest) > 1)
		rest = ": <assigned>"
	lines[++nlines] = type rest
	next
}

# ldapwhoami exits 1 for any failed operation and prints "Result: TEXT (CODE)"
# on stdout, which is kept; the server's "Additional info:" text is not.
mode == "whoami" {
	line = $0
	if (line ~ /^Additional info:/)
		next
	if (line ~ /^dn:/)
		line = "dn:" canon_dn(substr(line, 4))
	print tolower(line)
	next
}

# ldapcompare prints its result on stdout: TRUE / FALSE / UNDEFINED, and on
# errors "Compare Result: TEXT (CODE)" (the exit status says the same), the
# server's free-form "Additional info:" and the matched DN.
mode == "compare" {
	if ($0 ~ /^Matched DN: /)
		print "matched: " tolower(canon_dn(substr($0, 13)))
	else if ($0 !~ /^(Compare Result|Additional info):/)
		print
	next
}

END {
	if (mode != "search")
		exit
	flush_entry()
	if (countonly) {
		print "entries: " nent
		exit
	}
	# insertion sort of the entries by key
	for (i = 1; i <= nent; i++)
		order[i] = i
	for (i = 2; i <= nent; i++) {
		t = order[i]
		for (j = i - 1; j >= 1 && ent_key[order[j]] > ent_key[t]; j--)
			order[j + 1] = order[j]
		order[j + 1] = t
	}
	for (i = 1; i <= nent; i++) {
		printf "%s\n%s\n", ent_dn[order[i]], ent_body[order[i]]
	}
	printf "%s", vlv
}
