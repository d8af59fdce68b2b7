# shellcheck shell=bash
# Golden cases: a command's whole output compared byte for byte with what
# the fixtures say, rather than spot checks.
#
# golden DIR/NAME CMD...: runs CMD (standard input from NAME.in when there
# is one, else nothing) and compares its standard output with NAME.out and
# its standard error with NAME.err (empty when absent) byte for byte, and
# its exit status with NAME.status (0 when absent); all under
# fixtures/tests. In NAME.out and NAME.err, @TMP@ stands for the test's
# directory and @FIXTURES@ for the fixtures directory; GOLDEN_SED, when
# set, is a sed script for what else varies from run to run.
#
# UPDATE_FIXTURES=1 writes NAME.out, NAME.err and NAME.status from what CMD
# does instead: for a new case, or one whose output changed on purpose.
# Read what it wrote before committing it.
golden() {
	local name=$1 base=$FIXTURES/$1 rc=0 want=0 got=$BATS_TEST_TMPDIR/.golden
	shift
	if [ -f "$base.in" ]; then
		"$@" <"$base.in" >"$got.out" 2>"$got.err" || rc=$?
	else
		"$@" </dev/null >"$got.out" 2>"$got.err" || rc=$?
	fi
	sed -i -e "s|$BATS_TEST_TMPDIR|@TMP@|g" -e "s|$FIXTURES|@FIXTURES@|g" \
		${GOLDEN_SED:+-e "$GOLDEN_SED"} "$got.out" "$got.err"
	if [ -n "${UPDATE_FIXTURES:-}" ]; then
		mkdir -p "${base%/*}"
		cp "$got.out" "$base.out"
		if [ -s "$got.err" ]; then cp "$got.err" "$base.err"; else rm -f "$base.err"; fi
		if [ "$rc" -ne 0 ]; then echo "$rc" >"$base.status"; else rm -f "$base.status"; fi
		return 0
	fi
	[ ! -f "$base.status" ] || want=$(cat "$base.status")
	if [ "$rc" -ne "$want" ]; then
		echo "$name: exit status $rc, expected $want; stderr: $(head -c 2000 "$got.err")" >&2
		return 1
	fi
	[ -f "$base.out" ] || { echo "$name: no $base.out" >&2; return 1; }
	diff -u "$base.out" "$got.out" >&2 || { echo "$name: standard output differs" >&2; return 1; }
	if [ -f "$base.err" ]; then
		diff -u "$base.err" "$got.err" >&2 || { echo "$name: standard error differs" >&2; return 1; }
	elif [ -s "$got.err" ]; then
		echo "$name: unexpected standard error: $(head -c 2000 "$got.err")" >&2
		return 1
	fi
}

# then_cat FILE CMD...: CMD, its standard output dropped, then FILE: for
# golden cases of what a program writes to a file. CMD's exit status.
then_cat() {
	local file=$1 rc=0
	shift
	"$@" >/dev/null || rc=$?
	[ ! -f "$file" ] || cat "$file"
	return "$rc"
}
