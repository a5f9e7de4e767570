#!/bin/sh
# Throwaway certificates for TLS tests, made at test time (no private key is committed).
#   tests/integration/tls_certs.sh DIR
# writes, all PEM, keys mode 600 (readable by the user running the test, as slapd and
# minidir need):
#   DIR/ca.pem, DIR/ca.key          a CA ("CN=minidir test CA,O=minidir test")
#   DIR/server.pem, DIR/server.key  signed by it, CN=localhost, subjectAltName
#                                   IP:127.0.0.1, DNS:localhost and DNS:(this machine's
#                                   name), serverAuth
#   DIR/client.pem, DIR/client.key  signed by it, CN=client,O=minidir test, clientAuth
#   DIR/other-ca.pem                an unrelated CA (its key is thrown away), to trust
#                                   instead of ca.pem where verification must fail
# EC P-256 keys (quick to make), valid for 7 days. Needs the openssl command.
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
mkdir -p "$dir"
umask 077
ext=$(mktemp "$dir/ext.XXXXXX")
trap 'rm -f "$ext" "$dir/other-ca.key"' EXIT
O="/O=minidir test"

# ca NAME CN: a self-signed CA certificate NAME.pem with its key NAME.key.
ca() {
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
		-subj "$O/CN=$2" -keyout "$dir/$1.key" -out "$dir/$1.pem" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2> /dev/null
}

# leaf NAME SUBJECT EXTENSIONS...: NAME.key and NAME.pem, signed by ca.key.
leaf() {
	name=$1 subj=$2
	shift 2
	printf '%s\n' "basicConstraints=critical,CA:FALSE" \
		"keyUsage=critical,digitalSignature" "$@" > "$ext"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subj" \
		-keyout "$dir/$name.key" 2> /dev/null |
		openssl x509 -req -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -days 7 \
			-set_serial "0x$(openssl rand -hex 8)" -extfile "$ext" -out "$dir/$name.pem" 2> /dev/null
}

ca ca "minidir test CA"
ca other-ca "unrelated test CA"
# libldap checks a certificate for "localhost" against the machine's own name instead
# (ldap_pvt_get_fqdn), so that name is in the certificate too.
san="IP:127.0.0.1,DNS:localhost"
me=$(hostname -f 2> /dev/null || hostname 2> /dev/null || true)
case $me in "" | localhost | *[!A-Za-z0-9.-]*) ;; *) san="$san,DNS:$me" ;; esac
leaf server "$O/CN=localhost" "subjectAltName=$san" "extendedKeyUsage=serverAuth"
leaf client "$O/CN=client" "extendedKeyUsage=clientAuth"
for f in ca server client other-ca; do
	[ -s "$dir/$f.pem" ] || { echo "$0: $dir/$f.pem was not made" >&2; exit 1; }
done
chmod 644 "$dir"/*.pem
