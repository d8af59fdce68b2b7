#!/usr/bin/env bats
# Faults: a full disk, a read-only directory, failed allocations, signals,
# many writers at once. Every write path fails with exit 2 and its path, and
# what was stored before is unchanged.

# shellcheck disable=SC2154 # bats sets status, output, lines, stderr
# shellcheck disable=SC2016 # programs for bash -c are single-quoted on purpose
load lib/common
load lib/store

REC=$ROOT_DIR/fixtures/records/perf_wan-t2v-1.3b-1gpu_20260616T000100Z.json

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# the directory of the read-only test, outside bats's (see there); the
# tmpfs of the full-disk test, unmounted whether the test passed or not
teardown() {
	if [ -n "${mnt:-}" ] && mountpoint -q "$mnt"; then
		umount "$mnt"
	fi
	if [ -n "${top:-}" ] && [ -d "$top" ]; then
		chmod -R u+w "$top"
		rm -rf "$top"
	fi
}

# tree_sum DIR: one line per file, its content's digest.
tree_sum() {
	(cd "$1" && find . -type f ! -name .perfkite-lock -exec sha256sum {} + | sort)
}

# compared: records as perf-upload takes them (compared with an empty
# store: a missing one is exit 2).
compared() {
	mkdir -p "$BATS_TEST_TMPDIR/empty-store"
	perf-normalize "$REC" 2>/dev/null | perf-gate-rolling -s "$BATS_TEST_TMPDIR/empty-store" 2>/dev/null
}

# as_other CMD...: CMD as an unprivileged user when we are root (root
# writes through any mode bits).
as_other() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

@test "a full disk (/dev/full, a file size limit) on every write path: exit 2 with the path" {
	mkdir store && compared >cmp.jsonl
	perf-upload -s store -p always cmp.jsonl >/dev/null 2>&1
	before=$(tree_sum store)
	for cmd in "perf-gate-static $REC" "perf-normalize $REC" "perf-gate-rolling -s store cmp.jsonl" \
		"perf-upload -s store -p never cmp.jsonl" "perf-summarize -r rep cmp.jsonl" \
		"perf-plan $ROOT_DIR/fixtures/campaign/plan.json" \
		"perf-frames $ROOT_DIR/fixtures/frames/comparison.json"; do
		run --separate-stderr bash -c "$cmd >/dev/full"
		[ "$status" -eq 2 ] || { echo "$cmd: status $status" >&2; false; }
		[[ $stderr == *"write error"* ]] || { echo "$cmd: $stderr" >&2; false; }
	done
	# no file may grow (as a full disk refuses it): each program ignores
	# SIGXFSZ, reports EFBIG and removes its temporary file
	jq -c '.model_id = "other-model"' cmp.jsonl >other.jsonl
	for cmd in "perf-upload -s store -p always other.jsonl" \
		"perf-summarize -r rep -s store --html rep/d.html cmp.jsonl" \
		"perf-frames -o r.json $ROOT_DIR/fixtures/frames/comparison.json" \
		"perf-analyze --svg f.svg $ROOT_DIR/fixtures/campaign/plan.json $ROOT_DIR/fixtures/campaign/results.json" \
		"perf-upload --export -s store -o export.jsonl" \
		"perf-gate-rolling -s store -a arts cmp.jsonl" \
		"perf-seed prepare -s store --staging-root staging --intent-rationale r --source-result other.jsonl" \
		"perf-collect --cpu -o res $FIXTURES/perf-collect/v1.json"; do
		# the limit on the program only: its messages go through a pipe;
		# SIGXFSZ left at its default (a silent death) for the program to ignore
		run --separate-stderr bash -c "set -o pipefail; trap - XFSZ
			(ulimit -f 0; exec $cmd >/dev/null) 2>&1 | cat >&2"
		[ "$status" -eq 2 ] || { echo "$cmd: status $status: $stderr" >&2; false; }
		[[ $stderr == *"File too large"* ]] || { echo "$cmd: $stderr" >&2; false; }
	done
	assert_equal "$(tree_sum store)" "$before"
	[ ! -e r.json ]
	[ ! -e f.svg ]
	[ ! -e export.jsonl ]
	[ -z "$(find . -name '.*.tmp*' -o -name '*.tmp.*')" ]
}

