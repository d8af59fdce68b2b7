#!/usr/bin/env bash
# make bench-index-git: the index of a git store served over http (git
# http-backend behind lighttpd, as the tests serve git). A batch of 10
# records gated by a fresh agent (an empty cache: the clone, then the
# gate) and by a warm one (the cache there), with the index and without
# it (PERF_STORE_INDEX=0: the clone plus a full scan), outputs compared.
# Target (issue 28): the fresh agent's gate within 5x of the warm one's
# and at least 10x faster than a full clone plus scan. The clone is still
# a full one (no partial clone yet): the fresh figures show what is left.
#
#   BENCH_GIT_RECORDS    records in the store (default 20000)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_GIT_RECORDS:-20000}
out=bench/out
tools=build/bench
mkdir -p "$out" "$tools"
export PATH="$root/bin:$PATH"
unset PERF_STORE_INDEX PERF_STORE_THREADS
"${CC:-cc}" -O2 -Wall -o "$tools/gen-store" bench/gen-store.c
work=$(mktemp -d "${TMPDIR:-/tmp}/perfkite-bench-git.XXXXXX")
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# The store as one commit in a bare repository, its index committed.
"$tools/gen-store" "$n" "$work/store" >/dev/null
"$tools/gen-store" -b >"$work/batch.jsonl"
git init -q --bare -b main "$work/repos/store.git"
git -C "$work/repos/store.git" config http.receivepack true
git -C "$work/store" init -q -b main
git -C "$work/store" add -A
git -C "$work/store" -c user.name=b -c user.email=b@b commit -q -m store
git -C "$work/store" push -q "$work/repos/store.git" main
perf-upload --reindex -s "git+file://$work/repos/store.git" --cache "$work/seed-cache"

port=$((20000 + RANDOM % 20000))
cat >"$work/lighttpd.conf" <<CONF
server.document-root = "$work/repos"
server.port = $port
server.bind = "127.0.0.1"
server.modules = ("mod_alias", "mod_setenv", "mod_cgi")
alias.url = ("/git/" => "$(git --exec-path)/git-http-backend/")
\$HTTP["url"] =~ "^/git/" {
	cgi.assign = ("" => "")
	setenv.add-environment = ("GIT_PROJECT_ROOT" => "$work/repos", "GIT_HTTP_EXPORT_ALL" => "1")
}
CONF
PATH="$PATH:/usr/sbin" lighttpd -D -f "$work/lighttpd.conf" &
pid=$!
for _ in $(seq 100); do
	git ls-remote "http://127.0.0.1:$port/git/store.git" >/dev/null 2>&1 && break
	sleep 0.1
done
spec="git+http://127.0.0.1:$port/git/store.git"

# secs CMD...: the wall time of one run.
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
gate() { perf-gate-rolling -s "$spec" --cache "$1" "$work/batch.jsonl"; }
nogate() { PERF_STORE_INDEX=0 perf-gate-rolling -s "$spec" --cache "$1" "$work/batch.jsonl"; }

fresh=$(secs gate "$work/c1")
warm=$(secs gate "$work/c1")
full=$(secs nogate "$work/c2")
fullwarm=$(secs nogate "$work/c2")
gate "$work/c1" >"$work/with.out" 2>&1 || true
nogate "$work/c2" >"$work/without.out" 2>&1 || true
same=no
cmp -s "$work/with.out" "$work/without.out" && same=yes
echo
echo "a git store of $n records over http: perf-gate-rolling, a batch of 10 records"
printf '%-28s %9s\n' "" seconds
printf '%-28s %9s\n' "fresh agent, index" "$fresh" "warm agent, index" "$warm" \
	"fresh agent, full scan" "$full" "warm agent, full scan" "$fullwarm"
awk -v f="$fresh" -v w="$warm" -v s="$full" -v same="$same" 'BEGIN {
	printf "fresh/warm %.1fx (target <= 5x); full clone+scan/fresh %.1fx (target >= 10x); identical: %s\n",
	    f / w, s / f, same }'
