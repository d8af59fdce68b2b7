#!/bin/sh
# Installs the Debian packages perfkite needs to build and test, when any is
# missing: with apt-get when run as root, otherwise by printing the command.
set -eu

pkgs="gcc make libc6-dev libcjson-dev zlib1g-dev libssl-dev gzip bats bats-assert
bats-support jq git mandoc groff-base man-db shellcheck lighttpd python3-yaml python3-jsonschema clang
libclang-rt-dev"
# Wanted by the dashboard's browser tests, which say so and skip without it.
optional="chromium"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "perfkite: not a Debian system; make sure these (or their equivalents) are installed:" >&2
	echo "  $pkgs" | tr '\n' ' ' >&2
	echo >&2
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
