# perfkite: plain GNU make.
#
#   make                 build libperf.a and bin/perf-*
#   make test            build with -Werror, run every test, print "N passed, N failed"
#                        (TEST_JOBS files at once, default: twice the cores;
#                        the build, unless make was given -j, on every core too)
#   make SANITIZE=address,undefined test
#                        the same, built with sanitizers into build/sanitize/
#   make install         install programs, perf-lane and its library, man pages
#                        and doc/ (PREFIX, DESTDIR, LANELIBDIR)
#   make check-layout    core includes no system, no system includes another,
#                        every include names its directory and is used, the
#                        includes of a block are sorted by path
#   make lint            check-layout; shellcheck every shell script; the pages
#                        render without warnings under mandoc -Tlint, groff and man -l
#   make bench           benchmarks of perfkite itself (bench/)
#   make bench-changes   the perf-changes part of them alone
#   make bench-named     the rolling gate with 50 named metrics a record against
#                        the six alone (issue 24)
#   make bench-index     the store index part of them alone
#   make bench-import    the perf-import part of them alone
#   make bench-index-git the index of a git store served over http
#   make bench-bisect    perf-bisect's simulated bisects alone
#   make demo            the main job on the embedded default
#   make deps            install every missing Debian package (or print the
#                        command); demo, test, lint and fuzz each install only
#                        what they need (tests/deps.sh PROFILE)
#   make fuzz            build the libFuzzer targets (clang) and run each for
#                        FUZZ_TIME seconds (default 20) from its seed corpus
#                        (FUZZ_JOBS at once, default: the number of cores; the
#                        build, unless make was given -j, on every core too)

.DELETE_ON_ERROR:
.SUFFIXES:

VERSION := $(shell cat VERSION)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/perfkite
# The lane's bash library (hooks/lib/), which the installed perf-lane sources.
LANELIBDIR ?= $(PREFIX)/share/perfkite/lib
LANE_LIB = hooks/lib/lane.bash hooks/lib/python.bash
CC ?= cc

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wpointer-arith -Wwrite-strings -Wundef \
	-Wold-style-definition -Wnull-dereference
# -ffp-contract=off: no multiply-add is fused, so that every sum and product
# rounds as numpy's and Python's do (GCC's ISO mode fuses none already;
# clang fuses by default where the target has FMA, as aarch64 does).
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -g -pthread \
	-ffp-contract=off $(WARN) -DPERFKITE_VERSION='"$(VERSION)"' -Isrc/lib
LIBS = -lcjson -lz -lcrypto -lm -lpthread -ldl

ifdef SANITIZE
BUILD = build/sanitize
OUTBIN = $(BUILD)/bin
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
SAN_LDFLAGS = -fsanitize=$(SANITIZE)
else
BUILD = build/default
OUTBIN = bin
endif

# The builds make test and make fuzz start: on every core, unless make
# was given -j (then its own jobs).
SUBJOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

ALL_CFLAGS = $(BASE_CFLAGS) $(EXTRA_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)

