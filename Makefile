# minidir — see README.md.  `make`, `make run`, `make test`, `make bench`.
# Build variants (docs/development.md): plain into build/ (-O2, LTO, hardened; `make LTO=`
# without LTO); SAN=1 into build-san/ with AddressSanitizer (LeakSanitizer on) and UBSan;
# TSAN=1 into build-tsan/ with ThreadSanitizer; FUZZ=1 into build-fuzz/ (libFuzzer). The
# sanitizer builds use clang when CC is not given (its UBSan also checks pointer arithmetic
# on NULL).

CC      ?= cc
PKGS    := ldap lber lmdb inih libssl libcrypto liburing libargon2 libsasl2 libcurl libxxhash
ifeq ($(FUZZ),1)
# libFuzzer targets (make fuzz): clang, everything instrumented for coverage.
B       := build-fuzz
CC      := clang
SANFLAGS := -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT     := -O1 -g
else ifeq ($(SAN),1)
B       := build-san
ifeq ($(origin CC),default)
CC      := clang
endif
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT     := -O1 -g
else ifeq ($(TSAN),1)
# ThreadSanitizer: the workers share the key memo and the record memo without a lock; a
# data race there (or anywhere) is a report, and a report fails the test that caused it
# (tests/integration/lib.sh; tests/tsan.supp lists what is not ours). No LTO: TSan
# instruments each object as it is compiled.
B       := build-tsan
ifeq ($(origin CC),default)
CC      := clang
endif
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT     := -O1 -g
else
B       := build
SANFLAGS :=
# _FORTIFY_SOURCE=2 (Debian 12's level): glibc checks the string and memory calls whose
# destination size the compiler knows. Not 3 (sizes known only at run time too): it makes
# arena_strdup too big to inline on the lookup path, +0.5% instructions per lookup
# (docs/development.md). Only in this build: under the sanitizers the checked variants
# (__memcpy_chk, ...) would replace the calls their interceptors watch, and the
# sanitizers check every access anyway.
FORTIFY := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
# Link-time optimization: a lookup's path crosses protocol/, storage/ and server/, and LTO
# inlines across them (5,950 -> 5,450 instructions per lookup, bench/instructions.sh).
# `make LTO=` builds without it.
LTO     ?= -flto=auto
OPT     := -O2 -g $(LTO)
endif
CFLAGS  ?= $(OPT)
# cc-option FLAG: FLAG when $(CC) takes it on this machine (-fcf-protection is x86 only).
cc-option = $(shell $(CC) $(1) -Werror -x c -c /dev/null -o /dev/null 2>/dev/null && echo $(1))
# Debian's hardening (dpkg-buildflags, hardening=+all), in every build: stack canaries in
# functions with arrays or address-taken locals, stack-clash probes, Intel CET's branch
# markers, a position-independent executable (ASLR for the program's own code), and full
# RELRO (relocations resolved at start, then the GOT read-only).
HARDEN_CFLAGS  := -fstack-protector-strong -fstack-clash-protection \
                  $(call cc-option,-fcf-protection) -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro -Wl,-z,now
# -Wshadow: an inner name that hides an outer one is a reading trap; -Wformat=2: every
# printf-like call has a literal format the compiler checks (helpers carry
# __attribute__((format))). -ffile-prefix-map: the debug information names sources
# relative to the tree, so that no build path is baked into what make install ships.
CFLAGS  += -std=c17 -Wall -Wextra -Wshadow -Wformat=2 -Werror -D_GNU_SOURCE $(FORTIFY) -I. \
           $(HARDEN_CFLAGS) $(SANFLAGS) -MMD -MP -ffile-prefix-map=$(CURDIR)=.
# (LTO compiles again at the link: the code flags and the prefix map there too.)
LDFLAGS += $(SANFLAGS) $(HARDEN_LDFLAGS) $(if $(LTO),$(LTO) $(HARDEN_CFLAGS) \
           -ffile-prefix-map=$(CURDIR)=.)
LDLIBS  := -pthread $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lldap -llber -llmdb -linih -lssl -lcrypto -luring -largon2 -lsasl2 -lcurl -lxxhash) -lcrypt
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt)

CONF     ?= examples/minidir.conf
EXAMPLE  := examples/example.ldif

