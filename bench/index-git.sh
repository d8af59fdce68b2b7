#!/usr/bin/env bash
# make bench-index-git: the index of a git store served over http (git
# http-backend behind lighttpd, as the tests serve git). A batch of 10
# records gated by a fresh agent (an empty cache: the clone, then the
# gate) and by a warm one (the cache there), with the index and without
# it (PERF_STORE_INDEX=0: the clone plus a full scan), outputs compared.
# Target (issue 28): the fresh agent's gate within 5x of the warm one's
# and at least 10x faster than a full clone plus scan. The fresh agent's
# clone is a partial one (--filter=blob:none, the served repository
# allowing it) checked out sparsely: the index and the records the gate
# reads. A second repository served without uploadpack.allowFilter shows
# the fallback: every blob fetched, the work tree still sparse.
#
#   BENCH_GIT_RECORDS    records in the store (default 100000)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${BENCH_GIT_RECORDS:-100000}
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
git clone -q --bare "$work/repos/store.git" "$work/repos/plain.git"
git -C "$work/repos/store.git" config uploadpack.allowFilter true

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
gate() { perf-gate-rolling -s "${2:-$spec}" --cache "$1" "$work/batch.jsonl"; }
nogate() { PERF_STORE_INDEX=0 perf-gate-rolling -s "$spec" --cache "$1" "$work/batch.jsonl"; }

fresh=$(secs gate "$work/c1")
warm=$(secs gate "$work/c1")
plain=$(secs gate "$work/c3" "${spec%store.git}plain.git")
full=$(secs nogate "$work/c2")
fullwarm=$(secs nogate "$work/c2")
gate "$work/c1" >"$work/with.out" 2>&1 || true
gate "$work/c3" "${spec%store.git}plain.git" >"$work/plain.out" 2>&1 || true
nogate "$work/c2" >"$work/without.out" 2>&1 || true
same=no
cmp -s "$work/with.out" "$work/without.out" && cmp -s "$work/plain.out" "$work/without.out" &&
	same=yes
clone=$(find "$work/c1" -mindepth 1 -maxdepth 1 -type d)
checked=$(find "$clone" -path "$clone/.*" -prune -o -name '*.json' -print | wc -l)
missing=$(git -C "$clone" rev-list --objects --missing=print HEAD | grep -c '^?' || true)
echo
echo "a git store of $n records over http: perf-gate-rolling, a batch of 10 records"
printf '%-44s %9s\n' "" seconds
printf '%-44s %9s\n' "fresh agent, index, partial clone" "$fresh" "warm agent, index" "$warm" \
	"fresh agent, index, server without filtering" "$plain" \
	"fresh agent, full clone + full scan" "$full" "warm agent, full scan" "$fullwarm"
echo "the partial clone: $checked record files checked out, $missing blobs never fetched"
awk -v f="$fresh" -v w="$warm" -v s="$full" -v same="$same" 'BEGIN {
	printf "fresh/warm %.1fx (target <= 5x); full clone+scan/fresh %.1fx (target >= 10x); identical: %s\n",
	    f / w, s / f, same }'
