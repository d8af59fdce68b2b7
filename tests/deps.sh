#!/bin/sh
# Installs the Debian packages one use of perfkite needs, when any is
# missing: with apt-get when run as root, otherwise by printing the command.
#
#   sh tests/deps.sh build   building and the demo (make, make demo)
#   sh tests/deps.sh lint    the above, and what make lint runs
#   sh tests/deps.sh test    the above, and what the tests use (make test)
#   sh tests/deps.sh fuzz    the above, and clang's libFuzzer (make fuzz)
#   sh tests/deps.sh         everything: the fuzz profile (CI)
#
# A newcomer's first command, make demo, installs no browser and no test tool.
set -eu

profile=${1:-fuzz}
build="gcc make libc6-dev libcjson-dev zlib1g-dev libssl-dev git jq"
lint="shellcheck mandoc groff-base man-db"
# The benchmark tools perf-import-tools.bats runs for real.
test="gzip bats bats-assert bats-support lighttpd python3-yaml python3-jsonschema python3-html5lib g++ libbenchmark-dev python3-pytest-benchmark hyperfine catch2 golang-go"
fuzz="clang libclang-rt-dev"
case $profile in
build) pkgs=$build optional="" ;;
lint) pkgs="$build $lint" optional="" ;;
# Chromium is wanted by the dashboard's browser tests, which say so and
# skip without it.
test) pkgs="$build $lint $test" optional="chromium" ;;
fuzz) pkgs="$build $lint $test $fuzz" optional="chromium" ;;
*)
	echo "usage: sh tests/deps.sh [build|lint|test|fuzz]" >&2
	exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "perfkite: not a Debian system; make sure these (or their equivalents) are installed:" >&2
	echo "  $pkgs" >&2
	exit 0
fi

installed() {
	case $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) in
	"install ok installed") return 0 ;;
	*) return 1 ;;
	esac
}

missing=""
for p in $pkgs; do
	installed "$p" || missing="$missing $p"
done
want=""
for p in $optional; do
	installed "$p" || want="$want $p"
done
[ -z "$missing$want" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	updated=false
	for set in "$missing" "$want"; do
		[ -n "$set" ] || continue
		echo "perfkite: installing:$set"
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $set >/dev/null 2>&1 && continue
		$updated || { apt-get update -qq; updated=true; }
		# shellcheck disable=SC2086
		if ! apt-get install -y -qq --no-install-recommends $set >/dev/null; then
			[ "$set" = "$want" ] || exit 2
			echo "perfkite: could not install$set; the browser tests will be skipped" >&2
		fi
	done
elif [ -n "$missing" ]; then
	echo "perfkite: missing packages; run:" >&2
	echo "  sudo apt-get install -y --no-install-recommends$missing$want" >&2
	exit 2
else
	echo "perfkite: for the browser tests: sudo apt-get install -y$want" >&2
fi
