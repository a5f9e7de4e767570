# minidir — see README.md.  `make`, `make run`, `make test`, `make bench`.
# SAN=1 builds into build-san/ with AddressSanitizer (LeakSanitizer on) and UBSan,
# with clang when CC is not given (its UBSan also checks pointer arithmetic on NULL).

CC      ?= cc
PKGS    := ldap lber lmdb inih libssl libcrypto
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
else
B       := build
SANFLAGS :=
OPT     := -O2 -g
endif
CFLAGS  ?= $(OPT)
CFLAGS  += -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -I. $(SANFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS  := -pthread $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lldap -llber -llmdb -linih -lssl -lcrypto) -lcrypt
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt)

CONF     ?= conf/minidir.conf
EXAMPLE  := examples/example.ldif

LIB_SRC  := $(wildcard protocol/*.c storage/*.c conf/*.c) $(filter-out server/main.c,$(wildcard server/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
LIB      := $(B)/libminidir.a
BINS     := $(B)/minidir $(B)/minidir-import $(B)/minidir-export $(B)/searchrate
UNIT_SRC := $(wildcard tests/*/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(B)/%)
# searchrate: its own small library (not libminidir), linked into the tool and its unit tests.
SR_SRC   := $(filter-out tools/searchrate/main.c,$(wildcard tools/searchrate/*.c))
SR_OBJ   := $(SR_SRC:%.c=$(B)/%.o)
SR_LIB   := $(B)/libsearchrate.a
SR_LIBS  := -lldap -llber -lpthread -lm
SR_UNIT_BIN := $(filter $(B)/tests/tools/%,$(UNIT_BIN))
ITEST_BIN := $(B)/tests/integration/ldapclient $(B)/tests/integration/faultclient $(B)/tests/integration/syncprobe $(B)/bench/idleconns $(B)/bench/floor

FUZZ_TARGETS := request filter ldif config
FUZZ_BIN := $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
FUZZ_SECONDS ?= 60

.PHONY: all deps run test layers unit integration bench format format-check clean fuzz fuzz-smoke fuzz-build
all: $(BINS) $(UNIT_BIN) $(ITEST_BIN)

deps:
	@./scripts/deps.sh

# Objects are rebuilt when the compiler or its flags change (build-san/ with gcc or clang).
FLAGS_STAMP := $(B)/.flags
$(shell mkdir -p $(B); echo '$(CC) $(CFLAGS)' | cmp -s - $(FLAGS_STAMP) || echo '$(CC) $(CFLAGS)' > $(FLAGS_STAMP))

$(B)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/minidir: $(B)/server/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-import: $(B)/tools/minidir_import.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/minidir-export: $(B)/tools/minidir_export.o $(LIB)
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

run: deps
	@$(MAKE) --no-print-directory $(B)/minidir $(B)/minidir-import
	@mkdir -p var
	./$(B)/minidir-import -f $(CONF) $(EXAMPLE)
	@echo
	@echo "Try:  ldapsearch -x -H ldap://127.0.0.1:3389 -b dc=example,dc=com '(uid=alice)'"
	@echo "Stop: Ctrl-C"
	@echo
	./$(B)/minidir -f $(CONF) -d

test: deps
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit integration

# The include graph (scripts/layers.sh): layers point down, no circles but those in
# scripts/layers.allow. The graph is printed in full only when the check fails.
layers:
	@out=$$(./scripts/layers.sh) || { printf '%s\n' "$$out"; exit 1; }; printf '%s\n' "$$out" | tail -n 1

unit: export ASAN_OPTIONS := detect_leaks=1:$(ASAN_OPTIONS)
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; CK_DEFAULT_TIMEOUT=30 ./$$t; done

# Under SAN=1 LeakSanitizer checks every server at its SIGTERM exit; the scripts fail
# on a report or an exit status other than 0.
integration: export ASAN_OPTIONS := detect_leaks=1:$(ASAN_OPTIONS)
integration: export UBSAN_OPTIONS := print_stacktrace=1:$(UBSAN_OPTIONS)
integration: $(BINS) $(ITEST_BIN)
	@BUILD=$(B) ./tests/integration/run.sh
	@BUILD=$(B) ./tests/integration/reload_test.sh
	@BUILD=$(B) ./tests/integration/leak_test.sh
	@BUILD=$(B) ./tests/integration/policy_test.sh
	@BUILD=$(B) ./tests/integration/fault_test.sh
	@BUILD=$(B) ./tests/integration/tls_test.sh
	@BUILD=$(B) ./tests/integration/access_test.sh
	@BUILD=$(B) ./tests/integration/sync_test.sh
	@BUILD=$(B) ./tests/integration/replica_test.sh
	@BUILD=$(B) ./tests/conformance/run.sh
	@BUILD=$(B) CONFORMANCE_TLS=1 CONFORMANCE_QUIET=1 ./tests/conformance/run.sh

# libFuzzer: build-fuzz/fuzz_<target>, each run FUZZ_SECONDS from fuzz/corpus/<target>/.
fuzz-build: deps
	@$(MAKE) --no-print-directory FUZZ=1 $(FUZZ_BIN)
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh $(FUZZ_TARGETS)
fuzz-smoke: fuzz-build
	@FUZZ_SECONDS=10 ./fuzz/run.sh $(FUZZ_TARGETS)
build-fuzz/fuzz_%: build-fuzz/fuzz/fuzz_%.o $(LIB)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

bench: deps all
	@./scripts/deps.sh bench
	@./bench/run.sh
	@./bench/access_log.sh
	@./bench/floor.sh

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')
format-check:
	clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(B) -name '*.d' 2>/dev/null)
