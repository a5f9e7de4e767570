/* Unit tests for conf/config.c: loading configuration files written to a temporary path. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/config_set.h"
#include "server/replica/replica.h"
#include "server/server.h"
#include "tests/check_run.h"

static char base_dir[64]; /* made and removed by the parent process */
static char path[128];

/* Unchecked fixture, in the parent: also cleans up after tests that failed (a failing
 * check ends the test process without running its teardown). */
static void run_setup(void)
{
	snprintf(base_dir, sizeof(base_dir), "/tmp/minidir-conf-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base_dir));
}

static void run_teardown(void)
{
	DIR *d = opendir(base_dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s", base_dir, de->d_name);
			if (de->d_name[0] != '.')
				unlink(p);
		}
		closedir(d);
	}
	rmdir(base_dir);
}

static void setup(void)
{
	snprintf(path, sizeof(path), "%s/conf-XXXXXX", base_dir);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
}

static void write_conf(const char *text)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Loads text; expects success. */
static void load_ok(const char *text, struct config *cfg)
{
	write_conf(text);
	char err[1024] = "";
	int rc = config_load(cfg, path, err, sizeof(err));
	ck_assert_msg(rc == 0, "config_load failed: %s", err);
}

/* Loads text; expects failure with an error starting "path:line: ", and containing needle. */
static void load_fails_at(const char *text, int line, const char *needle)
{
	write_conf(text);
	struct config cfg;
	char err[1024] = "";
	int rc = config_load(&cfg, path, err, sizeof(err));
	config_free(&cfg);
	ck_assert_msg(rc == -1, "accepted:\n%s", text);
	char want[256];
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "error \"%s\" does not start \"%s\"",
	              err, want);
	if (needle)
		ck_assert_msg(strstr(err, needle) != NULL, "error \"%s\" lacks \"%s\"", err,
		              needle);
}

#define BASE "database = var/test.mdb\nsuffix = dc=example,dc=com\n"

START_TEST(valid_full)
{
	struct config cfg;
	load_ok("# minidir test configuration\n"
	        "listen = 127.0.0.1:3389\n"
	        "listen = [::1]:3390\n"
	        "listen = ldap.example.com:636\n"
	        "listen = 0.0.0.0:0\n"
	        "\n"
	        "database = /var/lib/minidir/data.mdb\n"
	        "suffix = DC=Example, DC=Com\n"
	        "threads = 8\n"
	        "; another comment style\n"
	        "send_policy = batch\n"
	        "batch_bytes = 128K\n"
	        "index = uid, cn mail\n"
	        "rootdn = cn=admin,dc=example,dc=com\n"
	        "rootpw = {SSHA}abcdef\n"
	        "max_pdu_bytes = 2M\n"
	        "max_pending_bytes = 8388608\n",
	        &cfg);
	ck_assert_str_eq(cfg.path, path);
	ck_assert_int_eq(cfg.nlisten, 4);
	ck_assert_str_eq(cfg.listen[0].host, "127.0.0.1");
	ck_assert_str_eq(cfg.listen[0].port, "3389");
	ck_assert_str_eq(cfg.listen[1].host, "::1"); /* without brackets */
	ck_assert_str_eq(cfg.listen[1].port, "3390");
	ck_assert_str_eq(cfg.listen[2].host, "ldap.example.com");
	ck_assert_str_eq(cfg.listen[2].port, "636");
	ck_assert_str_eq(cfg.listen[3].host, "0.0.0.0");
	ck_assert_str_eq(cfg.listen[3].port, "0");
	ck_assert_str_eq(cfg.database, "/var/lib/minidir/data.mdb");
	ck_assert_str_eq(cfg.suffix, "DC=Example, DC=Com"); /* as written */
	ck_assert_int_eq(cfg.threads, 8);
	ck_assert_int_eq(cfg.send_policy, SEND_BATCH);
	ck_assert_uint_eq(cfg.batch_bytes, 128 * 1024);
	ck_assert_int_eq(cfg.nindex, 3); /* replaces the default list */
	ck_assert_str_eq(cfg.index[0], "uid");
	ck_assert_str_eq(cfg.index[1], "cn");
	ck_assert_str_eq(cfg.index[2], "mail");
	ck_assert_str_eq(cfg.rootdn, "cn=admin,dc=example,dc=com");
	ck_assert_str_eq(cfg.rootpw, "{SSHA}abcdef");
	ck_assert_uint_eq(cfg.max_pdu_bytes, 2 * 1024 * 1024);
	ck_assert_uint_eq(cfg.max_pending_bytes, 8388608);
	config_free(&cfg);
}
END_TEST

START_TEST(send_policies)
{
	const struct {
		const char *name;
		enum send_policy_id id;
	} p[] = {
	    {"cork-toggle", SEND_CORK_TOGGLE},
	    {"nodelay-once", SEND_NODELAY_ONCE},
	    {"msg-more", SEND_MSG_MORE},
	    {"batch", SEND_BATCH},
	};
	for (size_t i = 0; i < 4; i++) {
		char text[256];
		snprintf(text, sizeof(text), BASE "send_policy = %s\n", p[i].name);
		struct config cfg;
		load_ok(text, &cfg);
		ck_assert_int_eq(cfg.send_policy, p[i].id);
		ck_assert_str_eq(config_policy_name(cfg.send_policy), p[i].name);
		config_free(&cfg);
	}
}
END_TEST

START_TEST(defaults)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_int_eq(cfg.threads, 2);
	ck_assert_int_eq(cfg.send_policy, SEND_BATCH);
	ck_assert_int_eq(cfg.nlisten, 1);
	ck_assert_str_eq(cfg.listen[0].host, "127.0.0.1");
	ck_assert_str_eq(cfg.listen[0].port, "3389");
	ck_assert_str_eq(cfg.database, "var/test.mdb");
	ck_assert_str_eq(cfg.suffix, "dc=example,dc=com");
	ck_assert_str_eq(cfg.rootdn, "");
	ck_assert_str_eq(cfg.rootpw, "");
	/* The key table's defaults (.def), each read by its key's parser. */
	ck_assert_uint_eq(cfg.batch_bytes, 64 * 1024);
	ck_assert_uint_eq(cfg.max_pdu_bytes, 1024 * 1024);
	ck_assert_uint_eq(cfg.max_pdu_bytes_anonymous, 256 * 1024);
	ck_assert_uint_eq(cfg.max_input_bytes_per_worker, 16 * 1024 * 1024);
	ck_assert_uint_eq(cfg.max_pending_bytes, 4 * 1024 * 1024);
	ck_assert_int_eq(cfg.tls_min_version, 12);
	ck_assert_int_eq(cfg.monitor_access, MONITOR_ROOTDN);
	ck_assert_str_eq(cfg.access_log, "none");
	ck_assert_str_eq(cfg.schema, "core cosine inetorgperson nis");
	ck_assert(cfg.allow_anonymous && !cfg.require_tls);
	ck_assert_uint_eq(cfg.max_search_work, 50000000ULL);
	ck_assert_int_eq(cfg.sizelimit, 500);
	ck_assert_int_eq(cfg.bind_fail_window, 300);
	/* The default index list. */
	const char *want[] = {"objectClass", "uid", "cn", "mail", "member"};
	ck_assert_int_eq(cfg.nindex, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_str_eq(cfg.index[i], want[i]);
	config_free(&cfg);
	ck_assert_int_eq(cfg.nindex, 0);
}
END_TEST

