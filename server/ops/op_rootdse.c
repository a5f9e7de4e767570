/*
 * The root DSE (RFC 4512 5.1) and the subschema subentry (RFC 4512 4.2): built
 * once at start-up as stored entries. Their attributes other than objectClass
 * (and cn) are operational, sent for "+" or by name, as slapd does.
 */
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "conf/version.h" /* MINIDIR_VERSION: vendorVersion */
#include "protocol/buf.h"
#include "protocol/schema.h"
#include "protocol/sync.h"
#include "server/ops/ops.h"
#include "server/ops/ops_impl.h"

#define BV(s)                                                                                      \
	{                                                                                          \
		sizeof(s) - 1, (char *)(s)                                                         \
	}

/* An attribute of a built entry: a name and a NULL-terminated value list (an empty
 * list leaves the attribute out). */
struct built_attr {
	const char *name;
	struct berval **vals;
};

static int build(struct buf *out, const char *dn, const struct built_attr *attrs, int n)
{
	LDAPMod m[16], *mods[17];
	int k = 0;
	for (int i = 0; i < n && k < 16; i++) {
		if (!attrs[i].vals[0])
			continue;
		m[k].mod_op = LDAP_MOD_BVALUES;
		m[k].mod_type = (char *)attrs[i].name;
		m[k].mod_bvalues = attrs[i].vals;
		mods[k] = &m[k];
		k++;
	}
	mods[k] = NULL;
	struct berval bdn = {strlen(dn), (char *)dn};
	return entry_encode(out, 0, NULL, 0, &bdn, mods);
}

int op_rootdse_build(struct server *srv)
{
	struct berval oc[] = {BV("top"), BV("extensibleObject")};
	struct berval nc = {strlen(srv->cfg.suffix), srv->cfg.suffix};
	/* supportedControl and supportedExtension: the tables' rows listed (op_controls.c,
	 * op_extended.c), in their order; a list kept here by hand once left VLV out. Content
	 * Synchronization only where it is answered (sync_provider), as slapd lists it only
	 * with syncprov. */
	struct berval ctl[OP_CONTROLS_MAX], *ctl_v[OP_CONTROLS_MAX + 1];
	size_t nctl = 0;
	for (size_t i = 0; i < op_ncontrols; i++)
		if (op_controls[i].listed &&
		    (srv->cfg.sync_provider || strcmp(op_controls[i].oid, SYNC_REQUEST_OID) != 0))
			ctl[nctl++] =
			    (struct berval){strlen(op_controls[i].oid), (char *)op_controls[i].oid};
	struct berval ext[OP_EXTENSIONS_MAX], *ext_v[OP_EXTENSIONS_MAX + 1];
	size_t next = 0;
	for (size_t i = 0; i < op_nextensions; i++)
		if (op_extension_listed(&op_extensions[i], srv))
			ext[next++] = (struct berval){strlen(op_extensions[i].oid),
			                              (char *)op_extensions[i].oid};
	for (size_t i = 0; i < nctl; i++)
		ctl_v[i] = &ctl[i];
	ctl_v[nctl] = NULL;
	for (size_t i = 0; i < next; i++)
		ext_v[i] = &ext[i];
	ext_v[next] = NULL;
	struct berval sasl = BV("EXTERNAL");
	/* All operational attributes ("+"), absolute true/false filters. */
	struct berval feat[] = {BV("1.3.6.1.4.1.4203.1.5.1"), BV("1.3.6.1.4.1.4203.1.5.3")};
	struct berval ver = BV("3"), vendor = BV("minidir"), vversion = BV(MINIDIR_VERSION);
	struct berval subschema = BV(SUBSCHEMA_DN);
	/* Where slapd's tools look for its back-monitor tree (monitor_slapd.c). */
	struct berval monitor = BV("cn=Monitor");
	struct berval *oc_v[] = {&oc[0], &oc[1], NULL}, *nc_v[] = {&nc, NULL};
	/* EXTERNAL: the subject of a TLS client certificate (needs tls_ca_file), or an ldapi://
	 * peer's uid and gid. */
	bool ldapi = false;
	for (int i = 0; i < srv->cfg.nlisten; i++)
		ldapi |= srv->cfg.listen[i].scheme == LISTEN_LDAPI;
	/* GSSAPI: Kerberos, when sasl_setup found the keytab and the plugin (server/net/sasl.h). */
	struct berval gssapi = BV("GSSAPI");
	struct berval *sasl_v[3] = {NULL}, **sv = sasl_v;
	if ((srv->tls && srv->cfg.tls_ca_file[0]) || ldapi)
		*sv++ = &sasl;
	if (srv->sasl)
		*sv++ = &gssapi;
	struct berval *feat_v[] = {&feat[0], &feat[1], NULL}, *ver_v[] = {&ver, NULL};
	struct berval *vendor_v[] = {&vendor, NULL}, *vversion_v[] = {&vversion, NULL};
	struct berval *sub_v[] = {&subschema, NULL}, *mon_v[] = {&monitor, NULL};
	const struct built_attr attrs[] = {
	    {"objectClass", oc_v},           {"namingContexts", nc_v},
	    {"subschemaSubentry", sub_v},    {"supportedControl", ctl_v},
	    {"supportedExtension", ext_v},   {"supportedFeatures", feat_v},
	    {"supportedLDAPVersion", ver_v}, {"vendorName", vendor_v},
	    {"vendorVersion", vversion_v},   {"supportedSASLMechanisms", sasl_v},
	    {"monitorContext", mon_v},
	};
	return build(&ops_shared(srv)->rootdse, "", attrs, (int)(sizeof(attrs) / sizeof(attrs[0])));
}

