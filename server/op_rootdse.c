/* The root DSE (RFC 4512 5.1): what a client reads with base "" and scope base. */
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "server/ops.h"

#ifndef MINIDIR_VERSION
#define MINIDIR_VERSION "0.1"
#endif

int op_rootdse_build(struct server *srv)
{
#define BV(s)                                                                                      \
	{                                                                                          \
		sizeof(s) - 1, s                                                                   \
	}
	struct berval oc[] = {BV("top"), BV("extensibleObject")};
	struct berval nc = {strlen(srv->cfg.suffix), srv->cfg.suffix};
	struct berval ver = BV("3");
	struct berval vendor = BV("minidir");
	struct berval vversion = {strlen(MINIDIR_VERSION), MINIDIR_VERSION};
	struct berval *oc_vals[] = {&oc[0], &oc[1], NULL};
	struct berval *nc_vals[] = {&nc, NULL};
	struct berval *ver_vals[] = {&ver, NULL};
	struct berval *vendor_vals[] = {&vendor, NULL};
	struct berval *vversion_vals[] = {&vversion, NULL};
	LDAPMod m[] = {
	    {LDAP_MOD_BVALUES, "objectClass", {.modv_bvals = oc_vals}},
	    {LDAP_MOD_BVALUES, "namingContexts", {.modv_bvals = nc_vals}},
	    {LDAP_MOD_BVALUES, "supportedLDAPVersion", {.modv_bvals = ver_vals}},
	    {LDAP_MOD_BVALUES, "vendorName", {.modv_bvals = vendor_vals}},
	    {LDAP_MOD_BVALUES, "vendorVersion", {.modv_bvals = vversion_vals}},
	};
	LDAPMod *mods[] = {&m[0], &m[1], &m[2], &m[3], &m[4], NULL};
	struct berval empty = {0, ""};
	return entry_encode(&srv->rootdse, 0, NULL, 0, &empty, mods);
}