START_TEST(reload_resets)
{
	/* Loading into a used struct starts from the defaults again. */
	struct config cfg;
	load_ok(BASE "threads = 9\nlisten = 10.0.0.1:1\nindex = sn\n", &cfg);
	ck_assert_int_eq(cfg.threads, 9);
	config_free(&cfg);
	load_ok(BASE, &cfg);
	ck_assert_int_eq(cfg.threads, 2);
	ck_assert_int_eq(cfg.nlisten, 1);
	ck_assert_str_eq(cfg.listen[0].host, "127.0.0.1");
	ck_assert_int_eq(cfg.nindex, 5);
	config_free(&cfg);
}
END_TEST

/* What a SIGHUP compares: each key's lines, in order, whatever the key. */
static void collect(const char *key, void *arg)
{
	char *out = arg;
	strcat(out, key);
	strcat(out, " ");
}

START_TEST(changed_keys)
{
	struct config a, b;
	load_ok(BASE "threads = 3\naccess = to * by * read\nindex = sn\nindex = cn\n", &a);
	load_ok(BASE "access = to * by * none\nindex = cn\nindex = sn\nthreads = 3\n"
	             "memberof_nested = yes\n",
	        &b);
	ck_assert(!config_key_changed(&a, &b, "threads"));
	ck_assert(config_key_changed(&a, &b, "access"));
	ck_assert(config_key_changed(&a, &b, "index")); /* another order: another file */
	ck_assert(config_key_changed(&a, &b, "memberof_nested"));
	ck_assert(!config_key_changed(&a, &b, "suffix"));
	ck_assert(!config_key_changed(&a, &b, "sizelimit")); /* in neither */
	/* One naming context: a second suffix is refused at its line (before: it won). */
	load_fails_at(BASE "suffix = dc=other,dc=com\n", 3, "suffix is set twice");
	char keys[256] = "";
	config_changed_keys(&a, &b, collect, keys);
	ck_assert_str_eq(keys, "index access memberof_nested "); /* the key table's order */
	keys[0] = '\0';
	config_changed_keys(&a, &a, collect, keys);
	ck_assert_str_eq(keys, "");
	config_free(&a);
	config_free(&b);
}
END_TEST

/* The key table's reload column against what server_reload applies: each runtime value
 * (server.h) is a key applied at once or with the next file, and no other key is. */
START_TEST(reload_column)
{
#define RUNTIME_NAME(type, field, fmt, shown) #field,
	static const char *const runtime[] = {SERVER_RUNTIME_VALUES(RUNTIME_NAME) "send_policy"};
#undef RUNTIME_NAME
	size_t n = sizeof(runtime) / sizeof(runtime[0]);
	for (size_t i = 0; i < n; i++) {
		enum config_reload r = config_key_reload(runtime[i]);
		ck_assert_msg(r == CONFIG_AT_ONCE || r == CONFIG_NEXT_FILE, "%s: %d", runtime[i],
		              r);
	}
	size_t at_once = 0;
	for (size_t i = 0; config_key_at(i); i++) {
		enum config_reload r = config_key_reload(config_key_at(i));
		at_once += r == CONFIG_AT_ONCE || r == CONFIG_NEXT_FILE;
	}
	ck_assert_uint_eq(at_once, n);
	ck_assert_int_eq(config_key_reload("access"), CONFIG_RULES);
	ck_assert_int_eq(config_key_reload("access_log"), CONFIG_REOPENED);
	ck_assert_int_eq(config_key_reload("tls_cert_file"), CONFIG_TLS);
	ck_assert_int_eq(config_key_reload("threads"), CONFIG_RESTART);
	ck_assert_int_eq(config_key_reload("no_such_key"), CONFIG_RESTART);
}
END_TEST

START_TEST(index_lines_accumulate)
{
	struct config cfg;
	load_ok(BASE "index = uid\nindex = cn,\tmail , member\n", &cfg);
	ck_assert_int_eq(cfg.nindex, 4);
	ck_assert_str_eq(cfg.index[0], "uid");
	ck_assert_str_eq(cfg.index[1], "cn");
	ck_assert_str_eq(cfg.index[2], "mail");
	ck_assert_str_eq(cfg.index[3], "member");
	config_free(&cfg);
}
END_TEST

START_TEST(sizes)
{
	struct config cfg;
	load_ok(BASE "batch_bytes = 512\n", &cfg);
	ck_assert_uint_eq(cfg.batch_bytes, 512);
	config_free(&cfg);
	load_ok(BASE "batch_bytes = 64k\n", &cfg);
	ck_assert_uint_eq(cfg.batch_bytes, 65536);
	config_free(&cfg);
	load_ok(BASE "batch_bytes = 1m\n", &cfg);
	ck_assert_uint_eq(cfg.batch_bytes, 1048576);
	config_free(&cfg);
	load_fails_at(BASE "batch_bytes = 511\n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = 17M\n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = 64KB\n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = -1024\n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = \n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = 99999999999999999999999\n", 3, "batch_bytes");
}
END_TEST

START_TEST(sizes_overflow)
{
	/*
	 * A number whose suffix multiplication overflows is out of range. Here
	 * (2^54 + 1) K and (2^44 + 1) M wrap around 2^64 to 1024 and 1 MiB,
	 * values that would pass the range check if the overflow went unseen.
	 */
	load_fails_at(BASE "batch_bytes = 18014398509481985K\n", 3, "batch_bytes");
	load_fails_at(BASE "batch_bytes = 17592186044417M\n", 3, "batch_bytes");
	load_fails_at(BASE "max_pdu_bytes = 18014398509481985K\n", 3, "max_pdu_bytes");
}
END_TEST

/* memo_bytes (issue 29): the default (auto, sized at open: server/db/memo_auto.h), sizes as
 * the other size keys take them, 0, auto, unlimited; bad values fail at their line. */
