/* The warning about a rootpw that is the examples' password (ops.h). */
#include <stdio.h>
#include <string.h>

#include "conf/key_line.h"
#include "server/log.h"
#include "server/ops/ops.h"
#include "server/ops/password.h"

/* The password examples/minidir.conf, the man pages and docs/ give the rootdn. */
#define EXAMPLE_PASSWORD "secret"

bool op_rootpw_is_example(const struct server *srv)
{
	const char *pw = srv->cfg.rootpw;
	/* The check minidir binds with, so that any form that lets "secret" in is caught:
	 * plaintext, {SSHA} with any salt, {CRYPT}, {ARGON2}, ... */
	if (!pw[0] || !password_check(pw, strlen(pw), EXAMPLE_PASSWORD, strlen(EXAMPLE_PASSWORD)))
		return false;
	char where[CONFIG_KEY_WHERE];
	log_warning("%s: rootpw is the examples' password (\"%s\"): whoever has read them can "
	            "bind as %s and read every attribute, password hashes included; set rootpw "
	            "to a hash of your own password (minidir-passwd prints one)",
	            config_key_where(srv->cfg.path, "rootpw", where), EXAMPLE_PASSWORD,
	            srv->cfg.rootdn);
	return true;
}
