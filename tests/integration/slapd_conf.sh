# shellcheck shell=bash
# One writer of OpenLDAP slapd configs for a syncrepl provider or consumer, sourced by
# tests/integration/provider.sh and bench/replica_lib.sh (bash; they set $EX and $ADMIN).
SCHEMADIR=${SCHEMADIR:-/etc/ldap/schema}
MODULEDIR=${MODULEDIR:-/usr/lib/ldap}

# slapd_conf FILE DIR [LINES]: FILE, a slapd.conf with the core, cosine, inetorgperson
# and nis schemas, back_mdb and syncprov loaded, its pid and args files beside FILE
# (FILE without .conf, then .pid and .args), no logging, and one back-mdb database
# for $EX in DIR (made) with $ADMIN / secret as its rootdn; LINES end the database's
# section (maxsize, dbnosync, indexes, overlays, a consumer's syncrepl).
slapd_conf() {
	mkdir -p "$2"
	cat > "$1" << EOF
include $SCHEMADIR/core.schema
include $SCHEMADIR/cosine.schema
include $SCHEMADIR/inetorgperson.schema
include $SCHEMADIR/nis.schema
modulepath $MODULEDIR
moduleload back_mdb
moduleload syncprov
pidfile ${1%.conf}.pid
argsfile ${1%.conf}.args
loglevel none
database mdb
suffix "$EX"
rootdn "$ADMIN"
rootpw secret
directory $2
${3:-}
EOF
}