START_TEST(memo_bytes_key)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_uint_eq(cfg.memo_bytes, CONFIG_MEMO_AUTO);
	config_free(&cfg);
	const struct {
		const char *value;
		size_t want;
	} ok[] = {{"0", 0},
	          {"4096", 4096},
	          {"512k", 512 << 10},
	          {"256M", (size_t)256 << 20},
	          {"1048576m", (size_t)1 << 40},
	          {"unlimited", SIZE_MAX},
	          {"auto", CONFIG_MEMO_AUTO}};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), BASE "memo_bytes = %s\n", ok[i].value);
		load_ok(text, &cfg);
		ck_assert_uint_eq(cfg.memo_bytes, ok[i].want);
		config_free(&cfg);
	}
	load_fails_at(BASE "memo_bytes = -1\n", 3, "memo_bytes");
	load_fails_at(BASE "\nmemo_bytes = 64G\n", 4, "memo_bytes");
	load_fails_at(BASE "memo_bytes = 1048577m\n", 3, "memo_bytes");
	load_fails_at(BASE "memo_bytes = 18014398509481985K\n", 3, "memo_bytes");
	load_fails_at(BASE "memo_bytes = lots\n", 3, "unlimited");
	load_fails_at(BASE "memo_bytes = \n", 3, "memo_bytes");
	load_fails_at(BASE "memo_bytes = Unlimited\n", 3, "memo_bytes");
}
END_TEST

/* The limits on requests clients have not finished (issue 23): defaults, values, errors. */
START_TEST(unfinished_request_limits)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_uint_eq(cfg.max_pdu_bytes_anonymous, 256 * 1024);
	ck_assert_uint_eq(cfg.max_input_bytes_per_worker, 16 * 1024 * 1024);
	ck_assert_int_eq(cfg.pdu_timeout, 10);
	config_free(&cfg);
	load_ok(BASE "max_pdu_bytes_anonymous = 64K\nmax_input_bytes_per_worker = 256M\n"
	             "pdu_timeout = 0\n",
	        &cfg);
	ck_assert_uint_eq(cfg.max_pdu_bytes_anonymous, 64 * 1024);
	ck_assert_uint_eq(cfg.max_input_bytes_per_worker, 256u << 20);
	ck_assert_int_eq(cfg.pdu_timeout, 0);
	config_free(&cfg);
	load_fails_at(BASE "max_pdu_bytes_anonymous = 512\n", 3, "max_pdu_bytes_anonymous");
	load_fails_at(BASE "max_pdu_bytes_anonymous = 65M\n", 3, "max_pdu_bytes_anonymous");
	load_fails_at(BASE "\nmax_input_bytes_per_worker = 32K\n", 4, "max_input_bytes_per_worker");
	load_fails_at(BASE "max_input_bytes_per_worker = 2G\n", 3, "max_input_bytes_per_worker");
	load_fails_at(BASE "pdu_timeout = -1\n", 3, "pdu_timeout");
	load_fails_at(BASE "pdu_timeout = 86401\n", 3, "pdu_timeout");
	load_fails_at(BASE "pdu_timeout = soon\n", 3, "pdu_timeout");
}
END_TEST

START_TEST(long_database_path)
{
	/*
	 * cfg.database holds up to 4095 characters. A 300-character path must
	 * either load intact or be refused on its own line (2), never cut short
	 * or blamed on a line that does not exist in the file as written.
	 */
	char dbpath[301];
	dbpath[0] = '/';
	for (int i = 1; i < 300; i++)
		dbpath[i] = (char)('a' + i % 26);
	dbpath[300] = '\0';
	char text[512];
	snprintf(text, sizeof(text), "suffix = dc=example,dc=com\ndatabase = %s\nthreads = 3\n",
	         dbpath);
	write_conf(text);
	struct config cfg;
	char err[1024] = "";
	int rc = config_load(&cfg, path, err, sizeof(err));
	if (rc == 0) {
		ck_assert_str_eq(cfg.database, dbpath);
		ck_assert_int_eq(cfg.threads, 3);
	} else {
		char want[256];
		snprintf(want, sizeof(want), "%s:2: ", path);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
		              "300-character database path: error \"%s\" does not start \"%s\"",
		              err, want);
	}
	config_free(&cfg);
}
END_TEST

START_TEST(limits_and_access)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_int_eq(cfg.sizelimit, 500);
	ck_assert_int_eq(cfg.timelimit, 3600);
	ck_assert(cfg.allow_anonymous);
	ck_assert_int_eq(cfg.idle_timeout, 0);
	ck_assert_int_eq(cfg.write_timeout, 30);
	ck_assert_int_eq(cfg.monitor_access, MONITOR_ROOTDN);
	config_free(&cfg);
	load_ok(BASE "sizelimit = unlimited\ntimelimit = 5\nallow_anonymous = no\n"
	             "idle_timeout = 600\nwrite_timeout = 0\nmonitor_access = anonymous\n"
	             "schema_dir = /tmp/schema\nschema = core\n",
	        &cfg);
	ck_assert_int_eq(cfg.sizelimit, 0);
	ck_assert_int_eq(cfg.timelimit, 5);
	ck_assert(!cfg.allow_anonymous);
	ck_assert_int_eq(cfg.idle_timeout, 600);
	ck_assert_int_eq(cfg.write_timeout, 0);
	ck_assert_int_eq(cfg.monitor_access, MONITOR_ANONYMOUS);
	ck_assert_str_eq(cfg.schema_dir, "/tmp/schema");
	ck_assert_str_eq(cfg.schema, "core");
	config_free(&cfg);
}
END_TEST

START_TEST(err_limits_and_access)
{
	load_fails_at(BASE "sizelimit = -1\n", 3, "sizelimit");
	load_fails_at(BASE "timelimit = soon\n", 3, "timelimit");
	load_fails_at(BASE "allow_anonymous = maybe\n", 3, "allow_anonymous");
	load_fails_at(BASE "idle_timeout = 86401\n", 3, "idle_timeout");
	load_fails_at(BASE "monitor_access = everyone\n", 3, "monitor_access");
}
END_TEST

