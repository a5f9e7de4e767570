/*
 * minidir-passwd: prints a userPassword or rootpw value for a password, with
 * slappasswd(8)'s command line, in the schemes the server verifies (the table of
 * password/password.c; the hashing in password_hash.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "conf/cli.h"
#include "password/password.h"

#define PROG "minidir-passwd"
/* A password file or line longer than this is refused: no password is that long. */
#define SECRET_MAX (64 * 1024)

static const char usage[] =
    "usage: minidir-passwd [-h SCHEME] [-s SECRET | -T FILE] [-c SALT-FORMAT] [-n]\n"
    "                      [-o module-load=\"argon2 [m=KIB] [t=N] [p=N]\"]\n"
    "\n"
    "Prints a userPassword or rootpw value for a password, as slappasswd(8) does, in a\n"
    "scheme minidir verifies. Without -s or -T it asks twice on a terminal, or reads one\n"
    "line from standard input.\n"
    "\n"
    "  -h SCHEME       {SSHA} (default), {SHA}, {SSHA256}, {SHA256}, {SSHA512},\n"
    "                  {SHA512}, {SMD5}, {MD5}, {CRYPT}, {ARGON2}, {PBKDF2-SHA512},\n"
    "                  {PBKDF2-SHA256}, {PBKDF2-SHA1}, {PBKDF2}, {PBKDF2_SHA256} or\n"
    "                  {CLEARTEXT}\n"
    "  -s SECRET       the password (seen by other users in ps: prefer -T or the prompt)\n"
    "  -T FILE         the password is FILE's whole content, a final newline included\n"
    "  -c SALT-FORMAT  {CRYPT}'s salt as slappasswd's: \"$6$%.16s\" (SHA-512); implies\n"
    "                  {CRYPT}; without it {CRYPT} uses crypt(3)'s default (yescrypt)\n"
    "  -n              no newline after the value\n"
    "  -o OPTION       slappasswd's module options: module-load=argon2 with argon2's\n"
    "                  m= (KiB), t= and p= costs; module-load=pw-sha2, module-path=DIR\n"
    "                  (the schemes are built in: nothing is loaded)\n"
    "  -u              RFC 2307 values (the only kind; for slappasswd's command lines)\n"
    "  -h, --help      this help (-h alone); --version: the version\n";

static void list_schemes(FILE *out)
{
	fputs("known schemes:", out);
	for (size_t i = 0; i < password_nschemes; i++)
		fprintf(out, " %s", password_schemes[i].name);
	fputc('\n', out);
}

static int usage_error(void)
{
	fprintf(stderr, "%s", usage);
	return 2;
}

/* Parses one "m=4096"-like argument of argon2's module into *v; false if bad. */
static bool argon2_cost(const char *arg, uint32_t *v)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(arg + 2, &end, 0);
	if (arg[1] != '=' || end == arg + 2 || *end || errno || n == 0 || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	return true;
}

/*
 * slappasswd's -o: module-path is accepted and ignored; module-load names argon2 (with
 * its cost arguments, as slapd.conf's "moduleload argon2 m=... t=... p=...") or
 * pw-sha2, whose schemes are built in here. Returns false after a message.
 */
static bool module_option(const char *opt, struct password_hash_opts *o)
{
	if (strncmp(opt, "module-path=", 12) == 0)
		return true;
	if (strncmp(opt, "module-load=", 12) != 0) {
		fprintf(stderr, "%s: -o %s: expected module-load=NAME or module-path=DIR\n", PROG,
		        opt);
		return false;
	}
	char *words = strdup(opt + 12), *save = NULL;
	if (!words) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return false;
	}
	bool ok = true;
	char *name = strtok_r(words, " \t", &save);
	const char *base = name ? strrchr(name, '/') : NULL;
	base = base ? base + 1 : name;
	size_t blen = base ? strcspn(base, ".") : 0;
	bool argon2 = (blen == 6 && strncmp(base, "argon2", 6) == 0) ||
	              (blen == 9 && strncmp(base, "pw-argon2", 9) == 0); /* its contrib name */
	bool sha2 = blen == 7 && strncmp(base, "pw-sha2", 7) == 0;
	if (!argon2 && !sha2) {
		fprintf(stderr, "%s: -o %s: no such module: argon2 and pw-sha2 are built in\n",
		        PROG, opt);
		ok = false;
	}
	for (char *w; ok && (w = strtok_r(NULL, " \t", &save));) {
		uint32_t *v = !argon2     ? NULL
		              : *w == 'm' ? &o->argon2_m_kib
		              : *w == 't' ? &o->argon2_t
		              : *w == 'p' ? &o->argon2_p
		                          : NULL;
		if (!v || !argon2_cost(w, v)) {
			fprintf(stderr,
			        "%s: -o %s: bad argument \"%s\" (argon2 takes m=, t=, p=)\n", PROG,
			        opt, w);
			ok = false;
		}
	}
	free(words);
	return ok;
}

