#!/usr/bin/env bats
# The man pages: they render without warnings (mandoc, groff, man), their
# SYNOPSIS, the usage and the options each program accepts agree, and every
# example in EXAMPLES runs.
# shellcheck disable=SC2154 # bats sets stderr

load lib/common

# Prints the literal blocks of the EXAMPLES section of page $1, separated
# by NUL bytes, with mdoc's \e as the backslash it stands for.
examples() {
	awk '
		/^\.Sh / { inex = ($2 == "EXAMPLES") }
		inex && /^\.Bd -literal/ { lit = 1; block = ""; next }
		inex && /^\.Ed/ && lit { lit = 0; printf "%s%c", block, 0; next }
		lit { line = $0; gsub(/\\e/, "\\\\", line); block = block line "\n" }
	' "$1"
}

run_examples() {
	local page=$ROOT_DIR/man/$1 n=0 ex
	while IFS= read -r -d '' ex; do
		# A script shown whole ("#!...") is an example to copy, not a command.
		[[ $ex == '#!'* ]] && continue
		n=$((n + 1))
		run --separate-stderr bash -c "cd '$ROOT_DIR' && $ex"
		# Console lines may go to stderr; the pipeline must succeed and print.
		if [ "$status" -ne 0 ] || [ -z "$output" ]; then
			echo "example $n of $1 failed (status $status):" >&2
			echo "$ex" >&2
			echo "stderr: $stderr" >&2
			return 1
		fi
	done < <(examples "$page")
	[ "$n" -gt 0 ] || { echo "$1 has no examples" >&2; return 1; }
}

@test "every man page lints clean" {
	run mandoc -Tlint -W warning "$ROOT_DIR"/man/*.[17]
	assert_success
	assert_output ""
}

@test "every program has a man page whose synopsis names it" {
	for src in "$ROOT_DIR"/src/perf-*.c; do
		prog=$(basename "$src" .c)
		grep -q "^\.Nm $prog$" "$ROOT_DIR/man/$prog.1"
	done
}

@test "perf-normalize(1) examples run" { run_examples perf-normalize.1; }
@test "perf-gate-static(1) examples run" { run_examples perf-gate-static.1; }
@test "perf-gate-rolling(1) examples run" { run_examples perf-gate-rolling.1; }
@test "perf-summarize(1) examples run" { run_examples perf-summarize.1; }
@test "perf-upload(1) examples run" { run_examples perf-upload.1; }
@test "perf-seed(1) examples run" { run_examples perf-seed.1; }
@test "perf-lane(1) examples run" { run_examples perf-lane.1; }
@test "perf-plan(1) examples run" { run_examples perf-plan.1; }
@test "perf-analyze(1) examples run" { run_examples perf-analyze.1; }
@test "perf-measure(1) examples run" { run_examples perf-measure.1; }
@test "perf-campaign(1) examples run" { run_examples perf-campaign.1; }
@test "perf-frames(1) examples run" { run_examples perf-frames.1; }
@test "perf-changes(1) examples run" { run_examples perf-changes.1; }
@test "perf-site(1) examples run" { run_examples perf-site.1; }
@test "perf-import(1) examples run" { run_examples perf-import.1; }
@test "perf-collect(1) examples run" {
	export PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	run_examples perf-collect.1
}

@test "every man page renders without warnings under groff and man" {
	local page out
	for page in "$ROOT_DIR"/man/*.[17]; do
		out=$(groff -mandoc -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$out" ] || { echo "groff: $out" >&2; return 1; }
		out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "man -l $page: $out" >&2; return 1; }
	done
}

# --- SYNOPSIS, usage and the options each program accepts ---------------
#
# For every page man/NAME.1 of a program, the program's one option table
# (core/opt.h: its getopt options, usage and --help lines all come from
# it) is compared with the page, nothing written down here: the usage the
# table prints with the page's SYNOPSIS (rendered by mandoc), the options
# and arities the table declares (PERF_OPTIONS_TABLE=1 NAME --help dumps
# them; for a script, the case patterns of its option loop) with the
# page's OPTIONS list (.It Fl items). Each option the page or the usage
# names is also tried on the program.

# Normalized forms, one a line, from usage text (or a rendered SYNOPSIS) on
# stdin: "usage: " dropped, continuation lines joined, blanks squeezed, no
# blanks around "|".
forms() {
	awk -v prog="$1" '
		{ sub(/^usage: /, "") }
		$1 == prog { if (f != "") print f; f = $0; next }
		NF { f = f " " $0 }
		END { if (f != "") print f }
	' | sed -E 's/[[:space:]]+/ /g; s/ ?\| ?/|/g; s/^ //; s/ $//'
}

# The synopsis --help prints: up to its first blank line (the options follow).
usage_forms() { "$1" --help | sed '/^$/,$d' | forms "$(basename "$1")"; }

# The options --help of program $1 lists, one a line: each flag of a line's
# head (the text before its description, which two blanks set off).
help_flags() {
	"$1" --help | sed '1,/^$/d' | sed -nE 's/^  (-[^ ]*( [^ ]+)*)  .*/\1/p' |
		tr -s ', ' '\n' | grep -E '^--?[A-Za-z]' | sort -u
}