LIB_DIRS = core lane lane/store lane/import campaign frames
LIB_SRC = $(sort $(foreach d,$(LIB_DIRS),$(wildcard src/lib/$(d)/*.c)))
LIB_HDR = $(sort $(foreach d,$(LIB_DIRS),$(wildcard src/lib/$(d)/*.h)))
LIB_OBJ = $(LIB_SRC:src/lib/%.c=$(BUILD)/lib/%.o)
LIB = $(BUILD)/libperf.a
PROG_SRC = $(sort $(wildcard src/perf-*.c))
PROGS = $(PROG_SRC:src/%.c=$(OUTBIN)/%)
UNIT_SRC = $(sort $(wildcard tests/unit/test_*.c))
UNITS = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
# Stand-ins for libcuda.so.1 and libnvidia-ml.so.1, for the tests.
STUBS = $(BUILD)/stubs/libfakecuda.so $(BUILD)/stubs/libfakenvml.so $(BUILD)/stubs/libfailalloc.so
MAN1 = $(sort $(wildcard man/*.1))
MAN7 = $(sort $(wildcard man/*.7))
SCRIPTS = $(sort .ci/run tests/run tests/deps.sh fuzz/run $(wildcard bench/*.sh bench/run bin/perf-lane hooks/environment hooks/command hooks/pre-exit hooks/lib/*.bash pipeline-templates/pre-push \
	tests/lib/*.bash tests/lib/*.sh tests/*.bats fixtures/tests/*/*/*.sh fixtures/*.sh fixtures/runners/*.sh))

# libFuzzer targets: clang, the library rebuilt with the fuzzer's coverage.
FUZZ_TIME ?= 20
FUZZ_CC ?= clang
FUZZ_BUILD = build/fuzz
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -ffp-contract=off \
	-pthread -Isrc/lib -DPERFKITE_VERSION='"$(VERSION)"' \
	-DFUZZ_PLAN='"$(CURDIR)/fixtures/campaign/plan.json"' \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC = $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BINS = $(FUZZ_SRC:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ = $(LIB_SRC:src/lib/%.c=$(FUZZ_BUILD)/lib/%.o)

all: $(PROGS)

# Objects depend on the flags they were built with.
$(BUILD)/cflags: FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(ALL_CFLAGS)' | cmp -s - $@ || echo '$(CC) $(ALL_CFLAGS)' > $@

$(BUILD)/lib/%.o: src/lib/%.c $(LIB_HDR) $(BUILD)/cflags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(OUTBIN)/perf-%: src/perf-%.c $(LIB) $(LIB_HDR) $(BUILD)/cflags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(LIBS)

$(BUILD)/unit/%: tests/unit/%.c tests/unit/tap.h $(LIB) $(BUILD)/cflags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB) $(ALL_LDFLAGS) $(LIBS)

$(BUILD)/stubs/lib%.so: tests/stubs/%.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $<

$(FUZZ_BUILD)/lib/%.o: src/lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libperf.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(FUZZ_LIB_OBJ)

$(FUZZ_BUILD)/normalize_main.o: src/perf-normalize.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=normalize_main -c -o $@ $<

$(FUZZ_BUILD)/fuzz_normalize: $(FUZZ_BUILD)/normalize_main.o
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_BUILD)/libperf.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -D_GNU_SOURCE -fsanitize=fuzzer -o $@ $< $(filter %.o,$^) \
		$(FUZZ_BUILD)/libperf.a $(LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz:
	@sh tests/deps.sh fuzz
	@$(MAKE) --no-print-directory $(SUBJOBS) fuzz-build
	@FUZZ_TIME=$(FUZZ_TIME) bash fuzz/run $(FUZZ_BINS)

deps:
	@sh tests/deps.sh

test:
	@sh tests/deps.sh test
	@$(MAKE) --no-print-directory $(SUBJOBS) EXTRA_CFLAGS=-Werror all units
	@PERF_BIN=$(CURDIR)/$(OUTBIN) UNIT_DIR=$(CURDIR)/$(BUILD)/unit \
		PERF_STUBS=$(CURDIR)/$(BUILD)/stubs TEST_TIMES=$(CURDIR)/build/test-times bash tests/run

units: $(UNITS) $(STUBS)

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(LANELIBDIR)
	cp -f $(PROGS) $(DESTDIR)$(BINDIR)/
	cp -f $(LANE_LIB) $(DESTDIR)$(LANELIBDIR)/
	sed -e 's/^perfkite_version=$$/perfkite_version=$(VERSION)/' \
		-e 's|^perfkite_lib=$$|perfkite_lib=$(LANELIBDIR)|' bin/perf-lane >$(DESTDIR)$(BINDIR)/perf-lane.tmp
	chmod 755 $(DESTDIR)$(BINDIR)/perf-lane.tmp
	mv -f $(DESTDIR)$(BINDIR)/perf-lane.tmp $(DESTDIR)$(BINDIR)/perf-lane
	cp -f $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	cp -f $(MAN7) $(DESTDIR)$(MANDIR)/man7/
	mkdir -p $(DESTDIR)$(DOCDIR)
	cp -f doc/*.md $(DESTDIR)$(DOCDIR)/

# The layering of src/lib: core includes no system (lane, campaign, frames),
# no system includes another.
check-layout:
	@python3 tests/lib/check_layout.py --sorted

# Commit subjects are at most 72 characters from this commit on (the
# history before it has longer ones): make lint checks the commits after it.
SUBJECT_BASE = c485108ec3052df21694d189e698ad086539e326

lint: check-layout
	@sh tests/deps.sh lint
	@sh tests/lib/check_subjects.sh $(SUBJECT_BASE)
	shellcheck -x $(SCRIPTS)
	mandoc -Tlint -W warning $(MAN1) $(MAN7)
	@for p in $(MAN1) $(MAN7); do groff -mandoc -Tutf8 -ww -z "$$p" 2>&1; \
		MANWIDTH=80 man --warnings -l "$$p" 2>&1 >/dev/null | sed "s|^|$$p: |"; \
	done | { ! grep .; } || { echo "groff: the pages above render with warnings" >&2; exit 1; }

bench: all
	@bash bench/run

bench-changes: all
	@bash bench/changes.sh

bench-named: all
	@bash bench/named-metrics.sh

bench-index: all
	@bash bench/index.sh

bench-import: all
	@bash bench/import.sh

bench-index-git: all
	@bash bench/index-git.sh

bench-bisect: all
	@bash bench/bisect.sh

demo:
	@sh tests/deps.sh build
	@$(MAKE) --no-print-directory all
	@bash fixtures/demo.sh

clean:
	rm -rf build $(PROG_SRC:src/%.c=bin/%)

FORCE:

.PHONY: all deps test units install check-layout lint bench bench-changes bench-named bench-index bench-import bench-index-git bench-bisect demo fuzz fuzz-build clean FORCE
