#include "conf/listen_addr.h"

#include "conf/keyval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * ldapi://PATH (p after the scheme): a Unix socket, its path as is
 * ("ldapi:///run/minidir/ldapi") or %-encoded ("ldapi://%2Frun%2Fminidir%2Fldapi").
 */
static int parse_ldapi(struct listen_addr *a, const char *p, const char *value, char *why,
                       size_t whylen)
{
	size_t n = 0;
	for (; *p && *p != '?' && n + 1 < sizeof(a->path); n++) {
		unsigned hi, lo;
		if (p[0] == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
			a->path[n] = (char)(hi << 4 | lo);
			p += 3;
		} else {
			a->path[n] = *p++;
		}
	}
	a->path[n] = '\0';
	if (n > 1 && a->path[n - 1] == '/')
		a->path[--n] = '\0';
	if (*p && *p != '?')
		return kv_fail(why, whylen,
		               "listen: \"%s\": the socket path is longer than 107 bytes", value);
	if (a->path[0] != '/')
		return kv_fail(why, whylen,
		               "listen: \"%s\": ldapi:// needs an absolute socket path", value);
	a->scheme = LISTEN_LDAPI;
	return 0;
}

int listen_addr_parse(struct listen_addr *a, const char *value, char *why, size_t whylen)
{
	memset(a, 0, sizeof(*a));
	const char *v = value, *dflt = NULL;
	if (strncmp(v, "ldapi://", 8) == 0)
		return parse_ldapi(a, value + 8, value, why, whylen);
	/* slapd's pldap:// and pldaps://: the same, after a PROXY protocol header. */
	if (strncmp(v, "pldap://", 8) == 0 || strncmp(v, "pldaps://", 9) == 0)
		v++, a->proxy = true;
	if (strncmp(v, "ldap://", 7) == 0)
		v += 7, dflt = "389";
	else if (strncmp(v, "ldaps://", 8) == 0)
		v += 8, dflt = "636", a->scheme = LISTEN_LDAPS;
	else if (strstr(v, "://"))
		return kv_fail(why, whylen,
		               "listen: \"%s\": the scheme must be ldap://, ldaps://, ldapi://, "
		               "pldap:// or pldaps://",
		               value);
	char addr[300];
	size_t n = strlen(v);
	if (dflt && n && v[n - 1] == '/')
		n--;
	if (n >= sizeof(addr))
		return kv_fail(why, whylen, "listen: \"%s\" is too long", value);
	memcpy(addr, v, n);
	addr[n] = '\0';
	const char *host = addr, *colon;
	size_t hlen;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || (close[1] != ':' && !(dflt && close[1] == '\0')))
			return kv_fail(why, whylen, "listen: expected [ipv6]:port, got \"%s\"",
			               value);
		host = addr + 1;
		hlen = (size_t)(close - host);
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strrchr(addr, ':');
		if ((!colon && !dflt) || (colon && strchr(addr, ':') != colon))
			return kv_fail(why, whylen, "listen: expected host:port, got \"%s\"",
			               value);
		hlen = colon ? (size_t)(colon - addr) : n;
	}
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : strtol(dflt, &end, 10);
	if (hlen == 0 || hlen >= sizeof(a->host) || (colon && colon[1] == '\0') || *end ||
	    port < 0 || port > 65535)
		return kv_fail(why, whylen,
		               "listen: expected host:port with port 0..65535, got \"%s\"", value);
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	snprintf(a->port, sizeof(a->port), "%ld", port);
	return 0;
}
