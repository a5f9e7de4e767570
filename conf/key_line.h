/*
 * Where a key was set in a config file, for messages about a value that loaded (libinih
 * does not tell its handler the line it reads: conf/config.c keeps values, not lines).
 *
 * Thread rules: no state; reads the file again on each call.
 */
#ifndef MINIDIR_CONF_KEY_LINE_H
#define MINIDIR_CONF_KEY_LINE_H

/*
 * The number of the last line of the file at path that sets key ("key = ..." or
 * "key: ..." starting in the first column, as libinih reads a key line; an indented
 * line continues the key before it), which is the one whose value config_load kept.
 * 0 when no line sets it or the file cannot be read.
 */
int config_key_line(const char *path, const char *key);

/* Room for config_key_where's text: a path (PATH_MAX) and ":LINE". */
#define CONFIG_KEY_WHERE 4200
/* "PATH:LINE" of the line config_key_line finds for key, or "PATH" when none does, in
 * where (CONFIG_KEY_WHERE bytes), which it returns: the start of a message. */
const char *config_key_where(const char *path, const char *key,
                             char where[static CONFIG_KEY_WHERE]);

#endif