# kind PATH: what PATH is, as stat(1) says, without following a link.
kind() {
	stat -c %F "$1"
}

@test "-o never replaces what is not a regular file: a device and a FIFO are written in place, a link is followed, a directory refused" {
	mkdir store && compared >cmp.jsonl
	perf-upload -s store -p always cmp.jsonl >/dev/null 2>&1
	perf-upload --export -s store -o want.gz
	# a character device: a null device of our own (never the machine's)
	if mknod null c 1 3 2>/dev/null; then
		for cmd in "perf-upload --export -s store -o null" \
			"perf-summarize -r rep -s store --html null cmp.jsonl" \
			"perf-frames -o null $ROOT_DIR/fixtures/frames/comparison.json" \
			"perf-analyze --svg null $ROOT_DIR/fixtures/campaign/plan.json $ROOT_DIR/fixtures/campaign/results.json"; do
			run --separate-stderr bash -c "$cmd"
			[ "$status" -eq 0 ] || { echo "$cmd: status $status: $stderr" >&2; false; }
			assert_equal "$(stat -c '%F %t,%T' null)" "character special file 1,3"
		done
	else
		echo "# mknod impossible here: the device case is not run" >&3
	fi
	# a FIFO: opened and written, its reader gets the bytes
	mkfifo fifo
	timeout 20 cat fifo >got.gz &
	reader=$!
	run --separate-stderr perf-upload --export -s store -o fifo
	assert_success
	wait "$reader"
	assert_equal "$(kind fifo)" "fifo"
	cmp got.gz want.gz
	# /dev/stdout, a link to a pipe here
	perf-upload --export -s store -o /dev/stdout 2>/dev/null | cmp - want.gz
	# a symbolic link: the file it names is replaced, the link stays
	mkdir sub && echo old >sub/target.gz && ln -s ../sub/target.gz sub2link
	mkdir d2 && mv sub2link d2/link
	run --separate-stderr perf-upload --export -s store -o d2/link
	assert_success
	assert_equal "$(kind d2/link)" "symbolic link"
	assert_equal "$(readlink d2/link)" "../sub/target.gz"
	cmp sub/target.gz want.gz
	# a link to nothing: refused, nothing created
	ln -s nowhere/missing.gz dangling
	run --separate-stderr perf-upload --export -s store -o dangling
	assert_failure 2
	assert_equal "$stderr" "perf-upload: dangling: cannot write: No such file or directory"
	[ -L dangling ]
	[ ! -e nowhere ]
	# a directory: refused, left as it was
	mkdir outdir
	for cmd in "perf-upload --export -s store -o outdir" \
		"perf-frames -o outdir $ROOT_DIR/fixtures/frames/comparison.json"; do
		run --separate-stderr bash -c "$cmd"
		[ "$status" -eq 2 ] || { echo "$cmd: status $status" >&2; false; }
		[[ $stderr == *"outdir"*"Is a directory"* ]] || { echo "$cmd: $stderr" >&2; false; }
		assert_equal "$(kind outdir)" "directory"
		[ -z "$(ls -A outdir)" ]
	done
	[ -z "$(find . -name '.*.tmp.*')" ]
}

@test "killed at every Nth file system call of a batch: the revision never undercounts, the store reads back" {
	command -v strace >/dev/null || skip "strace is not installed"
	strace -o /dev/null true 2>/dev/null || skip "cannot trace here"
	gen_records 1 base >base.jsonl
	gen_records 3 next >next.jsonl
	perf-upload -s base -p always base.jsonl >/dev/null 2>&1
	local sc n rc kills=0 added rev
	for sc in openat write fsync rename renameat2 link unlink close; do
		for n in $(seq 1 200); do
			rm -rf store && cp -a base store
			rc=0
			# (a sanitizer build's leak check runs a helper task at exit that the
			# injection could kill instead: it is off here, where only kills count)
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
				strace -o /dev/null -f -e trace="$sc" -e inject="$sc:signal=KILL:when=$n" \
				perf-upload -s store -p always next.jsonl >/dev/null 2>&1 || rc=$?
			[ "$rc" -eq 0 ] && break
			[ "$rc" -eq 137 ] || { echo "$sc #$n: status $rc" >&2; false; }
			kills=$((kills + 1))
			added=$(($(find store -name '*.json' | wc -l) - 1))
			rev=$(cat store/.perfkite-revision)
			# records of the batch in the store: its revision is counted
			if [ "$added" -gt 0 ] && [ "$rev" -lt 2 ]; then
				echo "$sc #$n: $added records of the batch stored, revision $rev" >&2
				false
			fi
			store_reads_clean store
			# and the next run completes the batch, counted
			perf-upload -s store -p always next.jsonl >/dev/null 2>&1
			assert_equal "$(find store -name '*.json' | wc -l)" 4
			[ "$(cat store/.perfkite-revision)" -ge 2 ]
		done
	done
	echo "# $kills kills" >&3
	[ "$kills" -gt 20 ]
}