synopsis_forms() {
	mandoc -Tascii -O width=1000 "$ROOT_DIR/man/$1.1" | col -b |
		awk '/^SYNOPSIS/ { s = 1; next } /^[A-Z]/ { s = 0 } s' | forms "$1"
}

# The options a form names, one a line: "SUB OPTION" (SUB is the
# subcommand the form starts with, or "-").
form_options() {
	local form sub
	while IFS= read -r form; do
		sub=$(awk '$2 ~ /^[a-z][a-z-]*$/ { print $2; exit } { print "-" }' <<<"$form")
		grep -oE '(^|[][{ |])--?[A-Za-z][A-Za-z0-9-]*' <<<"$form" |
			sed -E 's/^[][{ |]//; s/^/'"$sub"' /'
	done
}

# The OPTIONS items of page $1: "ARITY OPTION..." a line, ARITY 1 when the
# item names an argument (Ar or Cm after the flags), else 0.
option_items() {
	awk '
		/^\.Sh / { s = ($2 == "OPTIONS") }
		!s || !/^\.It Fl/ { next }
		{
			arg = 0; flags = ""; infl = 0
			for (i = 2; i <= NF; i++) {
				w = $i
				if (w == "Fl") { infl = 1; continue }
				if (w ~ /^[A-Z][a-z][a-z]?$/) { infl = 0; if (w == "Ar" || w == "Cm") arg = 1; continue }
				if (infl && w ~ /^-?[A-Za-z][A-Za-z0-9-]*$/) flags = flags " -" w
			}
			print arg flags
		}
	' "$ROOT_DIR/man/$1.1"
}

# The option table of program $1: "SUB ARITY OPTION..." a line (SUB the
# subcommand the option belongs to, or "-"; ARITY 1 when it takes an
# argument), as PERF_OPTIONS_TABLE=1 makes --help print it (core/opt.h).
table_items() {
	env -u PERFORMANCE_TRACKING_ROOT PERF_OPTIONS_TABLE=1 "$(command -v "$1")" --help
}

# The options program $1 accepts, one a line: those of its table, or, for
# a script, the case patterns of its option loop.
source_options() {
	if [ -f "$ROOT_DIR/src/$1.c" ]; then
		table_items "$1" | cut -d' ' -f3- | tr ' ' '\n' | grep . | sort -u
	else
		awk '/^while \[ \$# -gt 0 \]/ { s = 1 } s && /^done/ { exit }
			s && /^[[:space:]]*-/ { sub(/\).*/, ""); print }' "$ROOT_DIR/bin/$1" |
			tr -s '|\\[:space:]' '\n' | grep -E '^--?[a-z][a-z0-9-]*$' | sort -u
	fi
}