START_TEST(search_cost_limits)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_uint_eq(cfg.max_filter_items, 1000);
	ck_assert_uint_eq(cfg.max_search_work, 50000000ULL);
	ck_assert_uint_eq(cfg.inchain_max, 100000);
	config_free(&cfg);
	load_ok(BASE "inchain_max = 21\n", &cfg);
	ck_assert_uint_eq(cfg.inchain_max, 21);
	config_free(&cfg);
	load_ok(BASE "inchain_max = unlimited\n", &cfg);
	ck_assert_uint_eq(cfg.inchain_max, 0);
	config_free(&cfg);
	load_ok(BASE "max_filter_items = 5\nmax_search_work = 1152921504606846976\n", &cfg);
	ck_assert_uint_eq(cfg.max_filter_items, 5);
	ck_assert_uint_eq(cfg.max_search_work, 1ULL << 60);
	config_free(&cfg);
	load_ok(BASE "max_filter_items = unlimited\nmax_search_work = unlimited\n", &cfg);
	ck_assert_uint_eq(cfg.max_filter_items, 0);
	ck_assert_uint_eq(cfg.max_search_work, 0);
	config_free(&cfg);
}
END_TEST

START_TEST(err_search_cost_limits)
{
	/* 0 would read as "no limit": "unlimited" says so. */
	load_fails_at(BASE "max_filter_items = 0\n", 3, "max_filter_items: expected a number");
	load_fails_at(BASE "max_filter_items = -1\n", 3, "max_filter_items");
	load_fails_at(BASE "max_filter_items = 10k\n", 3, "max_filter_items");
	load_fails_at(BASE "max_filter_items = 4294967297\n", 3, "max_filter_items");
	load_fails_at(BASE "max_filter_items =\n", 3, "max_filter_items");
	load_fails_at(BASE "inchain_max = 0\n", 3, "inchain_max: expected a number");
	load_fails_at(BASE "inchain_max = many\n", 3, "inchain_max");
	load_fails_at(BASE "max_search_work = lots\n", 3, "max_search_work");
	load_fails_at(BASE "max_search_work = 1152921504606846977\n", 3, "max_search_work");
	load_fails_at(BASE "max_search_work = 99999999999999999999999\n", 3, "max_search_work");
	load_fails_at(BASE "max_search_work = +5\n", 3, "max_search_work");
}
END_TEST

/* The abuse limits: off by default (0), a 300-second window. */
START_TEST(abuse_limits)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_int_eq(cfg.bind_fail_limit, 0);
	ck_assert_int_eq(cfg.bind_fail_window, 300);
	ck_assert_int_eq(cfg.max_conns_per_ip, 0);
	config_free(&cfg);
	load_ok(BASE "bind_fail_limit = 5\nbind_fail_window = 60\nmax_conns_per_ip = 100\n", &cfg);
	ck_assert_int_eq(cfg.bind_fail_limit, 5);
	ck_assert_int_eq(cfg.bind_fail_window, 60);
	ck_assert_int_eq(cfg.max_conns_per_ip, 100);
	config_free(&cfg);
	load_fails_at(BASE "bind_fail_limit = -1\n", 3,
	              "bind_fail_limit: expected a number 0..1000000");
	load_fails_at(BASE "bind_fail_limit = lots\n", 3, "bind_fail_limit");
	load_fails_at(BASE "bind_fail_window = 0\n", 3,
	              "bind_fail_window: expected seconds 1..86400");
	load_fails_at(BASE "bind_fail_window = 86401\n", 3, "bind_fail_window");
	load_fails_at(BASE "max_conns_per_ip = 1000001\n", 3, "max_conns_per_ip");
}
END_TEST

START_TEST(err_unknown_key)
{
	load_fails_at("# comment\n\n" BASE "colour = blue\nthreads = 4\n", 5, "colour");
}
END_TEST

START_TEST(err_threads)
{
	load_fails_at(BASE "threads = 0\n", 3, "threads");
	load_fails_at("\n\n\n" BASE "threads = abc\n", 6, "threads");
	load_fails_at(BASE "threads = 257\n", 3, "threads");
	load_fails_at(BASE "threads = -2\n", 3, "threads");
	load_fails_at(BASE "threads = 4x\n", 3, "threads");
	load_fails_at("threads = \n" BASE, 1, "threads");
	struct config cfg;
	load_ok(BASE "threads = 256\n", &cfg);
	ck_assert_int_eq(cfg.threads, 256);
	config_free(&cfg);
	load_ok(BASE "threads = 1\n", &cfg);
	ck_assert_int_eq(cfg.threads, 1);
	config_free(&cfg);
}
END_TEST

START_TEST(err_listen)
{
	load_fails_at(BASE "listen = nohostport\n", 3, "listen");
	load_fails_at("# a\n" BASE "listen = [::1]3389\n", 4, "listen");
	load_fails_at(BASE "listen = [::1\n", 3, "listen");
	load_fails_at(BASE "listen = ::1:389\n", 3, "listen"); /* IPv6 needs brackets */
	load_fails_at(BASE "listen = host:\n", 3, "listen");
	load_fails_at(BASE "listen = :389\n", 3, "listen");
	load_fails_at(BASE "listen = []:389\n", 3, "listen");
	load_fails_at(BASE "listen = host:65536\n", 3, "listen");
	load_fails_at(BASE "listen = host:-1\n", 3, "listen");
	load_fails_at(BASE "listen = host:ldap\n", 3, "listen");
	/* A valid one first, the bad one on line 4. */
	load_fails_at(BASE "listen = 127.0.0.1:1\nlisten = bad\n", 4, "listen");
}
END_TEST

/* authz_regexp: two words, quoted or not, the first an extended regular expression; the
 * SASL keys' defaults and ranges. */
START_TEST(sasl_keys)
{
	struct config cfg;
	load_ok(BASE
	        "authz_regexp = \"^uid=([^,]+),cn=gssapi,cn=auth$\" \"uid=$1,ou=people,dc=x\"\n"
	        "authz_regexp = ^uid=x,cn=auth$ ldap:///dc=x??sub?(uid=x)\n"
	        "sasl_realm = EXAMPLE.COM\nsasl_minssf = 56\n",
	        &cfg);
	ck_assert_int_eq(cfg.nauthz_regexp, 2);
	ck_assert_str_eq(cfg.authz_regexp[0].match, "^uid=([^,]+),cn=gssapi,cn=auth$");
	ck_assert_str_eq(cfg.authz_regexp[0].replace, "uid=$1,ou=people,dc=x");
	ck_assert_str_eq(cfg.authz_regexp[1].replace, "ldap:///dc=x??sub?(uid=x)");
	ck_assert_str_eq(cfg.sasl_keytab, "/etc/krb5.keytab");
	ck_assert_str_eq(cfg.sasl_realm, "EXAMPLE.COM");
	ck_assert_int_eq(cfg.sasl_minssf, 56);
	ck_assert_int_eq(cfg.sasl_maxssf, 256);
	config_free(&cfg);
	load_fails_at(BASE "authz_regexp = \"(unclosed\" \"uid=x\"\n", 3, "authz_regexp");
	load_fails_at(BASE "authz_regexp = \"^x$\"\n", 3, "authz_regexp");
	load_fails_at(BASE "authz_regexp = a b c\n", 3, "authz_regexp");
	load_fails_at(BASE "authz_regexp = \"^x$ uid=x\n", 3, "authz_regexp");
	load_fails_at(BASE "sasl_minssf = 257\n", 3, "sasl_minssf");
}
END_TEST