/* FILE's whole content, as slappasswd -T reads it (a final newline stays part of the
 * password). Returns it (malloc'd) with *len, or NULL after a message naming FILE. */
static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: -T %s: %s\n", PROG, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & (S_IROTH | S_IWOTH)))
		fprintf(stderr, "%s: warning: -T %s can be read or written by other users\n", PROG,
		        path);
	char *buf = malloc(SECRET_MAX + 1);
	size_t n = 0;
	ssize_t r = 1;
	while (buf && n <= SECRET_MAX && (r = read(fd, buf + n, SECRET_MAX + 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	int saved = errno;
	close(fd);
	if (!buf)
		fprintf(stderr, "%s: out of memory\n", PROG);
	else if (r < 0)
		fprintf(stderr, "%s: -T %s: %s\n", PROG, path, strerror(saved));
	else if (n > SECRET_MAX)
		fprintf(stderr, "%s: -T %s: longer than %d bytes: not a password\n", PROG, path,
		        SECRET_MAX);
	else {
		*len = n;
		return buf;
	}
	if (buf)
		explicit_bzero(buf, n);
	free(buf);
	return NULL;
}

/* One line of f without its "\n", or NULL at end of file (*eof) or on an error. */
static char *read_line(FILE *f, size_t *len, bool *eof)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	*eof = n < 0 && !ferror(f);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	*len = (size_t)n;
	return line;
}

/* The terminal's settings while echo is off, restored by the signal handler too. */
static struct termios saved_tty;
static volatile sig_atomic_t echo_off;

static void restore_tty(int sig)
{
	if (echo_off)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Prompts on standard error and reads a line from the terminal without echo. */
static char *prompt(const char *text, size_t *len)
{
	fputs(text, stderr);
	fflush(stderr);
	struct termios t;
	bool tty = tcgetattr(STDIN_FILENO, &saved_tty) == 0;
	if (tty) {
		t = saved_tty;
		t.c_lflag &= ~(tcflag_t)ECHO;
		echo_off = tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0;
	}
	bool eof;
	char *line = read_line(stdin, len, &eof);
	if (echo_off) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
		echo_off = 0;
	}
	fputc('\n', stderr);
	return line;
}

/* The password from the terminal (asked twice) or standard input's first line. */
static char *read_secret(size_t *len)
{
	if (!isatty(STDIN_FILENO)) {
		bool eof;
		char *line = read_line(stdin, len, &eof);
		if (!line)
			fprintf(stderr, "%s: %s\n", PROG,
			        eof ? "no password on standard input" : strerror(errno));
		return line;
	}
	signal(SIGINT, restore_tty);
	signal(SIGTERM, restore_tty);
	signal(SIGQUIT, restore_tty);
	size_t len2 = 0;
	char *first = prompt("New password: ", len);
	char *again = first ? prompt("Re-enter new password: ", &len2) : NULL;
	char *out = NULL;
	if (!first || !again)
		fprintf(stderr, "%s: no password read from the terminal\n", PROG);
	else if (*len != len2 || memcmp(first, again, len2) != 0)
		fprintf(stderr, "%s: the passwords do not match\n", PROG);
	else
		out = first;
	if (again)
		explicit_bzero(again, len2);
	free(again);
	if (!out && first) {
		explicit_bzero(first, *len);
		free(first);
	}
	return out;
}

/* Wipes and frees the password (NULL: none yet) and returns status: every way out of main
 * once -s may have been read. */
static int leave(char *secret, size_t len, int status)
{
	if (secret)
		explicit_bzero(secret, len);
	free(secret);
	return status;
}

/* What the command line asks for. secret: -s's copy (malloc'd, wiped by leave), or
 * NULL until the password is read (-T, the terminal, standard input). */
struct request {
	const char *scheme_name, *file;
	char *secret;
	size_t len;
	bool newline;
	struct password_hash_opts o;
};

/* -s SECRET: a copy kept, the argument wiped out of ps(1) as slappasswd does. Returns -1
 * to go on, or main's exit status (after a message). */
static int take_secret(struct request *r, char *arg)
{
	r->len = strlen(arg);
	if (!(r->secret = strdup(arg))) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return leave(r->secret, r->len, 1);
	}
	memset(arg, 0, r->len);
	return -1;
}

