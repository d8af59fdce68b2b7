#!/usr/bin/env bats
# The build itself: install paths, lint.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
load lib/common

mk() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$ROOT_DIR" "$@"
}

@test "make install honours PREFIX and DESTDIR" {
	# built in a directory of its own: the checkout's build and bin/ are
	# in use by the test files that run beside this one
	run mk -j"$(nproc)" install PREFIX=/opt/pk DESTDIR="$BATS_TEST_TMPDIR/root" \
		BUILD="$BATS_TEST_TMPDIR/build" OUTBIN="$BATS_TEST_TMPDIR/build/bin"
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