/* pldap:// and pldaps:// (slapd's words): a PROXY header first; proxy_from required. */
START_TEST(proxy_listeners)
{
	struct config cfg;
	load_ok(BASE "listen = pldap://127.0.0.1:1389\nlisten = ldap://127.0.0.1:1390\n"
	             "listen = pldaps://[::1]\nproxy_from = 127.0.0.1 10.0.0.0/8,::1\n"
	             "proxy_from = 192.168.0.0/16\n"
	             "tls_cert_file = /x.pem\ntls_key_file = /x.key\n",
	        &cfg);
	ck_assert_int_eq(cfg.nlisten, 3);
	ck_assert(cfg.listen[0].proxy && cfg.listen[0].scheme == LISTEN_LDAP);
	ck_assert_str_eq(cfg.listen[0].port, "1389");
	ck_assert(!cfg.listen[1].proxy);
	ck_assert(cfg.listen[2].proxy && cfg.listen[2].scheme == LISTEN_LDAPS);
	ck_assert_str_eq(cfg.listen[2].port, "636");
	ck_assert_int_eq(cfg.nproxy_from, 4);
	struct ip_addr a;
	ck_assert(ip_addr_parse("10.1.2.3", &a) && ip_net_holds(&cfg.proxy_from[1], &a));
	ck_assert(ip_addr_parse("192.168.9.9", &a) && ip_net_holds(&cfg.proxy_from[3], &a));
	config_free(&cfg);
	/* No proxy_from: refused at the pldap:// line. */
	load_fails_at(BASE "listen = ldap://127.0.0.1:1\nlisten = pldap://127.0.0.1:2\n", 4,
	              "proxy_from");
	load_fails_at(BASE "proxy_from = 10.0.0.0/33\n", 3, "proxy_from");
	load_fails_at(BASE "proxy_from = proxy.example.com\n", 3, "proxy_from");
	load_fails_at(BASE "proxy_from =\n", 3, "proxy_from");
	load_fails_at(BASE "listen = pldapi:///run/x\n", 3, "listen");
}
END_TEST

START_TEST(err_too_many_listen)
{
	char text[4096] = BASE;
	for (int i = 0; i < CONFIG_MAX_LISTEN; i++) {
		size_t used = strlen(text);
		snprintf(text + used, sizeof(text) - used, "listen = 127.0.0.1:%d\n", 1000 + i);
	}
	struct config cfg;
	load_ok(text, &cfg);
	ck_assert_int_eq(cfg.nlisten, CONFIG_MAX_LISTEN);
	ck_assert_str_eq(cfg.listen[CONFIG_MAX_LISTEN - 1].port, "1015");
	config_free(&cfg);
	strcat(text, "listen = 127.0.0.1:2000\n");
	load_fails_at(text, 2 + CONFIG_MAX_LISTEN + 1, "listen");
}
END_TEST

START_TEST(err_send_policy)
{
	load_fails_at(BASE "send_policy = fast\n", 3, "send_policy");
	load_fails_at(BASE "send_policy = Batch\n", 3, "send_policy");
	load_fails_at(BASE "send_policy = \n", 3, "send_policy");
}
END_TEST

START_TEST(err_suffix)
{
	load_fails_at("database = x.mdb\nsuffix = this is not a dn\n", 2, "suffix");
	load_fails_at("database = x.mdb\n\nsuffix = cn=a,,dc=b\n", 3, "suffix");
	load_fails_at("database = x.mdb\nsuffix = \n", 2, "suffix");
	load_fails_at(BASE "rootdn = not a dn\n", 3, "rootdn");
}
END_TEST

START_TEST(err_index)
{
	load_fails_at(BASE "index = uid, c$n\n", 3, "index");
}
END_TEST

START_TEST(err_section)
{
	/* Keys in a [section] are refused; the report names the section. */
	load_fails_at(BASE "[server]\nthreads = 4\n", 4, "[server]");
	load_fails_at("[main]\n" BASE, 2, "[main]");
}
END_TEST

START_TEST(access_rules)
{
	struct config cfg;
	char err[1024];
	/* No access key: the built-in two rules, userPassword first. */
	write_conf(BASE);
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.naccess, 2);
	ck_assert_str_eq(cfg.access[0].attrs[0], "userPassword");
	ck_assert_int_eq(cfg.access[0].line, 0);
	ck_assert_ptr_null(cfg.access[1].attrs);
	config_free(&cfg);

	/* Rules over several lines, numbered by their "to" line; the defaults dropped. */
	write_conf(BASE
	           "access = to attrs=userPassword\n"
	           "    by self read\n"
	           "\n"
	           "    by anonymous auth\n"
	           "threads = 3\n"
	           "# a comment\n"
	           "access = to dn.subtree=\"ou=x,dc=example,dc=com\" by users read by * none\n"
	           "access = to *\n"
	           "  by * search\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.naccess, 3);
	ck_assert_int_eq(cfg.access[0].line, 3);
	ck_assert_int_eq(cfg.access[0].nwho, 2);
	ck_assert_int_eq(cfg.access[0].who[1].level, ACCESS_AUTH);
	ck_assert_int_eq(cfg.access[1].line, 9);
	ck_assert_int_eq(cfg.access[1].scope, ACCESS_SCOPE_SUBTREE);
	ck_assert_int_eq(cfg.access[2].line, 10);
	ck_assert_int_eq(cfg.access[2].who[0].level, ACCESS_SEARCH);
	ck_assert_int_eq(cfg.threads, 3);
	config_free(&cfg);
	ck_assert_int_eq(cfg.naccess, 0);
}
END_TEST

START_TEST(err_access)
{
	load_fails_at(BASE "access = by * read\n", 3, "needs a \"to\" line before it");
	load_fails_at(BASE "access = to * by * read\naccess = to * by nobody read\n", 4,
	              "access: \"nobody\": expected *, anonymous");
	/* A continuation line is reported at its own line. */
	load_fails_at(BASE "access = to *\n    by * read\n    by * frobnicate\n", 5,
	              "expected a level");
	load_fails_at(BASE "access = to dn.regex=^x$ by * read\n", 3, "not supported");
}
END_TEST