# The options whose arity differs between the table of program $1 and
# the OPTIONS items of its page ($2), one "OPTION: table N, page M" a line.
arity_disagreements() {
	[ -f "$ROOT_DIR/src/$1.c" ] || return 0
	awk 'NR == FNR { for (i = 2; i <= NF; i++) page[$i] = $1; next }
		{ for (i = 3; i <= NF; i++) if (($i in page) && page[$i] != $2)
			printf "%s: table %s, page %s\n", $i, $2, page[$i] }' \
		<(printf '%s\n' "$2") <(table_items "$1")
}

# probe PROG SUB ARITY OPTION [exits]: the program accepts OPTION (after
# SUB, when not "-") with ARITY arguments. Given alone, an option that takes
# an argument must be answered "requires an argument"; a flag followed by an
# unknown option must leave the complaint to that one, or, with "exits"
# (--help, --version), succeed.
probe() {
	local prog=$1 sub=$2 arity=$3 opt=$4 exits=${5:-} bad st err
	local -a argv=("$prog")
	[ "$sub" = - ] || argv+=("$sub")
	argv+=("$opt")
	[ "$arity" = 1 ] || argv+=(--perfkite-probe)
	st=0
	env -u PERFORMANCE_TRACKING_ROOT PERF_CUDA_LIBRARY=/nonexistent \
		PERF_NVML_LIBRARY=/nonexistent timeout 20 "${argv[@]}" \
		</dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/probe.err" || st=$?
	err=$(cat "$BATS_TEST_TMPDIR/probe.err")
	bad=$(grep -E '(unrecognized|unknown|invalid) (option|command)' <<<"$err" |
		grep -v -- '--perfkite-probe' || true)
	if [ -n "$bad" ]; then
		echo "${argv[*]}: $opt is not accepted: $bad"
		return
	fi
	if [ "$arity" = 1 ]; then
		grep -qE 'requires an argument|needs a value' <<<"$err" ||
			echo "${argv[*]}: $opt takes no argument (status $st: $err)"
	elif ! grep -q -- '--perfkite-probe' <<<"$err" &&
		! { [ -n "$exits" ] && [ "$st" -eq 0 ]; }; then
		echo "${argv[*]}: $opt takes an argument (status $st: $err)"
	fi
}

# lines [TEXT]: the non-empty lines of TEXT (or stdin), sorted, unique.
lines() {
	if [ $# -gt 0 ]; then printf '%s\n' "$1"; else cat; fi | grep -v '^$' | sort -u
}

# Prints every disagreement between the four for program $1.
option_disagreements() {
	local name=$1 prog usage synopsis items accepted documented shown
	local sub opt arity flags f subs exits
	prog=$(command -v "$name") || { echo "$name: not built"; return; }
	usage=$(usage_forms "$prog" 2>&1)
	synopsis=$(synopsis_forms "$name")
	[ "$usage" = "$synopsis" ] ||
		printf 'usage and SYNOPSIS differ:\n--- usage\n%s\n--- SYNOPSIS\n%s\n' "$usage" "$synopsis"
	items=$(option_items "$name")
	accepted=$(source_options "$name")
	documented=$(cut -d' ' -f2- <<<"$items" | tr ' ' '\n' | sort -u)
	shown=$( { form_options <<<"$usage"; form_options <<<"$synopsis"; } | sort -u)
	arity_disagreements "$name" "$items" | sed 's/^/arity differs: /'
	# Named by the page or the usage, but not declared by the table.
	comm -13 <(lines "$accepted") <({ lines "$documented"; cut -d' ' -f2 <<<"$shown"; } | lines) |
		sed 's/^/not an option of the program: /'
	# Declared by the table, but not in OPTIONS.
	comm -23 <(lines "$accepted") <(lines "$documented") | sed 's/^/not in OPTIONS: /'
	# Named by SYNOPSIS or usage, but not in OPTIONS.
	comm -13 <(lines "$documented") <(cut -d' ' -f2 <<<"$shown" | lines) |
		sed 's/^/in SYNOPSIS or usage, not in OPTIONS: /'
	# Every OPTIONS item: shown in the synopsis (but --help and --version),
	# and accepted, with its arity, after the subcommands it is shown with.
	while read -r arity flags; do
		[ -n "$flags" ] || continue
		# shellcheck disable=SC2086 # flags are words
		subs=$(for f in $flags; do awk -v o="$f" '$2 == o { print $1 }' <<<"$shown"; done | sort -u)
		exits=
		case " $flags " in *" --help "* | *" --version "*) exits=exits ;; esac
		if [ -z "$subs" ]; then
			[ -n "$exits" ] || { echo "in OPTIONS, not in SYNOPSIS: $flags"; continue; }
			subs=-
		fi
		for sub in $subs; do
			for opt in $flags; do
				probe "$prog" "$sub" "$arity" "$opt" $exits
			done
		done
	done <<<"$items"
}

