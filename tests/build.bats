#!/usr/bin/env bats
# The build itself: install paths, lint.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

mk() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$ROOT_DIR" "$@"
}

@test "make install honours PREFIX and DESTDIR" {
	# built in a directory of its own: the checkout's build and bin/ are
	# in use by the test files that run beside this one. Its library is
	# the checkout's build's with the same flags, where there is one (make
	# test compiled it just now): the programs are linked and installed,
	# the library not compiled once more.
	local b=$BATS_TEST_TMPDIR/build d
	mk BUILD="$b" OUTBIN="$b/bin" EXTRA_CFLAGS=-Werror "$b/cflags"
	for d in "$ROOT_DIR"/build/*/; do
		if cmp -s "$d/cflags" "$b/cflags" && [ -f "$d/libperf.a" ]; then
			cp -r "$d/lib" "$d/libperf.a" "$b/"
			break
		fi
	done
	run mk -j"$(nproc)" install PREFIX=/opt/pk DESTDIR="$BATS_TEST_TMPDIR/root" \
		BUILD="$b" OUTBIN="$b/bin" EXTRA_CFLAGS=-Werror
	assert_success
	for src in "$ROOT_DIR"/src/perf-*.c; do
		prog=$(basename "$src" .c)
		[ -x "$BATS_TEST_TMPDIR/root/opt/pk/bin/$prog" ]
		[ -f "$BATS_TEST_TMPDIR/root/opt/pk/share/man/man1/$prog.1" ]
	done
	[ -f "$BATS_TEST_TMPDIR/root/opt/pk/share/man/man7/perfkite.7" ]
	for doc in "$ROOT_DIR"/doc/*.md; do
		[ -f "$BATS_TEST_TMPDIR/root/opt/pk/share/doc/perfkite/$(basename "$doc")" ]
	done
	run "$BATS_TEST_TMPDIR/root/opt/pk/bin/perf-normalize" --version
	assert_success
	# perf-lane and its library, which it finds beside bin/ when the tree
	# is not yet where it was installed for (DESTDIR) ...
	[ -f "$BATS_TEST_TMPDIR/root/opt/pk/share/perfkite/lib/lane.bash" ]
	cd "$BATS_TEST_TMPDIR"
	PATH=$BATS_TEST_TMPDIR/root/opt/pk/bin:/usr/bin:/bin run --separate-stderr \
		"$BATS_TEST_TMPDIR/root/opt/pk/bin/perf-lane" -r r1 -o o -s s --cpu "$ROOT_DIR/fixtures/ab/bench.json"
	assert_success
	assert_line --index 0 "--- perf-lane: run source unknown, upload policy never, store s, reports r1"
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0: exit 0"
	# ... and where make install put it (LANELIBDIR), wherever that is
	# (the same build and flags: nothing is compiled again)
	run mk install PREFIX="$BATS_TEST_TMPDIR/p" LANELIBDIR="$BATS_TEST_TMPDIR/lanelib" \
		BUILD="$b" OUTBIN="$b/bin" EXTRA_CFLAGS=-Werror
	assert_success
	[ -f "$BATS_TEST_TMPDIR/lanelib/lane.bash" ] && [ -f "$BATS_TEST_TMPDIR/lanelib/python.bash" ]
	PATH=$BATS_TEST_TMPDIR/p/bin:/usr/bin:/bin run --separate-stderr \
		"$BATS_TEST_TMPDIR/p/bin/perf-lane" -r r2 -o o -s s --cpu "$ROOT_DIR/fixtures/ab/bench.json"
	assert_success
	assert_equal "${stderr_lines[-1]}" "perf-lane: collect 0, static 0, normalize 0, rolling 0, upload 0, summarize 0: exit 0"
	[ -s r2/annotation.md ]
	# without its library it says where it looked
	rm -r "$BATS_TEST_TMPDIR/lanelib"
	run --separate-stderr "$BATS_TEST_TMPDIR/p/bin/perf-lane" -r r3 "$ROOT_DIR/fixtures/ab/bench.json"
	assert_failure 2
	assert_equal "$stderr" "perf-lane: the lane's library (lane.bash) is not in $BATS_TEST_TMPDIR/lanelib, $BATS_TEST_TMPDIR/p/bin/../hooks/lib nor $BATS_TEST_TMPDIR/p/bin/../share/perfkite/lib"
	[ ! -e r3 ]
}

@test "shell scripts are shellcheck-clean and man pages lint clean" {
	run mk lint
	assert_success
}

# deps PROFILE: what tests/deps.sh asks a user (not root) to install for
# PROFILE on a Debian machine where nothing is installed yet.
deps() {
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/fake/dpkg-query"
	printf '#!/bin/sh\necho 1000\n' >"$BATS_TEST_TMPDIR/fake/id"
	chmod +x "$BATS_TEST_TMPDIR/fake/dpkg-query" "$BATS_TEST_TMPDIR/fake/id"
	PATH=$BATS_TEST_TMPDIR/fake:$PATH run --separate-stderr sh "$ROOT_DIR/tests/deps.sh" "$@"
}

@test "make demo installs what building and the demo need, no browser and no test tool; make test and make lint the rest" {
	deps build
	assert_failure 2
	assert_equal "${stderr_lines[1]}" \
		"  sudo apt-get install -y --no-install-recommends gcc make libc6-dev libcjson-dev zlib1g-dev libssl-dev git jq"
	deps lint
	assert_equal "${stderr_lines[1]}" \
		"  sudo apt-get install -y --no-install-recommends gcc make libc6-dev libcjson-dev zlib1g-dev libssl-dev git jq shellcheck mandoc groff-base man-db"
	deps test
	[[ ${stderr_lines[1]} == *" shellcheck mandoc groff-base man-db gzip bats bats-assert bats-support lighttpd python3-yaml python3-jsonschema python3-html5lib g++ libbenchmark-dev python3-pytest-benchmark hyperfine catch2 golang-go chromium" ]]
	# CI (no profile) gets everything, clang's libFuzzer too
	deps
	[[ ${stderr_lines[1]} == *" golang-go clang libclang-rt-dev chromium" ]]
	deps bogus
	assert_failure 2
	assert_equal "$stderr" "usage: sh tests/deps.sh [build|lint|test|fuzz]"
	# each target asks for its own profile
	for t in demo:build test:test lint:lint fuzz:fuzz; do
		run mk -n "${t%%:*}"
		assert_line "sh tests/deps.sh ${t#*:}"
	done
}

@test "check-layout: the tree passes; a system including another, core including a system, a bare or unused include fail by line" {
	run python3 "$ROOT_DIR/tests/lib/check_layout.py" "$ROOT_DIR"
	assert_success
	assert_output ""
	t=$BATS_TEST_TMPDIR/tree
	mkdir -p "$t/src/lib/core" "$t/src/lib/lane" "$t/src/lib/campaign" "$t/src/lib/frames" "$t/src/lib/misc"
	printf 'int core_f(void);\n' >"$t/src/lib/core/c.h"
	printf 'int lane_f(void);\nstruct lane_s { int x; };\n' >"$t/src/lib/lane/l.h"
	printf 'int camp_f(void);\n' >"$t/src/lib/campaign/k.h"
	printf '#include "lane/l.h"\nint core_f(void) { return lane_f(); }\n' >"$t/src/lib/core/c.c"
	printf '#include "core/c.h"\n#include "lane/l.h"\nint camp_f(void) { struct lane_s s = {core_f()}; return s.x; }\n' >"$t/src/lib/campaign/k.c"
	printf '#include "c.h"\n#include "core/c.h"\n#include "core/nope.h"\nint lane_f(void) { return 0; }\n' >"$t/src/lib/lane/l.c"
	printf '#include "core/c.h"\n#include "campaign/k.h"\n#include "lane/l.h"\nint main(void) { return core_f() + lane_f(); }\n' >"$t/src/perf-x.c"
	printf 'int stray;\n' >"$t/src/lib/misc/m.c"
	run python3 "$ROOT_DIR/tests/lib/check_layout.py" "$t"
	assert_failure 1
	assert_output 'src/lib/campaign/k.c:2: #include "lane/l.h": src/lib/campaign/ may include only from campaign/ and core/
src/lib/core/c.c:1: #include "lane/l.h": src/lib/core/ may include only from core/
src/lib/lane/l.c:1: #include "c.h": name the header by its directory (core/, lane/, campaign/, frames/)
src/lib/lane/l.c:2: #include "core/c.h": nothing it declares is used here
src/lib/lane/l.c:3: #include "core/nope.h": no such header
src/lib/misc/m.c: a library file outside core/, lane/, campaign/ and frames/
src/perf-x.c:2: #include "campaign/k.h": nothing it declares is used here'
}

# A repository whose commits after the first have the given subjects.
subject_repo() {
	local r=$BATS_TEST_TMPDIR/repo s
	git init -q "$r"
	git -C "$r" -c user.name=t -c user.email=t@example.com commit -q --allow-empty \
		-m "the base: a subject before the rule, longer than seventy-two characters is fine"
	for s in "$@"; do
		git -C "$r" -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m "$s"
	done
	echo "$r"
}

@test "make lint's subject check: at most 72 characters after the base, none before" {
	local r ok long
	ok=$(printf '%072d' 0)
	long=$(printf '%073d' 0)
	r=$(subject_repo "$ok")
	run --separate-stderr sh "$ROOT_DIR/tests/lib/check_subjects.sh" "$(git -C "$r" rev-parse HEAD~1)" "$r"
	assert_success
	assert_equal "$stderr" ""
	r=$(subject_repo "a brief one" "$long")
	run --separate-stderr sh "$ROOT_DIR/tests/lib/check_subjects.sh" "$(git -C "$r" rev-parse HEAD~2)" "$r"
	assert_failure 1
	grep -qF "subject of 73 characters, at most 72: $long" <<<"$stderr"
	run ! grep -q "a brief one" <<<"$stderr"
}

@test "make lint's subject check passes on this history, and where the base is unknown" {
	local r base
	base=$(sed -n 's/^SUBJECT_BASE = //p' "$ROOT_DIR/Makefile")
	[ ${#base} -eq 40 ]
	if git -C "$ROOT_DIR" rev-parse -q --verify "$base^{commit}" >/dev/null; then
		run --separate-stderr sh "$ROOT_DIR/tests/lib/check_subjects.sh" "$base" "$ROOT_DIR"
		assert_success
	fi
	r=$(subject_repo "$(printf '%080d' 0)")
	run --separate-stderr sh "$ROOT_DIR/tests/lib/check_subjects.sh" "$base" "$r"
	assert_success
	grep -qF "not in this history; subjects not checked" <<<"$stderr"
}

@test "test names say what they check, not a section of a document outside the tree" {
	run grep -nE '^@test "([0-9]+\.[0-9]+:|rows? [0-9]+)|@test "[^"]*\([0-9]+\.[0-9]+( rows? [0-9]|[),])' \
		"$ROOT_DIR"/tests/*.bats
	assert_failure 1
	assert_output ""
}

@test "check-layout --sorted: the tree's include blocks are sorted by path; an unsorted block fails by line" {
	run python3 "$ROOT_DIR/tests/lib/check_layout.py" --sorted "$ROOT_DIR"
	assert_success
	assert_output ""
	t=$BATS_TEST_TMPDIR/tree
	mkdir -p "$t/src/lib/core" "$t/src/lib/lane"
	printf 'int core_f(void);\n' >"$t/src/lib/core/c.h"
	printf 'int core_g(void);\n' >"$t/src/lib/core/d.h"
	printf 'int lane_f(void);\n' >"$t/src/lib/lane/l.h"
	printf '#include "core/d.h"\n#include "core/c.h"\n\n#include "lane/l.h"\nint core_f(void) { return core_g() + lane_f(); }\n' \
		>"$t/src/lib/lane/l.c"
	printf '#include "core/c.h"\n#include "core/d.h"\n#include "lane/l.h"\nint main(void) { return core_f() + core_g() + lane_f(); }\n' \
		>"$t/src/perf-x.c"
	run python3 "$ROOT_DIR/tests/lib/check_layout.py" "$t"
	assert_success
	run python3 "$ROOT_DIR/tests/lib/check_layout.py" --sorted "$t"
	assert_failure 1
	assert_output 'src/lib/lane/l.c:2: #include "core/c.h": after "core/d.h"; a block'"'"'s includes are sorted by path'
}