START_TEST(syncrepl_directive)
{
	struct config cfg;
	load_ok(
	    BASE
	    "syncrepl = rid=7 provider=ldaps://p.example:636\n"
	    "\tbindmethod=simple binddn=\"cn=admin,dc=example,dc=com\" credentials=\"s e\\\"c\"\n"
	    "  searchbase=\"dc=example,dc=com\" filter=\"(|(uid=a) (cn=b))\" scope=sub\n"
	    "  attrs=\"*,+\" type=refreshAndPersist interval=01:02:03:04\n"
	    "  retry=\"5 5 60 +\" starttls=critical tls_cacert=/etc/ca.pem tls_reqcert=never\n"
	    "updateref = ldap://provider/\n"
	    "listen_after_refresh = 300\n",
	    &cfg);
	const struct syncrepl_conf *s = &cfg.syncrepl;
	ck_assert(s->set);
	ck_assert_int_eq(s->rid, 7);
	ck_assert_str_eq(s->provider, "ldaps://p.example:636");
	ck_assert_str_eq(s->binddn, "cn=admin,dc=example,dc=com");
	ck_assert_str_eq(s->credentials, "s e\"c");
	ck_assert_str_eq(s->filter, "(|(uid=a) (cn=b))");
	ck_assert_int_eq(s->type, SYNCREPL_REFRESH_AND_PERSIST);
	ck_assert_int_eq(s->interval, ((1 * 24 + 2) * 60 + 3) * 60 + 4);
	ck_assert_int_eq(s->nretry, 2);
	ck_assert_int_eq(s->retry_interval[0], 5);
	ck_assert_int_eq(s->retry_count[0], 5);
	ck_assert_int_eq(s->retry_interval[1], 60);
	ck_assert_int_eq(s->retry_count[1], -1);
	ck_assert_int_eq(s->starttls, SYNCREPL_STARTTLS_CRITICAL);
	ck_assert(s->tls_reqcert_never);
	ck_assert_str_eq(cfg.updateref, "ldap://provider/");
	ck_assert_int_eq(cfg.listen_after_refresh, 300);
	config_free(&cfg);
	load_ok(BASE, &cfg); /* no syncrepl key: no replica */
	ck_assert(!cfg.syncrepl.set);
	config_free(&cfg);
	/* An AD DC polled by uSNChanged: the two AD types, and no other, are "AD" ones. */
	load_ok(BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com "
	             "type=usnChanged\n",
	        &cfg);
	ck_assert_int_eq(cfg.syncrepl.type, SYNCREPL_USN_CHANGED);
	ck_assert(syncrepl_is_ad(&cfg.syncrepl));
	cfg.syncrepl.type = SYNCREPL_DIRSYNC;
	ck_assert(syncrepl_is_ad(&cfg.syncrepl));
	cfg.syncrepl.type = SYNCREPL_REFRESH_ONLY;
	ck_assert(!syncrepl_is_ad(&cfg.syncrepl));
	config_free(&cfg);
}
END_TEST

/* Seeding (issue 52): snapshot_allow's networks (none by default), syncrepl's seed= URL and
 * the source text a replica's file records. */
START_TEST(seed_keys)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert_int_eq(cfg.nsnapshot_allow, 0);
	config_free(&cfg);
	load_ok(BASE "snapshot_allow = 10.0.0.0/8, ::1\nsnapshot_allow = 192.168.1.7\n"
	             "syncrepl = rid=1 provider=ldap://p:389 searchbase=dc=example,dc=com "
	             "seed=http://peer:9100/snapshot filter=(uid=*) attrs=cn,uid\n",
	        &cfg);
	ck_assert_int_eq(cfg.nsnapshot_allow, 3);
	struct ip_addr a;
	ck_assert(ip_addr_parse("10.9.8.7", &a) && ip_net_holds(&cfg.snapshot_allow[0], &a));
	ck_assert(ip_addr_parse("192.168.1.8", &a) && !ip_net_holds(&cfg.snapshot_allow[2], &a));
	ck_assert_str_eq(cfg.syncrepl.seed, "http://peer:9100/snapshot");
	char text[4096];
	ck_assert_int_gt(replica_source_text(&cfg.syncrepl, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "provider=ldap://p:389 searchbase=dc=example,dc=com scope=2 "
	                       "filter=(uid=*) attrs=cn,uid type=refreshOnly");
	ck_assert_int_eq(replica_source_text(&cfg.syncrepl, text, 20), -1);
	config_free(&cfg);
	load_fails_at(BASE "snapshot_allow = peer.example.com\n", 3, "snapshot_allow");
	load_fails_at(BASE "snapshot_allow =\n", 3, "snapshot_allow");
	load_fails_at(BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com "
	                   "seed=ftp://peer/snapshot\n",
	              3, "seed=ftp://peer/snapshot: expected an http:// or https:// URL");
}
END_TEST

/* chain_passwd: off by default, chain_wait_ms 2000; on only with syncrepl. */
START_TEST(chain_passwd_keys)
{
	static const struct {
		const char *text;
		bool on;
		int wait_ms;
	} cases[] = {
	    {BASE, false, 2000},
	    {BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com\n"
	          "chain_passwd = yes\nchain_wait_ms = 0\n",
	     true, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg;
		load_ok(cases[i].text, &cfg);
		ck_assert(cfg.chain_passwd == cases[i].on);
		ck_assert_int_eq(cfg.chain_wait_ms, cases[i].wait_ms);
		config_free(&cfg);
	}
	load_fails_at(BASE "\nchain_passwd = yes\n", 4, "chain_passwd = yes forwards password");
	load_fails_at(BASE "chain_passwd = maybe\n", 3, "chain_passwd");
	load_fails_at(BASE "chain_wait_ms = 60001\n", 3, "chain_wait_ms");
	load_fails_at(BASE "chain_wait_ms = -1\n", 3, "chain_wait_ms");
}
END_TEST

/* sync_provider: off by default, its log 10000 (100..1000000); on only with syncrepl. */
START_TEST(sync_provider_keys)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert(!cfg.sync_provider);
	ck_assert_int_eq(cfg.sync_provider_log, 10000);
	config_free(&cfg);
	load_ok(BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com\n"
	             "sync_provider = yes\nsync_provider_log = 100\n",
	        &cfg);
	ck_assert(cfg.sync_provider);
	ck_assert_int_eq(cfg.sync_provider_log, 100);
	config_free(&cfg);
	load_fails_at(BASE "\nsync_provider = yes\n", 4, "sync_provider = yes lets replicas");
	load_fails_at(BASE "sync_provider_log = 99\n", 3, "sync_provider_log");
	load_fails_at(BASE "sync_provider_log = 1000001\n", 3, "sync_provider_log");
}
END_TEST