@test "a small tmpfs filled up: the upload fails with its path and the store is unchanged" {
	mkdir -p mnt
	mount -t tmpfs -o size=256k tmpfs mnt 2>/dev/null || skip "cannot mount a tmpfs here"
	mnt=$BATS_TEST_TMPDIR/mnt
	mkdir mnt/store && compared >cmp.jsonl
	perf-upload -s mnt/store -p always cmp.jsonl >/dev/null
	before=$(tree_sum mnt/store)
	head -c 10M /dev/zero >mnt/filler 2>/dev/null || true
	for i in $(seq 1 20); do jq -c --arg i "$i" '.model_id = "m-" + $i' cmp.jsonl; done >many.jsonl
	run --separate-stderr perf-upload -s mnt/store -p always many.jsonl
	assert_failure 2
	[[ $stderr == *"mnt/store"*"No space left on device"* ]]
	assert_equal "$(tree_sum mnt/store)" "$before"
}

@test "the tmpfs test unmounts its tmpfs when it fails" {
	# faults.bats in a tree of its own whose perf-upload "succeeds" on the
	# full disk, so the tmpfs test fails: nothing of it stays mounted
	local t=$BATS_TEST_TMPDIR/tree p
	mkdir -p "$t/tests" "$t/bin" "$BATS_TEST_TMPDIR/tmp"
	mount -t tmpfs -o size=64k tmpfs "$BATS_TEST_TMPDIR/tmp" 2>/dev/null ||
		skip "cannot mount a tmpfs here"
	umount "$BATS_TEST_TMPDIR/tmp"
	cp "$BATS_TEST_FILENAME" "$t/tests/faults.bats"
	ln -s "$ROOT_DIR/tests/lib" "$t/tests/lib"
	ln -s "$ROOT_DIR/fixtures" "$t/fixtures"
	for p in "$PERF_BIN"/perf-*; do
		ln -s "$p" "$t/bin/"
	done
	rm "$t/bin/perf-upload"
	printf '#!/bin/sh\ncase " $* " in *many.jsonl*) exit 0 ;; esac\nexec %s "$@"\n' \
		"$PERF_BIN/perf-upload" >"$t/bin/perf-upload"
	chmod +x "$t/bin/perf-upload"
	run env PERF_BIN="$t/bin" TMPDIR="$BATS_TEST_TMPDIR/tmp" bats \
		-f '^a small tmpfs filled up' "$t/tests/faults.bats"
	assert_failure 1
	assert_line --partial "not ok 1 a small tmpfs filled up"
	run grep -F " $BATS_TEST_TMPDIR/tmp/" /proc/self/mounts
	# (what an old faults.bats left behind, unmounted here)
	awk -v d="$BATS_TEST_TMPDIR/tmp/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts |
		xargs -r -n1 umount
	assert_failure 1
	assert_output ""
}

