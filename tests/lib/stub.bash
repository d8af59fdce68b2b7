# shellcheck shell=bash
# Stand-ins for what only a Buildkite agent or a GPU machine has, as the
# real ones document them: buildkite-agent (artifact upload and download,
# annotate, meta-data get; a download fetches nothing: the tests run where
# the files are) and
# nvidia-smi (a CSV query, repeated with -l until killed). Each records its
# command lines, one per line, in $STUB_DIR/<name>.calls, so that a test
# can compare them with the exact arguments it expects; annotate keeps the
# body it read from standard input in $STUB_DIR/annotation.<n>.md.

# stub_start: puts the stand-ins first on PATH.
stub_start() {
	STUB_DIR=$BATS_TEST_TMPDIR/stubs
	mkdir -p "$STUB_DIR"
	cat >"$STUB_DIR/buildkite-agent" <<-'EOF'
		#!/usr/bin/env bash
		printf '%s\n' "$*" >>"$STUB_DIR/buildkite-agent.calls"
		case $1 in
		annotate)
			n=$(grep -c '^annotate' "$STUB_DIR/buildkite-agent.calls")
			cat >"$STUB_DIR/annotation.$n.md" ;;
		artifact)
			[ "$2" = upload ] || [ "$2" = download ] || exit 1 ;;
		meta-data)
			# get KEY: the value a test put in $STUB_DIR/meta-data.KEY, else status 1
			[ "$2" = get ] && [ -f "$STUB_DIR/meta-data.$3" ] || exit 1
			cat "$STUB_DIR/meta-data.$3" ;;
		*) echo "buildkite-agent stand-in: unexpected command: $*" >&2; exit 1 ;;
		esac
	EOF
	cat >"$STUB_DIR/nvidia-smi" <<-'EOF'
		#!/usr/bin/env bash
		printf '%s\n' "$*" >>"$STUB_DIR/nvidia-smi.calls"
		# repeated: its pid noted (before its first sample), for a test to see it stopped
		l=0
		for a in "$@"; do [ "$a" = -l ] && l=1 && echo $$ >>"$STUB_DIR/nvidia-smi.pids"; done
		echo "index, timestamp, clocks.current.sm [MHz], clocks.max.sm [MHz], power.draw [W], power.limit [W], temperature.gpu"
		echo "0, 2026/06/16 00:00:00.000, 1980 MHz, 1980 MHz, 210.50 W, 350.00 W, 54"
		[ "$l" = 0 ] || exec sleep 600
		exit 0
	EOF
	chmod +x "$STUB_DIR/buildkite-agent" "$STUB_DIR/nvidia-smi"
	export STUB_DIR PATH="$STUB_DIR:$PATH"
}

# stub_calls NAME: what the stand-in NAME was called with, one call per line.
stub_calls() {
	cat "$STUB_DIR/$1.calls" 2>/dev/null
}