/* metrics_tls: off by default; on only with tls_cert_file and tls_key_file, refused at its
 * own line without them. */
START_TEST(metrics_tls_key)
{
	struct config cfg;
	load_ok(BASE "metrics_listen = 127.0.0.1:9100\n", &cfg);
	ck_assert(!cfg.metrics_tls);
	config_free(&cfg);
	load_ok(BASE "tls_cert_file = /x.pem\ntls_key_file = /x.key\n"
	             "metrics_listen = 127.0.0.1:9100\nmetrics_tls = yes\n",
	        &cfg);
	ck_assert(cfg.metrics_tls);
	ck_assert_int_eq(config_key_reload("metrics_tls"), CONFIG_RESTART);
	config_free(&cfg);
	load_fails_at(BASE "metrics_listen = 127.0.0.1:9100\n\nmetrics_tls = yes\n", 5,
	              "metrics_tls = yes serves the HTTP endpoint over TLS: it needs "
	              "tls_cert_file and tls_key_file");
	load_fails_at(BASE "metrics_tls = sometimes\n", 3, "metrics_tls");
}
END_TEST

/* dynamic_groups: off by default, dynamic_groups_max 1000 (1..1000000); with syncrepl too. */
START_TEST(dynamic_groups_keys)
{
	struct config cfg;
	load_ok(BASE, &cfg);
	ck_assert(!cfg.dynamic_groups);
	ck_assert_int_eq(cfg.dynamic_groups_max, 1000);
	config_free(&cfg);
	load_ok(BASE "dynamic_groups = yes\ndynamic_groups_max = 1\n", &cfg);
	ck_assert(cfg.dynamic_groups);
	ck_assert_int_eq(cfg.dynamic_groups_max, 1);
	config_free(&cfg);
	load_fails_at(BASE "dynamic_groups = maybe\n", 3, "dynamic_groups");
	load_fails_at(BASE "dynamic_groups_max = 0\n", 3, "dynamic_groups_max");
	load_fails_at(BASE "dynamic_groups_max = 1000001\n", 3, "dynamic_groups_max");
	/* A replica keeps them (storage/dyngroup_update.h), with nested memberOf too. */
	load_ok(BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com\n"
	             "dynamic_groups = yes\nmemberof_nested = yes\n",
	        &cfg);
	ck_assert(cfg.dynamic_groups && cfg.syncrepl.set &&
	          cfg.memberof_nested == MEMBEROF_NESTED_YES);
	config_free(&cfg);
}
END_TEST