@test "a read-only store, reports directory and output directory: exit 2 with the path" {
	# a directory the unprivileged user can reach (bats's and maybe the
	# checkout's are private), with the programs and inputs copied in
	top=$(mktemp -d /tmp/perfkite-ro.XXXXXX)
	chmod 755 "$top"
	compared >"$top/cmp.jsonl"
	cd "$top"
	mkdir -p store ro bin && cp -r "$ROOT_DIR/fixtures/frames" .
	for p in perf-upload perf-summarize perf-frames; do cp "$(command -v $p)" bin/; done
	perf-upload -s store -p always cmp.jsonl >/dev/null
	jq -c '.model_id = "other-model"' cmp.jsonl >other.jsonl
	chmod -R a+rX .
	PATH=$top/bin:$PATH
	# what the user can do here: read the inputs, write a new directory
	mkdir rw && chmod 777 rw
	run as_other perf-frames -o rw/r.json frames/comparison.json
	assert_success
	before=$(tree_sum store)
	chmod -R a-w store ro
	run --separate-stderr as_other perf-upload -s store -p always other.jsonl
	assert_failure 2
	[[ $stderr == *"store"*"Permission denied"* ]]
	assert_equal "$(tree_sum store)" "$before"
	run --separate-stderr as_other perf-summarize -r ro/reports cmp.jsonl
	assert_failure 2
	[[ $stderr == *"ro/reports"*"Permission denied"* ]]
	run --separate-stderr as_other perf-frames -o ro/r.json frames/comparison.json
	assert_failure 2
	[[ $stderr == *"ro/r.json"*"Permission denied"* ]]
	chmod -R u+w store ro
	cd / && rm -rf "$top"
}

# sweep PROG ARGS...: the program with its Nth allocation failing, for
# every N up to 300 and 60 more spread over the rest: never a crash;
# either exit 2 with a message, or (the failure absorbed by a library)
# the normal status and output.
sweep() {
	local shim=$PERF_STUBS/libfailalloc.so n total ref_rc
	ref_rc=0
	"$@" >ref.out 2>/dev/null || ref_rc=$?
	FAILALLOC_COUNT=$PWD/count LD_PRELOAD=$shim "$@" >/dev/null 2>&1 || true
	total=$(cat count)
	# (a subshell without bats's trace of every command, which costs more
	# than the runs themselves over thousands of them)
	(
		trap - DEBUG
		for n in $(seq 1 $((total < 300 ? total : 300))) $(seq 301 $(((total - 300) / 60 + 1)) "$total"); do
			rc=0
			FAILALLOC_N=$n LD_PRELOAD=$shim "$@" >out 2>err || rc=$?
			if [ "$rc" -ge 3 ] && [ "$rc" -ne "$ref_rc" ]; then
				echo "$1: allocation $n of $total: status $rc: $(head -c 300 err)" >&2
				exit 1
			fi
			if [ "$rc" -eq 2 ] && [ "$ref_rc" -ne 2 ]; then
				[ -s err ] || { echo "$1: allocation $n: exit 2 without a message" >&2; exit 1; }
			elif ! cmp -s out ref.out; then
				echo "$1: allocation $n: status $rc and different output: $(head -c 300 err)" >&2
				exit 1
			fi
		done
	) || return 1
	echo "# $1: $total allocations swept" >&3
}

@test "a failed allocation anywhere: never a crash, exit 2 with a message" {
	# the shim replaces malloc: not with a sanitizer's allocator
	if sanitized; then skip "sanitizer build"; fi
	: "${PERF_STUBS:?}"
	mkdir empty-store store
	compared >cmp.jsonl
	sweep perf-gate-static "$REC"
	sweep perf-normalize "$REC"
	sweep perf-gate-rolling -s empty-store cmp.jsonl
	sweep perf-summarize -r rep cmp.jsonl
	sweep perf-upload -s store -p never cmp.jsonl
	sweep perf-plan "$ROOT_DIR/fixtures/campaign/plan.json"
	sweep perf-analyze --json "$ROOT_DIR/fixtures/campaign/plan.json" "$ROOT_DIR/fixtures/campaign/results.json"
	sweep perf-frames "$ROOT_DIR/fixtures/frames/comparison.json"
	sweep perf-collect --check -c "$ROOT_DIR/fixtures/configs"
}