/* The options into r, slappasswd's way (-h alone is the help). Returns -1 to go on, or
 * main's exit status (after the help, the version or a message; r->secret freed). */
static int parse_options(int argc, char **argv, struct request *r)
{
	enum { OPT_HELP = 256, OPT_VERSION };
	static const struct option longopts[] = {{"help", no_argument, NULL, OPT_HELP},
	                                         {"version", no_argument, NULL, OPT_VERSION},
	                                         {NULL, 0, NULL, 0}};
	int c, status = -1;
	opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, ":h:s:T:c:no:u", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			r->scheme_name = optarg;
			break;
		case 's':
		case 'T':
			if (r->secret || r->file) {
				fprintf(stderr, "%s: one of -s and -T, once\n", PROG);
				status = leave(r->secret, r->len, 2);
			} else if (c == 'T') {
				r->file = optarg;
			} else {
				status = take_secret(r, optarg);
			}
			break;
		case 'c':
			r->o.crypt_salt_format = optarg;
			break;
		case 'n':
			r->newline = false;
			break;
		case 'o':
			if (!module_option(optarg, &r->o))
				status = leave(r->secret, r->len, 2);
			break;
		case 'u':
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			status = leave(r->secret, r->len, 0);
			break;
		case OPT_VERSION:
			printf("%s %s\n", PROG, MINIDIR_VERSION);
			status = leave(r->secret, r->len, 0);
			break;
		case ':':
			if (optopt == 'h') { /* -h alone: the help, as the other tools' -h */
				fputs(usage, stdout);
				status = leave(r->secret, r->len, 0);
				break;
			}
			fprintf(stderr, "%s: -%c needs a value\n", PROG, optopt);
			status = leave(r->secret, r->len, usage_error());
			break;
		default:
			if (optopt)
				fprintf(stderr, "%s: unknown option -%c\n", PROG, optopt);
			else
				fprintf(stderr, "%s: unknown option %s\n", PROG, argv[optind - 1]);
			status = leave(r->secret, r->len, usage_error());
		}
	}
	if (status < 0 && optind < argc) {
		fprintf(stderr, "%s: unexpected argument %s\n", PROG, argv[optind]);
		status = leave(r->secret, r->len, usage_error());
	}
	return status;
}

/* The scheme asked for ({SSHA}, or {CRYPT} with -c alone), or NULL after a message: an
 * unknown one, or -c with a scheme other than {CRYPT}. */
static const struct password_scheme *pick_scheme(const struct request *r)
{
	const char *name = r->scheme_name           ? r->scheme_name
	                   : r->o.crypt_salt_format ? "{CRYPT}"
	                                            : "{SSHA}";
	const struct password_scheme *s = password_scheme_find(name);
	if (!s) {
		fprintf(stderr, "%s: unknown scheme %s; ", PROG, name);
		list_schemes(stderr);
		return NULL;
	}
	if (r->o.crypt_salt_format && s->kind != PASSWORD_CRYPT) {
		fprintf(stderr, "%s: -c is {CRYPT}'s salt format; the scheme is %s\n", PROG,
		        s->name);
		return NULL;
	}
	return s;
}

/* secret hashed in s and printed on standard output; secret wiped and freed. Returns
 * main's exit status. */
static int print_value(const struct password_scheme *s, char *secret, size_t len,
                       const struct request *r)
{
	char err[512];
	char *value = password_hash(s, secret, len, &r->o, err, sizeof(err));
	explicit_bzero(secret, len);
	free(secret);
	if (!value) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		return 1;
	}
	printf("%s%s", value, r->newline ? "\n" : "");
	free(value);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct request r = {.newline = true};
	int status = parse_options(argc, argv, &r);
	if (status >= 0)
		return status;
	const struct password_scheme *s = pick_scheme(&r);
	if (!s)
		return leave(r.secret, r.len, 2);
	size_t len = r.len;
	char *secret = r.file ? read_file(r.file, &len) : r.secret ? r.secret : read_secret(&len);
	if (!secret)
		return 1;
	return print_value(s, secret, len, &r);
}
