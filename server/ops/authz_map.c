/* SASL identities made DNs (authz_map.h): slapd's authz-regexp. */
#include "server/ops/authz_map.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/config.h"
#include "protocol/dn.h"
#include "server/log.h"

struct authz_rules {
	int n;
	regex_t re[CONFIG_MAX_AUTHZ_REGEXP];
	const char *replace[CONFIG_MAX_AUTHZ_REGEXP]; /* the config's */
};

int authz_map_compile(const struct config *cfg, struct authz_rules **out)
{
	*out = NULL;
	if (cfg->nauthz_regexp == 0)
		return 0;
	struct authz_rules *r = calloc(1, sizeof(*r));
	if (!r) {
		log_error("authz_regexp: out of memory");
		return -1;
	}
	for (int i = 0; i < cfg->nauthz_regexp; i++) {
		const struct authz_regexp *a = &cfg->authz_regexp[i];
		if (regcomp(&r->re[i], a->match, REG_EXTENDED | REG_ICASE) != 0) {
			log_error("authz_regexp \"%s\": does not compile", a->match);
			authz_map_free(r);
			return -1;
		}
		r->replace[i] = a->replace;
		r->n = i + 1;
	}
	*out = r;
	return 0;
}

void authz_map_free(struct authz_rules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	free(r);
}

/* v as an attribute value of a DN string (RFC 4514 2.4): the special characters, a
 * leading '#' or blank and a trailing blank escaped. -1 on a NUL byte or out of memory. */
static int put_value(struct buf *b, const char *v)
{
	size_t n = strlen(v);
	for (size_t i = 0; i < n; i++) {
		char ch = v[i];
		bool esc = strchr(",+\"\\<>;=", ch) || (i == 0 && (ch == '#' || ch == ' ')) ||
		           (i == n - 1 && ch == ' ');
		if ((esc && buf_append(b, "\\", 1) < 0) || buf_append(b, &ch, 1) < 0)
			return -1;
	}
	return 0;
}

int authz_auth_dn(const char *user, const char *realm, const char *mech, struct buf *authdn)
{
	struct buf s = {0};
	int rc = buf_append(&s, "uid=", 4) < 0 || put_value(&s, user) < 0 ? -1 : 0;
	if (rc == 0 && realm && *realm)
		rc = buf_append(&s, ",cn=", 4) < 0 || put_value(&s, realm) < 0 ? -1 : 0;
	if (rc == 0)
		rc = buf_append(&s, ",cn=", 4) < 0 || put_value(&s, mech) < 0 ||
		             buf_append(&s, ",cn=auth", 8) < 0
		         ? -1
		         : 0;
	if (rc == 0)
		rc = dn_normalize((const char *)s.data, s.len, authdn, NULL);
	buf_free(&s);
	return rc;
}

/* rule's replacement with $0-$9 made the groups of m over subject, into out. */
static int substitute(const char *replace, const char *subject, const regmatch_t *m,
                      struct buf *out)
{
	for (const char *p = replace; *p; p++) {
		if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
			const regmatch_t *g = &m[p[1] - '0'];
			p++;
			if (g->rm_so >= 0 &&
			    buf_append(out, subject + g->rm_so, (size_t)(g->rm_eo - g->rm_so)) < 0)
				return -1;
		} else if (buf_append(out, p, 1) < 0) {
			return -1;
		}
	}
	return 0;
}

int authz_map(const struct authz_rules *rules, const struct buf *authdn, struct buf *out)
{
	char *subject = strndup((const char *)authdn->data, authdn->len);
	if (!subject)
		return -1;
	int rc = AUTHZ_UNMAPPED;
	regmatch_t m[10];
	for (int i = 0; rules && i < rules->n; i++) {
		if (regexec(&rules->re[i], subject, 10, m, 0) != 0)
			continue;
		if (substitute(rules->replace[i], subject, m, out) < 0 ||
		    buf_append(out, "", 1) < 0) {
			rc = -1;
		} else {
			out->len--; /* the NUL stays after the text */
			rc = strncasecmp(rules->replace[i], "ldap:", 5) == 0 ? AUTHZ_TO_URL
			                                                     : AUTHZ_TO_DN;
		}
		break;
	}
	free(subject);
	return rc;
}
