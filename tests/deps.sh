#!/bin/sh
# Installs the Debian packages perfkite needs to build and test, when any is
# missing: with apt-get when run as root, otherwise by printing the command.
set -eu

pkgs="gcc make libc6-dev libcjson-dev zlib1g-dev libssl-dev gzip bats bats-assert
bats-support jq git mandoc shellcheck chromium"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "perfkite: not a Debian system; make sure these (or their equivalents) are installed:" >&2
	echo "  $pkgs" | tr '\n' ' ' >&2
	echo >&2
	exit 0
fi

missing=""
for p in $pkgs; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $status in
	"install ok installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "perfkite: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 || {
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing
	}
else
	echo "perfkite: missing packages; run:" >&2
	echo "  sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 2
fi