# stop_collect SIGNAL: perf-collect running a runner that has logged five
# lines and waits on a child; SIGNAL to perf-collect.
stop_collect() {
	cat >runner.sh <<-'EOS'
		#!/bin/sh
		for i in 1 2 3 4 5; do echo "runner line $i"; done
		sleep 60 &
		echo $! >"$HANG_PID"
		wait
	EOS
	chmod +x runner.sh
	rm -f pid
	export PERF_CUDA_LIBRARY=/nonexistent PERF_NVML_LIBRARY=/nonexistent
	HANG_PID=$PWD/pid perf-collect --cpu --runner ./runner.sh -o res \
		"$FIXTURES/perf-collect/v1.json" >out.jsonl 2>err &
	collector=$!
	for _ in $(seq 1200); do [ -s pid ] && break; sleep 0.05; done
	[ -s pid ]
	sleep 0.2
	kill "-$1" "$collector"
	rc=0
	wait "$collector" || rc=$?
	child=$(cat pid)
}

@test "SIGTERM and SIGINT during perf-collect: the runner's process group is gone, the worker log kept" {
	for sig in TERM INT; do
		rm -rf res
		stop_collect "$sig"
		[ "$rc" -eq 2 ] || { echo "SIG$sig: status $rc: $(cat err)" >&2; false; }
		# no orphan: the runner's child went with its group
		gone "$child"
		log=$(find res/worker_logs -name 'worker_*.log')
		[ -n "$log" ]
		for i in 1 2 3 4 5; do grep -q "^runner line $i$" "$log"; done
		grep -q "stopped by" err
	done
}

# The rounds of the races: 50 to a directory store, 25 to a git remote
# (each push that loses a race fetches, rebases and pushes again: 400
# uploads took over two minutes of CPU, the most of any test; 200 still
# race eight at a time every round), or 10 in a sanitizer build (ten
# times slower).
ROUNDS=50

# race STORE CACHE-PREFIX: 8 uploaders at once, $ROUNDS rounds, each round
# one new record per uploader; an upload that fails is noted in raceN.failed.
race() {
	local store=$1 cache=$2 p r
	for p in 1 2 3 4 5 6 7 8; do
		gen_records "$ROUNDS" "p$p" "racer-$p" >"racer$p.jsonl"
	done
	for p in 1 2 3 4 5 6 7 8; do
		(
			trap - DEBUG # (bats's trace of every command, not wanted here)
			for r in $(seq 1 "$ROUNDS"); do
				sed -n "${r}p" "racer$p.jsonl" >"one$p.jsonl"
				perf-upload -s "$store" ${cache:+--cache "$cache$p"} -p always "one$p.jsonl" \
					>/dev/null 2>>"race$p.err" || echo "round $r: $?" >>"race$p.failed"
			done
		) &
	done
	wait
}

@test "8 uploaders at once to one directory store, 50 rounds (10 in a sanitizer build): every record exactly once, none corrupt" {
	if sanitized; then ROUNDS=10; fi
	race store ""
	not ls race*.failed >/dev/null 2>&1 || { cat race*.failed race*.err >&2; false; }
	assert_equal "$(find store -name '*.json' | wc -l)" $((8 * ROUNDS))
	store_reads_clean store
	perf-upload --export -s store -o all.jsonl.gz
	assert_equal "$(gzip -dc all.jsonl.gz | jq -r .commit_sha | sort -u | wc -l)" $((8 * ROUNDS))
	assert_equal "$(cat store/.perfkite-revision)" $((8 * ROUNDS))
}

@test "8 uploaders at once to one git remote, 25 rounds (10 in a sanitizer build): every record exactly once, none corrupt" {
	ROUNDS=$(stress 25 10)
	bare_remote remote.git
	race "git+file://$PWD/remote.git" "$PWD/cache"
	# an upload that lost every retry keeps its commit for the next run: flush
	for p in 1 2 3 4 5 6 7 8; do
		perf-upload -s "git+file://$PWD/remote.git" --cache "$PWD/cache$p" -p always /dev/null >/dev/null 2>&1
	done
	run remote_files remote.git
	assert_equal "${#lines[@]}" $((8 * ROUNDS))
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" $((8 * ROUNDS))
	remote_whole remote.git
	git -C remote.git fsck --no-dangling >/dev/null
	for f in $(remote_files remote.git | shuf -n 40 --random-source=<(yes)); do
		git -C remote.git show "main:$f" | jq -e 'has("commit_sha")' >/dev/null
	done
	echo "# $(cat race*.failed 2>/dev/null | wc -l) of $((8 * ROUNDS)) uploads left their commit for the next run" >&3
}
