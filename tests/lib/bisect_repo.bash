# shellcheck shell=bash
# A git repository for perf-bisect: commits 0 .. N on one branch, each
# writing the fake A/B runner's slowdown factor (fixtures/runners/
# ab-runner.sh reads ./ab-factor) and its own number.

# bisect_repo DIR N [AT:FACTOR ...] [broken:K]: commit i runs at the
# FACTOR of the last AT <= i (1 before the first); broken:K puts a file
# "broken" into commit K only (a setup of 'test ! -e broken' fails there).
bisect_repo() {
	local dir=$1 n=$2 i f spec broken=
	shift 2
	git init -q "$dir"
	git -C "$dir" config user.email t@example.com
	git -C "$dir" config user.name "Test Author"
	for spec in "$@"; do
		[ "${spec%%:*}" = broken ] && broken=${spec#broken:}
	done
	for ((i = 0; i <= n; i++)); do
		f=1
		for spec in "$@"; do
			[ "${spec%%:*}" = broken ] && continue
			[ "$i" -ge "${spec%%:*}" ] && f=${spec#*:}
		done
		echo "$f" >"$dir/ab-factor"
		echo "$i" >"$dir/n.txt"
		rm -f "$dir/broken"
		[ "$i" = "$broken" ] && echo yes >"$dir/broken"
		git -C "$dir" add -A
		git -C "$dir" commit -qm "commit $i"
	done
}