START_TEST(err_syncrepl)
{
#define SR "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com\n"
	load_fails_at(BASE SR "  bogus=1\n", 4, "unknown word \"bogus\"");
	load_fails_at(BASE SR "  bindmethod=sasl\n", 4, "only simple");
	load_fails_at(BASE SR "  type=refreshSometimes\n", 4, "type=refreshSometimes");
	load_fails_at(BASE SR "  retry=\"5 + 60 +\"\n", 4, "only the last count");
	load_fails_at(BASE SR "  retry=\"5\"\n", 4, "pairs");
	load_fails_at(BASE SR "  interval=1:00\n", 4, "dd:hh:mm:ss");
	load_fails_at(BASE SR "  filter=\"(uid=a\"\n", 4, "not a valid filter");
	load_fails_at(BASE SR "  binddn=\"cn=a\n", 4, "double quote");
	load_fails_at(BASE "syncrepl = provider=ldap://p\n", 3, "starts with rid=");
	load_fails_at(BASE SR "syncrepl = rid=2\n", 4, "only one syncrepl");
	load_fails_at(BASE "syncrepl = rid=1 provider=http://p\n", 3, "ldap://");
	load_fails_at(BASE "updateref = provider\n", 3, "updateref");
	load_fails_at(BASE SR "listen_after_refresh = soon\n", 4, "listen_after_refresh");
	load_fails_at(BASE SR "listen_after_refresh = 86401\n", 4, "listen_after_refresh");
	/* Every word's own error, through the file. */
	load_fails_at(BASE "syncrepl = rid=1000\n", 3, "syncrepl: rid=1000: expected 1 to 999");
	load_fails_at(BASE SR "  binddn=\"not a dn\"\n", 4,
	              "syncrepl: \"not a dn\" is not a valid DN");
	load_fails_at(BASE SR "  searchbase=x\n", 4, "syncrepl: \"x\" is not a valid DN");
	load_fails_at(BASE SR "  scope=children\n", 4,
	              "syncrepl: scope=children is not a value this word takes");
	load_fails_at(BASE SR "  starttls=maybe\n", 4,
	              "syncrepl: starttls=maybe is not a value this word takes");
	load_fails_at(BASE SR "  tls_reqcert=allow\n", 4,
	              "syncrepl: tls_reqcert=allow is not a value this word takes");
	load_fails_at(BASE SR "  network-timeout=0\n", 4,
	              "syncrepl: network-timeout=0: expected 1..3600");
	load_fails_at(BASE SR "  network-timeout=3601\n", 4,
	              "syncrepl: network-timeout=3601: expected 1..3600");
	load_fails_at(BASE SR "  network-timeout=5s\n", 4, "network-timeout=5s: expected 1..3600");
	load_fails_at(BASE SR "  retry=\"1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9\"\n", 4,
	              "syncrepl: retry: at most 8 pairs");
	load_fails_at(BASE SR "  retry=\"5 x\"\n", 4,
	              "\"x\" is not a number of seconds or a count");
	load_fails_at(BASE SR "  noequals\n", 4, "syncrepl: \"noequals\" is not name=value");
	load_fails_at(BASE SR "  nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn=1\n", 4,
	              "syncrepl: \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\" is too long");
#undef SR
	struct config cfg;
	char err[1024];
	write_conf(BASE "syncrepl = rid=1 provider=ldap://p searchbase=ou=x,dc=example,dc=com\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "must be the suffix"));
	write_conf(BASE "listen_after_refresh = 10\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listen_after_refresh is set but syncrepl is not"));
	write_conf(BASE "syncrepl = rid=1 searchbase=dc=example,dc=com\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "provider= is required"));
	write_conf(BASE "syncrepl = rid=1 provider=ldap://p searchbase=dc=example,dc=com "
	                "binddn=cn=x\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "go together"));
}
END_TEST

/* The words' values that a file line (CONFIG_MAX_LINE) cannot make too long, and the
 * words' other values, read by syncrepl_parse itself. */
START_TEST(syncrepl_words)
{
	struct syncrepl_conf s;
	char why[512], line[1400];
	const char *const capped[] = {
	    "provider=ldap://", "binddn=cn=", "credentials=", "searchbase=cn=",
	    "filter=(cn=",      "attrs=",     "tls_cacert="};
	const char *const name[] = {"provider", "binddn", "credentials", "searchbase",
	                            "filter",   "attrs",  "tls_cacert"};
	for (size_t i = 0; i < sizeof(capped) / sizeof(capped[0]); i++) {
		int n = snprintf(line, sizeof(line), "rid=1 %s", capped[i]);
		memset(line + n, 'a', 1100);
		strcpy(line + n + 1100, i == 4 ? ")" : "");
		syncrepl_defaults(&s);
		ck_assert_int_eq(syncrepl_parse(&s, line, why, sizeof(why)), -1);
		char want[64];
		snprintf(want, sizeof(want), "syncrepl: the value of %s is too long", name[i]);
		ck_assert_msg(strstr(why, want), "%s: \"%s\" lacks \"%s\"", name[i], why, want);
	}
	syncrepl_defaults(&s);
	ck_assert_int_eq(syncrepl_parse(&s, "rid=2 provider=LDAP://h TYPE=x", why, sizeof(why)),
	                 -1);
	ck_assert_str_eq(why, "syncrepl: unknown word \"TYPE\"");
	syncrepl_defaults(&s);
	ck_assert_int_eq(syncrepl_parse(&s,
	                                "rid=2 provider=LDAP://h type=REFRESHANDPERSIST "
	                                "scope=One starttls=YES tls_reqcert=Demand "
	                                "network-timeout=3600 bindmethod=SIMPLE",
	                                why, sizeof(why)),
	                 0);
	ck_assert_int_eq(s.rid, 2);
	ck_assert_str_eq(s.provider, "LDAP://h");
	ck_assert_int_eq(s.type, SYNCREPL_REFRESH_AND_PERSIST);
	ck_assert_int_eq(s.scope, SYNCREPL_SCOPE_ONE);
	ck_assert_int_eq(s.starttls, SYNCREPL_STARTTLS_YES);
	ck_assert(!s.tls_reqcert_never);
	ck_assert_int_eq(s.network_timeout, 3600);
	ck_assert_str_eq(s.filter, "(objectClass=*)");
	ck_assert_str_eq(s.attrs, "*,+");
}
END_TEST

START_TEST(err_syntax)
{
	load_fails_at(BASE "just some words\n", 3, NULL);
}
END_TEST

START_TEST(err_first_error_wins)
{
	/* Two bad lines: the first one is reported, with its own reason. */
	load_fails_at(BASE "threads = zero\ncolour = blue\n", 3, "threads");
	load_fails_at(BASE "colour = blue\nthreads = zero\n", 3, "colour");
}
END_TEST

START_TEST(err_missing_required)
{
	struct config cfg;
	char err[1024], want[256];

	write_conf("suffix = dc=example,dc=com\nthreads = 3\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	config_free(&cfg);
	snprintf(want, sizeof(want), "%s: \"database\" is required", path);
	ck_assert_str_eq(err, want);

	write_conf("database = x.mdb\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	config_free(&cfg);
	snprintf(want, sizeof(want), "%s: \"suffix\" is required", path);
	ck_assert_str_eq(err, want);

	write_conf("");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	config_free(&cfg);
	snprintf(want, sizeof(want), "%s: \"database\" is required", path);
	ck_assert_str_eq(err, want);

	write_conf(BASE "rootpw = secret\n");
	ck_assert_int_eq(config_load(&cfg, path, err, sizeof(err)), -1);
	config_free(&cfg);
	snprintf(want, sizeof(want), "%s: ", path);
	ck_assert_int_eq(strncmp(err, want, strlen(want)), 0);
	ck_assert_ptr_nonnull(strstr(err, "rootdn"));
}
END_TEST

START_TEST(err_missing_file)
{
	struct config cfg;
	char err[1024];
	const char *missing = "/tmp/minidir-conf-does-not-exist/minidir.conf";
	ck_assert_int_eq(config_load(&cfg, missing, err, sizeof(err)), -1);
	config_free(&cfg);
	char want[512];
	snprintf(want, sizeof(want), "%s: %s", missing, strerror(ENOENT));
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(err_truncated_to_errlen)
{
	/* A small error buffer gets a NUL-terminated prefix, no overflow. */
	write_conf(BASE "colour = blue\n");
	struct config cfg;
	char err[16];
	memset(err, 'Z', sizeof(err));
	ck_assert_int_eq(config_load(&cfg, path, err, 10), -1);
	config_free(&cfg);
	ck_assert_uint_eq(strlen(err), 9);
	ck_assert_int_eq(strncmp(err, path, 9), 0);
	ck_assert_int_eq(err[10], 'Z');
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("valid");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, valid_full);
	tcase_add_test(tc, send_policies);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, unfinished_request_limits);
	tcase_add_test(tc, reload_resets);
	tcase_add_test(tc, changed_keys);
	tcase_add_test(tc, reload_column);
	tcase_add_test(tc, index_lines_accumulate);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, long_database_path);
	tcase_add_test(tc, access_rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sizes_overflow);
	tcase_add_test(tc, limits_and_access);
	tcase_add_test(tc, err_limits_and_access);
	tcase_add_test(tc, search_cost_limits);
	tcase_add_test(tc, err_search_cost_limits);
	tcase_add_test(tc, abuse_limits);
	tcase_add_test(tc, err_unknown_key);
	tcase_add_test(tc, err_threads);
	tcase_add_test(tc, err_listen);
	tcase_add_test(tc, err_too_many_listen);
	tcase_add_test(tc, proxy_listeners);
	tcase_add_test(tc, seed_keys);
	tcase_add_test(tc, err_send_policy);
	tcase_add_test(tc, err_suffix);
	tcase_add_test(tc, err_index);
	tcase_add_test(tc, err_section);
	tcase_add_test(tc, err_syntax);
	tcase_add_test(tc, syncrepl_directive);
	tcase_add_test(tc, err_syncrepl);
	tcase_add_test(tc, syncrepl_words);
	tcase_add_test(tc, err_access);
	tcase_add_test(tc, err_first_error_wins);
	tcase_add_test(tc, chain_passwd_keys);
	tcase_add_test(tc, sync_provider_keys);
	tcase_add_test(tc, metrics_tls_key);
	tcase_add_test(tc, dynamic_groups_keys);
	tcase_add_test(tc, memo_bytes_key);
	tcase_add_test(tc, sasl_keys);
	tcase_add_test(tc, err_missing_required);
	tcase_add_test(tc, err_missing_file);
	tcase_add_test(tc, err_truncated_to_errlen);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(config_suite());
}
