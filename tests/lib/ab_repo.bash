# shellcheck shell=bash
# Git repositories for the A/B (perf-ab --base-ref, perf-lane --ab-base,
# the plugin's ab-base) over the fake A/B runner (fixtures/runners/
# ab-runner.sh), which reads its slowdown factor from ./ab-factor.

# ab_git_repo DIR FACTOR: DIR, a git repository whose base commit (HEAD~1)
# runs the fake A/B runner at factor 1 and whose head commit at FACTOR.
ab_git_repo() {
	git init -q "$1"
	git -C "$1" config user.email t@example.com
	git -C "$1" config user.name t
	echo 1 >"$1/ab-factor"
	git -C "$1" add ab-factor
	git -C "$1" commit -qm base
	echo "$2" >"$1/ab-factor"
	echo head >"$1/head.txt"
	git -C "$1" add ab-factor head.txt
	git -C "$1" commit -qm head
}

# ab_repo FACTOR: ./repo (ab_git_repo), then the current directory, as a
# lane runs in a checkout; TMPDIR is ./tmp, to see that nothing is left there.
ab_repo() {
	ab_git_repo repo "$1"
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	cd repo || return 1
}
