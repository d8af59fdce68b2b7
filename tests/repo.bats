#!/usr/bin/env bats
# The repository stands on its own: its pages, templates, comments, tests,
# scripts and benchmarks cite man pages and the documents under doc/, never
# a document that only its authors had (the specifications perfkite was
# written from, their section numbers, or design notes kept elsewhere).
# shellcheck disable=SC2154 # bats sets status, output, lines, stderr

load lib/common

# The repository's files, one a line: the tracked ones, or, outside a git
# checkout, every file but the build's outputs.
repo_files() {
	if git -C "$ROOT_DIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$ROOT_DIR" ls-files
	else
		(cd "$ROOT_DIR" && find . -type f ! -path './build/*' ! -path './.git/*' |
			sed 's|^\./||')
	fi
}

# FILE:LINE: TEXT for each citation of a document the repository does not
# hold, in the files given one a line on stdin (relative to the root).
foreign_citations() {
	local files=$1 hit name
	cd "$ROOT_DIR" || return
	# A document by path under the directories the specifications lived in,
	# or the design notes by name: unless the repository has that file.
	while IFS= read -r hit; do
		name=$(grep -oE '((seeds|reference|shared)/[A-Za-z0-9_./-]*\.md|(DESIGN|STYLE)\.md)' <<<"${hit#*:*:}" | head -1)
		grep -qxF -- "$name" <<<"$files" || echo "$hit"
	done < <(tr '\n' '\0' <<<"$files" | xargs -0 grep -InE \
		'(seeds|reference|shared)/[A-Za-z0-9_./-]*\.md|\b(DESIGN|STYLE)\.md\b' 2>/dev/null)
	# A document whose name has words joined by hyphens (the way the
	# project's documents are named) that no file of the repository has,
	# nor the citing file writes itself (a test's scratch report).
	while IFS= read -r hit; do
		while IFS= read -r name; do
			grep -qE "(^|/)${name//./\\.}$" <<<"$files" && continue
			grep -qE ">[[:space:]]*([^[:space:]]*/)?${name//./\\.}" "${hit%%:*}" && continue
			echo "$hit"
			break
		done < <(grep -oE '[A-Za-z0-9_]+(-[A-Za-z0-9_]+)+\.md\b' <<<"${hit#*:*:}")
	done < <(tr '\n' '\0' <<<"$files" | xargs -0 grep -InE '[A-Za-z0-9_]+(-[A-Za-z0-9_]+)+\.md\b' 2>/dev/null)
	# Section numbers of a document the repository does not have.
	tr '\n' '\0' <<<"$files" | xargs -0 grep -InE \
		"reference('s)? (sections? |§ ?)?[0-9]+(\.[0-9]+)*\b|\bsections? [0-9]+\.[0-9]+|§ ?[0-9]" 2>/dev/null || true
}

@test "nothing cites a document the repository does not hold" {
	local files out
	files=$(repo_files)
	[ -n "$files" ]
	out=$(foreign_citations "$files")
	[ -z "$out" ] || { printf 'cites a document the repository does not hold:\n%s\n' "$out" >&2; return 1; }
}

@test "the citation check finds each kind of foreign citation" {
	local files out s=seeds r=reference h=shared n=DESIGN x=spec
	mkdir -p "$BATS_TEST_TMPDIR/r/doc"
	cd "$BATS_TEST_TMPDIR/r"
	# (Built from parts, so that this file cites nothing itself.)
	echo "/* see $s/plan.md */" >a.c
	echo "# the lane (see $n.md)" >b.sh
	echo ".Pa ../../$h/$r/tracking.md" >c.1
	echo "as in the-original-$x.md" >d.py
	echo "/* the window ($r 5.4) */" >e.c
	echo "# the same, kept here: doc/our-$x.md" >f.sh
	echo '# ours' >"doc/our-$x.md"
	files=$(printf '%s\n' a.c b.sh c.1 d.py e.c f.sh "doc/our-$x.md")
	out=$(ROOT_DIR=$PWD foreign_citations "$files")
	for f in a.c b.sh c.1 d.py e.c; do
		grep -q "^$f:1:" <<<"$out" || { echo "missed $f: $out" >&2; return 1; }
	done
	not grep -q '^f\.sh' <<<"$out"
	not grep -q '^doc/' <<<"$out"
}