@test "SYNOPSIS, usage, OPTIONS and the options each program accepts agree" {
	local page name diff all=
	cd "$BATS_TEST_TMPDIR"
	for page in "$ROOT_DIR"/man/*.1; do
		name=$(basename "$page" .1)
		diff=$(option_disagreements "$name")
		[ -z "$diff" ] || all+="$name: ${diff//$'\n'/$'\n'$name: }"$'\n'
	done
	[ -z "$all" ] || { printf '%s' "$all" >&2; return 1; }
}

@test "every program prints its one option table under PERF_OPTIONS_TABLE" {
	local src name table all=
	for src in "$ROOT_DIR"/src/perf-*.c; do
		name=$(basename "$src" .c)
		table=$(table_items "$name") || { all+="$name: exit $?"$'\n'; continue; }
		grep -qE '^- [01] (-[A-Za-z] )?--help$' <<<"$table" ||
			all+="$name: no table (or no --help in it)"$'\n'
		grep -vqE '^[-a-z]+ [01]( --?[A-Za-z][A-Za-z0-9-]*)+$' <<<"$table" &&
			all+="$name: a line is not SUB ARITY OPTION...: $table"$'\n'
	done
	# The table is what getopt reads: its options and arities, as a user meets them.
	run --separate-stderr env PERF_OPTIONS_TABLE=1 perf-site --help
	assert_success
	assert_line '- 1 -s --store'
	assert_line '- 0 --version'
	run --separate-stderr perf-site --store
	assert_failure 2
	[[ $stderr == *"option '--store' requires an argument"* ]]
	run --separate-stderr env PERF_OPTIONS_TABLE=1 perf-campaign --help
	assert_line 'run 0 --once'
	assert_line 'collect 1 -o'
	[ -z "$all" ] || { printf '%s' "$all" >&2; return 1; }
}

@test "--help lists every option of the page, one line each; perfkite(7) names every program (issue 22 item 20)" {
	local page name flags f all=
	for page in "$ROOT_DIR"/man/*.1; do
		name=$(basename "$page" .1)
		flags=$(help_flags "$(command -v "$name")")
		[ -n "$flags" ] || { all+="$name: --help lists no options"$'\n'; continue; }
		for f in $(option_items "$name" | cut -d' ' -f2-); do
			grep -qxF -- "$f" <<<"$flags" || all+="$name: $f is not on a line of --help"$'\n'
		done
	done
	# A usage error shows the synopsis alone.
	run --separate-stderr perf-upload --perfkite-probe
	assert_failure 2
	[[ $stderr != *"options:"* ]]
	[[ $stderr == *"usage: perf-upload"* ]]
	# perfkite(7)'s SEE ALSO names every program.
	see=$(awk '/^\.Sh / { s = ($2 == "SEE") } s && /^\.Xr / { print $2 }' "$ROOT_DIR/man/perfkite.7")
	for f in "$ROOT_DIR"/src/perf-*.c "$ROOT_DIR"/bin/perf-lane; do
		name=$(basename "$f" .c)
		grep -qxF "$name" <<<"$see" || all+="perfkite(7): SEE ALSO lacks $name"$'\n'
	done
	[ -z "$all" ] || { printf '%s' "$all" >&2; return 1; }
}
