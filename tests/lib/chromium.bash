# shellcheck shell=bash
# Headless Chromium for the dashboard tests: Debian's chromium, started as
# the probe of this workplace starts it (no network, a fresh profile).

chromium_or_skip() {
	command -v chromium >/dev/null 2>&1 ||
		skip "chromium is not installed (make deps installs it on Debian)"
}

# chromium_run OUT_PREFIX URL ARGS...: runs headless Chromium on URL; stdout
# in OUT_PREFIX.out, stderr (console messages included) in OUT_PREFIX.err.
chromium_run() {
	local prefix=$1 url=$2
	shift 2
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$prefix.profile" \
		--enable-logging=stderr --v=0 --hide-scrollbars "$@" "$url" \
		>"$prefix.out" 2>"$prefix.err"
}
