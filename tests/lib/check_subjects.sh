#!/bin/sh
# Commit subjects of at most 72 characters (git's habit: a subject fits a
# short log line): every commit after BASE, the commit the rule began at,
# on the way to HEAD. Usage: check_subjects.sh BASE [REPO]
# Where BASE is not in the history (an export, a shallow clone), it says so
# and passes: there is nothing it can tell new from old by.
base=${1:?usage: check_subjects.sh BASE [REPO]}
repo=${2:-.}
max=72

if ! git -C "$repo" rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
	echo "check_subjects: $base is not in this history; subjects not checked" >&2
	exit 0
fi
git -C "$repo" log --format='%h %s' "$base..HEAD" | awk -v max="$max" '
	{ s = substr($0, index($0, " ") + 1) }
	length(s) > max {
		printf "commit %s: subject of %d characters, at most %d: %s\n", $1, length(s), max, s
		bad = 1
	}
	END { exit bad }' >&2 || {
	echo "check_subjects: shorten the subjects above (git commit --amend, or rebase -i)" >&2
	exit 1
}