/* The values of a list of match_rule.h's descriptions: l->vals, NULL-terminated, pointing
 * into l->bv and l->text (all malloc'd; descriptions_free). Returns 0 or -1. */
struct descriptions {
	struct berval **vals, *bv;
	char *text;
};
enum { DESC_MAX = 128 };

static int descriptions(bool (*describe)(size_t, char *, size_t), struct descriptions *l)
{
	size_t n = 0;
	char probe[DESC_MAX];
	while (describe(n, probe, sizeof(probe)))
		n++;
	l->vals = calloc(n + 1, sizeof(*l->vals));
	l->bv = calloc(n + 1, sizeof(*l->bv));
	l->text = malloc(n * DESC_MAX + 1);
	if (!l->vals || !l->bv || !l->text)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *p = l->text + i * DESC_MAX;
		describe(i, p, DESC_MAX);
		l->bv[i].bv_val = p;
		l->bv[i].bv_len = strlen(p);
		l->vals[i] = &l->bv[i];
	}
	return 0;
}

static void descriptions_free(struct descriptions *l)
{
	free(l->vals);
	free(l->bv);
	free(l->text);
}

int op_subschema_build(struct server *srv)
{
	size_t na = schema_attr_count(), no = schema_oc_count();
	struct berval *at = calloc(na + 1, sizeof(*at)), **at_v = calloc(na + 1, sizeof(*at_v));
	struct berval *oc = calloc(no + 1, sizeof(*oc)), **oc_v = calloc(no + 1, sizeof(*oc_v));
	struct descriptions mr = {0}, syn = {0};
	int rc = -1;
	if (at && at_v && oc && oc_v && descriptions(match_rule_description, &mr) == 0 &&
	    descriptions(match_syntax_description, &syn) == 0) {
		for (size_t i = 0; i < na; i++) {
			at[i].bv_val = schema_attr_at(i)->definition;
			at[i].bv_len = strlen(at[i].bv_val);
			at_v[i] = &at[i];
		}
		for (size_t i = 0; i < no; i++) {
			oc[i].bv_val = schema_oc_at(i)->definition;
			oc[i].bv_len = strlen(oc[i].bv_val);
			oc_v[i] = &oc[i];
		}
		struct berval cls[] = {BV("top"), BV("subentry"), BV("subschema"),
		                       BV("extensibleObject")};
		struct berval cn = BV("Subschema"), dn = BV(SUBSCHEMA_DN);
		struct berval *cls_v[] = {&cls[0], &cls[1], &cls[2], &cls[3], NULL};
		struct berval *cn_v[] = {&cn, NULL}, *dn_v[] = {&dn, NULL};
		const struct built_attr attrs[] = {
		    {"objectClass", cls_v},     {"cn", cn_v},
		    {"entryDN", dn_v},          {"attributeTypes", at_v},
		    {"objectClasses", oc_v},    {"matchingRules", mr.vals},
		    {"ldapSyntaxes", syn.vals},
		};
		rc = build(&ops_shared(srv)->subschema, SUBSCHEMA_DN, attrs,
		           (int)(sizeof(attrs) / sizeof(attrs[0])));
	}
	free(at);
	free(at_v);
	free(oc);
	free(oc_v);
	descriptions_free(&mr);
	descriptions_free(&syn);
	return rc;
}