LIB_SRC  := $(wildcard protocol/*.c password/*.c storage/*.c ldif/*.c conf/*.c) \
            $(filter-out server/start/main.c,$(wildcard server/*.c server/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
LIB      := $(B)/libminidir.a
BINS     := $(B)/minidir $(B)/minidir-import $(B)/minidir-export $(B)/minidir-passwd \
            $(B)/minidir-seed \
            $(B)/searchrate
UNIT_SRC := $(wildcard tests/*/test_*.c tests/*/*/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(B)/%)
# searchrate: its own small library (not libminidir), linked into the tool and its unit tests.
SR_SRC   := $(filter-out tools/searchrate/main.c,$(wildcard tools/searchrate/*.c))
SR_OBJ   := $(SR_SRC:%.c=$(B)/%.o)
SR_LIB   := $(B)/libsearchrate.a
SR_LIBS  := -lldap -llber -lssl -lcrypto -lpthread -lm
SR_UNIT_BIN := $(filter $(B)/tests/tools/%,$(UNIT_BIN))
ITEST_BIN := $(B)/tests/integration/ldapclient $(B)/tests/integration/faultclient $(B)/tests/integration/syncprobe $(B)/bench/idleconns $(B)/bench/floor $(B)/bench/costlyload $(B)/bench/memlat

FUZZ_TARGETS := request filter ldif config
FUZZ_BIN := $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
FUZZ_SECONDS ?= 60

.PHONY: all deps run test test-io-uring layers calls docs-check unit integration tests test-times build-dir check bench perf-check format format-check clean fuzz fuzz-smoke fuzz-build \
        install install-strip uninstall packaging-test programs test-package image
all: $(BINS) $(UNIT_BIN) $(ITEST_BIN)

deps:
	@./scripts/deps.sh


# Objects are rebuilt when the compiler or its flags change (build-san/ with gcc or clang).
FLAGS_STAMP := $(B)/.flags
$(shell mkdir -p $(B); echo '$(CC) $(CFLAGS) $(LDFLAGS)' | cmp -s - $(FLAGS_STAMP) || echo '$(CC) $(CFLAGS) $(LDFLAGS)' > $(FLAGS_STAMP))

$(B)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/minidir: $(B)/server/start/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-import: $(B)/tools/minidir_import.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-export: $(B)/tools/minidir_export.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-passwd: $(B)/tools/minidir_passwd.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-seed: $(B)/tools/minidir_seed.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SR_LIB): $(SR_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(B)/searchrate: $(B)/tools/searchrate/main.o $(SR_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(SR_LIBS)
$(SR_UNIT_BIN): %: %.o $(SR_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(SR_LIBS) $(CHECK_LIBS)

$(filter-out $(SR_UNIT_BIN),$(UNIT_BIN)) $(ITEST_BIN): %: %.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CHECK_LIBS)

# make run serves examples/example.ldif with $(CONF) (examples/minidir.conf: the tree's
# schema/, an example administrator); the compiled-in schema_dir is where make install puts
# the files.
run: deps
	@$(MAKE) --no-print-directory $(B)/minidir $(B)/minidir-import
	@mkdir -p var
	./$(B)/minidir-import -f $(CONF) $(EXAMPLE)
	@echo
	@echo "Try:  ldapsearch -x -H ldap://127.0.0.1:3389 -b dc=example,dc=com '(uid=alice)'"
	@echo "Stop: Ctrl-C"
	@echo
	./$(B)/minidir -f $(CONF) -d

# The build inside make test and make test-io-uring: one compiler a core, unless make was
# given -j itself.
BUILD_JOBS := $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))

# make test: the checks that read the tree (the include graph, the docs, shellcheck: the
# same whatever the build, so run by the plain build's make test only), the build, the call
# graph of the built objects, then every test (tests/run.sh).
test: deps
ifeq ($(SAN)$(TSAN),)
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory docs-check
	@$(MAKE) --no-print-directory shellcheck
endif
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all
	@$(MAKE) --no-print-directory calls
	@$(MAKE) --no-print-directory tests

# The include graph (scripts/layers.sh): layers point down, no circles but those in
# scripts/layers.allow. The graph is printed in full only when the check fails. Then the
# size bars (scripts/size_bars.sh): no product .c file over 700 lines, no function over 80.
layers:
	@out=$$(./scripts/layers.sh) || { printf '%s\n' "$$out"; exit 1; }; printf '%s\n' "$$out" | tail -n 1
	@./scripts/size_bars.sh

# The call graph of server/ from the built objects (scripts/calls.sh): no circle of calls
# inside a room, no call up a room but through the pointers docs/ARCHITECTURE.md lists.
calls: $(LIB)
	@./scripts/calls.sh $(B)

# The documentation against the tree: every config key in man/minidir.conf.5 and the
# sample (scripts/conf_keys.sh), the README's numbers equal to the files scripts wrote
# (scripts/readme_numbers.sh), every path README.md and docs/ name present
# (scripts/doc_paths.sh), every man page's .TH version equal to conf/version.h's
# (scripts/version_check.sh). Needs no build.
docs-check:
	@./scripts/conf_keys.sh
	@./scripts/version_check.sh
	@./scripts/readme_numbers.sh
	@./scripts/doc_paths.sh

# Every shell script through shellcheck, every finding (scripts/shellcheck.sh lists them);
# the rules the tree disables, each with its reason, are in .shellcheckrc.
.PHONY: shellcheck
shellcheck:
	@./scripts/shellcheck.sh

# ThreadSanitizer's settings for every test: tests/tsan.supp (each line says why). A unit
# test halts at its first report (check sees the forked test fail: tests/run.sh adds
# halt_on_error=1 for them); a server goes on and exits with status 66 at its SIGTERM, its
# log holding the reports (tests/integration/lib.sh). Under SAN=1 LeakSanitizer checks
# every unit test and every server at its SIGTERM exit; the scripts fail on a report or an
# exit status other than 0.
TSAN_SUPP := suppressions=$(CURDIR)/tests/tsan.supp:second_deadlock_stack=1
TEST_ENV := ASAN_OPTIONS="detect_leaks=1:$(ASAN_OPTIONS)" \
            UBSAN_OPTIONS="print_stacktrace=1:$(UBSAN_OPTIONS)" \
            TSAN_OPTIONS="$(TSAN_SUPP):$(TSAN_OPTIONS)" BUILD=$(B)
# tests/run.sh runs the named tests TEST_JOBS at a time (4 unless given), longest first,
# each with its own log under $(B)/test-results/, and prints a table of times and checks at
# the end (make test-times puts it in tests/README.md).
RUN_TESTS = $(TEST_ENV) ./tests/run.sh $(if $(TEST_JOBS),-j $(TEST_JOBS))
UNIT_NAMES := $(notdir $(UNIT_BIN))
unit: $(UNIT_BIN)
	@$(RUN_TESTS) -o $(B)/test-results/unit $(RUN_UNITS)

# The integration scripts (tests/integration/NAME.sh) make test runs, in this order, and
# those it runs again with the io_uring engine forced (tests/README.md says what each
# covers; make check T=NAME runs one).
ITESTS := core_test reload_test readahead_test leak_test policy_test fault_test conn_memory_test tls_test access_test controls_test sync_test \
          replica_test replica_refresh_test replica_apply_test replica_churn_test replica_piece_test \
          install_test engine_test \
          limits_test passwd_test safe_test schema_test bindlim_test chain_test ppolicy_test http_test monitor_slapd_test proxy_test vlv_test \
          dyngroup_test dyngroup_replica_test memberof_nested_test inchain_test open_test memo_test ds389_test \
          ad_replica_test gssapi_test seed_test sync_provider_test
ITESTS_IO_URING := core_test policy_test tls_test proxy_test
IO_URING_CONFORMANCE := conformance
# The conformance suite's runs (tests/conformance/run.sh): imported, over ldaps://, the
# dynlist and nested suites, and minidir as slapd's replica.
CONFORMANCE_RUNS := conformance conformance:tls conformance:dynlist conformance:nested \
                    conformance:replica
# Under TSAN=1 the suite runs what has threads that share memory while they work
# (docs/development.md says why each is in and why the rest add nothing): the unit tests
# of the import's threads, the memos readers race writers on, and a seed's writer thread;
# the scripts that keep
# several workers busy at once (core, fault, bindlim, conformance:replica's parallel
# cases), that swap what the workers share (reload, tls's certificates, engine's failed
# worker the main loop watches), or that run the replica's, the chain's or the HTTP
# endpoint's thread beside the workers. The rest ask one question at a time of a server
# whose other threads are idle; they run in the plain and SAN=1 builds. Only the epoll
# engine: ThreadSanitizer does not see the kernel's side of io_uring (what the kernel
# reads from and writes into the buffers a ring was given, and when), so a TSan run of
# that engine proves little (fault_test and engine_test still start an io_uring server
# briefly, and pass under TSan).
ifeq ($(TSAN),1)
RUN_UNITS := test_import test_import_threads test_import_prefault test_key_memo test_record_memo \
              test_seed_writer
RUN_ITESTS := core_test reload_test fault_test conn_memory_test tls_test engine_test bindlim_test replica_test \
              replica_refresh_test replica_apply_test replica_churn_test chain_test ppolicy_test http_test \
              dyngroup_replica_test memberof_nested_test gssapi_test seed_test sync_provider_test \
              conformance:replica
else
RUN_UNITS := $(UNIT_NAMES)
RUN_ITESTS := $(ITESTS) $(CONFORMANCE_RUNS) $(ITESTS_IO_URING:%=%@io_uring) \
              $(IO_URING_CONFORMANCE:%=%@io_uring)
endif
integration: $(BINS) $(ITEST_BIN)
	@$(RUN_TESTS) -o $(B)/test-results/integration $(RUN_ITESTS)

# make test's tests: the unit tests and the integration runs in one pool (tests/run.sh),
# their logs and times.txt in TEST_OUT (tests/repeat.sh gives each run its own).
TEST_OUT ?= $(B)/test-results
tests: $(BINS) $(UNIT_BIN) $(ITEST_BIN)
	@$(RUN_TESTS) -o $(TEST_OUT) $(RUN_UNITS) $(RUN_ITESTS)

# The build directory of these arguments (SAN=1: build-san, ...), for scripts that run make
# with them (tests/repeat.sh).
build-dir:
	@echo $(B)

# The last runs' times and counts of checks (build/, build-san/, build-tsan/
# test-results/times.txt) into tests/times.txt and the table of tests/README.md.
test-times:
	@./tests/times.sh

# make check T=NAME builds what one test needs and runs it, as make unit and make
# integration would: a unit test (T=test_filter or T=filter: tests/ROOM/test_NAME.c), an
# integration script (T=fault_test or T=fault: tests/integration/NAME.sh, one of ITESTS),
# or the conformance suite (T=conformance; CONFORMANCE_TLS=1 or CONFORMANCE_REPLICA=1 in
# the environment as make integration sets them). SAN=1 and MINIDIR_IO_ENGINE=io_uring
# apply as to make test. make check with no T lists the names.
T_UNIT  := $(if $(T),$(filter $(B)/tests/%/test_$(patsubst test_%,%,$(T)),$(UNIT_BIN)))
T_ITEST := $(if $(T),$(filter $(patsubst %_test,%,$(T))_test,$(ITESTS)))
ifeq ($(T),)
check:
	@echo "make check T=NAME runs one test (SAN=1: under ASan/UBSan; MINIDIR_IO_ENGINE=io_uring:"
	@echo "on the io_uring engine). tests/README.md says what each one covers."
	@echo "unit tests (T=test_NAME or T=NAME):"
	@printf '  %s\n' $(patsubst tests/%.c,%,$(UNIT_SRC))
	@echo "integration scripts (T=NAME_test or T=NAME), tests/integration/:"
	@printf '  %s\n' $(ITESTS)
	@echo "the conformance suite against slapd: T=conformance"
else ifeq ($(T),conformance)
check: $(BINS) $(ITEST_BIN)
	@$(TEST_ENV) ./tests/conformance/run.sh
else ifneq ($(and $(T_UNIT),$(T_ITEST)),)
check:
	@echo "make check: T=$(T) names $(T_UNIT) and tests/integration/$(T_ITEST).sh;" \
	    "say T=test_$(T) or T=$(T)_test" >&2; exit 2
else ifneq ($(T_UNIT),)
# (the settings of make unit: tests/run.sh adds halt_on_error=1 for a unit test)
check: $(T_UNIT)
	$(TEST_ENV) TSAN_OPTIONS="halt_on_error=1:$(TSAN_SUPP):$(TSAN_OPTIONS)" \
	    CK_DEFAULT_TIMEOUT=30 ./$(T_UNIT)
else ifneq ($(T_ITEST),)
check: $(BINS) $(ITEST_BIN)
	$(TEST_ENV) ./tests/integration/$(T_ITEST).sh
else
check:
	@echo "make check: no test named $(T) (make check lists them)" >&2; exit 2
endif

# Every integration script and the conformance suite with the io_uring engine forced.
test-io-uring: deps
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all
	@$(RUN_TESTS) -o $(B)/test-results/io_uring $(ITESTS:%=%@io_uring) \
	    $(CONFORMANCE_RUNS:%=%@io_uring)

# make install [PREFIX=/usr/local] [DESTDIR=]: placed as a Debian package would place them
# (docs/install.md). The server and the tools that write or read its database (slapd,
# slapadd, slapcat's places) in sbin with man section 8; searchrate, a user's tool, in
# bin. The configuration goes to /etc when PREFIX is /usr, else PREFIX/etc; an existing
# one is kept; its schema_dir names the installed schema/ files (SCHEMADIR), so nothing
# of slapd's package is needed. debian/rules runs this recipe too. Binaries are not stripped: a packager's dh_strip keeps their debug
# information in a -dbgsym package (make install-strip strips them).
PREFIX        ?= /usr/local
ifeq ($(PREFIX),/usr)
SYSCONFDIR    ?= /etc
LOCALSTATEDIR ?= /var
UNITDIR       ?= /lib/systemd/system
else
SYSCONFDIR    ?= $(PREFIX)/etc
LOCALSTATEDIR ?= $(PREFIX)/var
UNITDIR       ?= $(PREFIX)/lib/systemd/system
endif
BINDIR        ?= $(PREFIX)/bin
SBINDIR       ?= $(PREFIX)/sbin
MANDIR        ?= $(PREFIX)/share/man
SYSUSERSDIR   ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR   ?= $(PREFIX)/lib/tmpfiles.d
# The schema files (the tree's schema/, written from the RFCs): the schema_dir of a config
# that names none, compiled into conf/config.c (protocol/schema.h SCHEMA_DEFAULT_DIR). Only
# that object takes it, with its own stamp as $(B)/.flags is for all: make install with
# another PREFIX than the build's recompiles it and relinks the programs, so that what is
# installed reads the schema where it is installed (the installed configuration names it
# too).
SCHEMADIR     ?= $(PREFIX)/share/minidir/schema
DIRS_STAMP    := $(B)/.dirs
$(shell mkdir -p $(B); echo '$(SCHEMADIR)' | cmp -s - $(DIRS_STAMP) || echo '$(SCHEMADIR)' > $(DIRS_STAMP))
$(B)/conf/config.o: $(DIRS_STAMP)
$(B)/conf/config.o: CFLAGS += -DSCHEMA_DEFAULT_DIR='"$(SCHEMADIR)"'
# logrotate reads /etc/logrotate.d only: under PREFIX=/usr/local the file is installed but
# must be linked there by hand (docs/install.md).
LOGROTATEDIR  ?= $(SYSCONFDIR)/logrotate.d
INSTALL       ?= install
SBIN_PROGS    := minidir minidir-import minidir-export minidir-passwd minidir-seed
BIN_PROGS     := searchrate
MAN_PAGES     := man/minidir.8 man/minidir-import.8 man/minidir-export.8 man/minidir-passwd.8 \
                 man/minidir-seed.8 \
                 man/minidir.conf.5 man/searchrate.1
SCHEMAS       := $(wildcard schema/*.schema)
SUBST         := sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
                     -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g'
CONF_DIR      := $(DESTDIR)$(SYSCONFDIR)/minidir
INSTALL_BINS  := $(SBIN_PROGS:%=$(B)/%) $(BIN_PROGS:%=$(B)/%)

# The programs make install ships, alone (what debian/rules builds: no unit tests, no
# test clients).
programs: $(INSTALL_BINS)

install: $(INSTALL_BINS)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(CONF_DIR) \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(SCHEMADIR) $(DESTDIR)$(LOGROTATEDIR)
	$(INSTALL) -d -m 0750 $(DESTDIR)$(LOCALSTATEDIR)/lib/minidir
	$(INSTALL) -m 0755 $(INSTALL_STRIP) $(SBIN_PROGS:%=$(B)/%) $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0755 $(INSTALL_STRIP) $(BIN_PROGS:%=$(B)/%) $(DESTDIR)$(BINDIR)/
	@set -e; for m in $(MAN_PAGES); do \
	    echo "$(INSTALL) -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/"; \
	    $(INSTALL) -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	$(SUBST) packaging/minidir.service.in > $(DESTDIR)$(UNITDIR)/minidir.service
	$(SUBST) packaging/minidir.sysusers.in > $(DESTDIR)$(SYSUSERSDIR)/minidir.conf
	$(SUBST) packaging/minidir.tmpfiles.in > $(DESTDIR)$(TMPFILESDIR)/minidir.conf
	$(INSTALL) -m 0644 packaging/minidir.logrotate $(DESTDIR)$(LOGROTATEDIR)/minidir
	$(INSTALL) -m 0644 $(SCHEMAS) $(DESTDIR)$(SCHEMADIR)/
	chmod 0644 $(DESTDIR)$(UNITDIR)/minidir.service $(DESTDIR)$(SYSUSERSDIR)/minidir.conf \
	    $(DESTDIR)$(TMPFILESDIR)/minidir.conf
	@if [ -e $(CONF_DIR)/minidir.conf ]; then \
	    echo "install: $(CONF_DIR)/minidir.conf exists: kept"; \
	else \
	    echo "install: $(CONF_DIR)/minidir.conf (database in $(LOCALSTATEDIR)/lib/minidir)"; \
	    sed -e 's|^database = .*|database = $(LOCALSTATEDIR)/lib/minidir/minidir.mdb|' \
	        -e 's|^\(#\{0,1\}\)schema_dir = .*|\1schema_dir = $(SCHEMADIR)|' \
	        conf/minidir.conf > $(CONF_DIR)/minidir.conf.tmp; \
	    chmod 0640 $(CONF_DIR)/minidir.conf.tmp; \
	    mv $(CONF_DIR)/minidir.conf.tmp $(CONF_DIR)/minidir.conf; \
	fi

install-strip:
	@$(MAKE) --no-print-directory install INSTALL_STRIP=-s

# Leaves the configuration and the database, as a package's remove (not purge) does.
uninstall:
	rm -f $(SBIN_PROGS:%=$(DESTDIR)$(SBINDIR)/%) $(BIN_PROGS:%=$(DESTDIR)$(BINDIR)/%) \
	    $(foreach m,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	    $(DESTDIR)$(UNITDIR)/minidir.service $(DESTDIR)$(SYSUSERSDIR)/minidir.conf \
	    $(DESTDIR)$(TMPFILESDIR)/minidir.conf $(DESTDIR)$(LOGROTATEDIR)/minidir \
	    $(SCHEMAS:schema/%=$(DESTDIR)$(SCHEMADIR)/%)
	@rmdir $(DESTDIR)$(SCHEMADIR) $(DESTDIR)$(PREFIX)/share/minidir 2> /dev/null || true
	@echo "uninstall: $(CONF_DIR)/minidir.conf and $(DESTDIR)$(LOCALSTATEDIR)/lib/minidir are left"

# The packaging checks alone (man pages, unit, make install): tests/integration/install_test.sh.
packaging-test: $(BINS)
	@BUILD=$(B) ./tests/integration/install_test.sh

# The Debian package as an admin uses it (tests/package/package_test.sh): built from a
# clean copy of the tree, installed with dpkg -i, run under the unit's sandbox, purged.
# Needs root (it installs packages); .ci/run runs it as a step of its own.
test-package:
	@./tests/package/package_test.sh

# An OCI image of the installed files (scripts/image.sh, with buildah: FROM scratch, no
# registry), tagged minidir:VERSION and saved as build/minidir-image.tar; built in
# build-image/ with PREFIX=/usr. The Kubernetes examples that run it: deploy/kubernetes/.
image:
	@./scripts/image.sh -o $(B)/minidir-image.tar

# libFuzzer: build-fuzz/fuzz_<target>, each run FUZZ_SECONDS from fuzz/corpus/<target>/.
fuzz-build: deps
	@$(MAKE) --no-print-directory FUZZ=1 $(FUZZ_BIN)
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh $(FUZZ_TARGETS)
fuzz-smoke: fuzz-build
	@FUZZ_SECONDS=10 ./fuzz/run.sh $(FUZZ_TARGETS)
build-fuzz/fuzz_%: build-fuzz/fuzz/fuzz_%.o $(LIB)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# Instructions per lookup, per entry of a 100-entry search, per TLS lookup and per imported
# entry against the baseline commit of bench/perf_baseline, built in the same run; fails
# past 3% (bench/perf_check.sh). Run by .ci/run.
perf-check: deps all
	@./bench/perf_check.sh

bench: deps all
	@./scripts/deps.sh bench
	@./bench/run.sh
	@./bench/access_log.sh
	@./bench/floor.sh
	@TLS= ./bench/instructions.sh
	@TLS=1 ./bench/instructions.sh
	@./bench/import.sh
	@TLS= ./bench/packets.sh
	@TLS=1 ./bench/packets.sh

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')
format-check:
	clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-tsan build-fuzz build-image

-include $(shell find $(B) -name '*.d' 2>/dev/null)
