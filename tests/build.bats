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
	[[ ${stderr_lines[1]} == *" shellcheck mandoc groff-base man-db gzip bats bats-assert bats-support lighttpd python3-yaml python3-jsonschema chromium" ]]
	# CI (no profile) gets everything, clang's libFuzzer too
	deps
	[[ ${stderr_lines[1]} == *" python3-jsonschema clang libclang-rt-dev chromium" ]]
	deps bogus
	assert_failure 2
	assert_equal "$stderr" "usage: sh tests/deps.sh [build|lint|test|fuzz]"
	# each target asks for its own profile
	for t in demo:build test:test lint:lint fuzz:fuzz; do
		run mk -n "${t%%:*}"
		assert_line "sh tests/deps.sh ${t#*:}"
	done
}
