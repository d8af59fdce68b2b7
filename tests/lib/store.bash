# shellcheck shell=bash disable=SC2034
# (GIT_HTTP_URL and GIT_HTTP_PID are for the tests that load this file.)
# History stores for the tests: generated batches, bare git remotes, a git
# http server (git http-backend behind lighttpd, with basic auth), and the
# checks that a store reads back cleanly.

# The template every generated record is made from: one compared record.
STORE_TEMPLATE=$FIXTURES/perf-upload/template.jsonl

# gen_records N TAG [MODEL]: N compared records that differ in their
# timestamp and commit, on stdout (text substitution: numbers keep their form).
gen_records() {
	awk -v n="$1" -v tag="$2" -v model="${3:-}" 'NR == 1 {
		for (i = 0; i < n; i++) {
			line = $0
			ts = sprintf("2026-07-%02dT%02d:%02d:%02d+00:00", 1 + int(i / 86400),
			    int(i / 3600) % 24, int(i / 60) % 60, i % 60)
			sub(/"timestamp":"[^"]*"/, "\"timestamp\":\"" ts "\"", line)
			sub(/"commit_sha":"[^"]*"/, "\"commit_sha\":\"" tag "-" i "\"", line)
			if (model != "")
				sub(/"model_id":"[^"]*"/, "\"model_id\":\"" model "\"", line)
			print line
		}
	}' "$STORE_TEMPLATE"
}

# bare_remote DIR: an empty bare repository whose default branch is main,
# accepting pushes over http.
bare_remote() {
	git init -q --bare -b main "$1"
	git -C "$1" config http.receivepack true
}

# remote_files REPO: the record files of the remote's main branch, sorted.
remote_files() {
	git -C "$1" ls-tree -r --name-only main | grep '\.json$' | LC_ALL=C sort
}

# remote_whole REPO: every object the main branch reaches is there.
remote_whole() {
	! git -C "$1" rev-parse -q --verify main >/dev/null && return 0
	local missing
	missing=$(git -C "$1" rev-list --objects --missing=print main | grep '^?') || true
	[ -z "$missing" ] || { echo "$1: main reaches missing objects: $missing" >&2; return 1; }
}

# acknowledged LOG: the store paths perf-upload said it uploaded.
acknowledged() {
	sed -n 's|^uploaded → [^ ]*\(/[^/]*/[^/]*\.json\)$|\1|p' "$1" | sed 's|^/||'
}

# store_reads_clean DIR: every visible file of a directory store is a whole
# record (a JSON object), and no temporary or empty file is visible. (The
# files go to one jq as one stream: a truncated file breaks the stream.)
store_reads_clean() {
	local other
	[ -e "$1" ] || return 0	# not created yet: nothing to see
	other=$(find "$1" -path '*/.*' -prune -o -type f \( ! -name '*.json' -o -empty \) -print)
	[ -z "$other" ] || { echo "unexpected visible files: $other" >&2; return 1; }
	find "$1" -path '*/.*' -prune -o -type f -name '*.json' -print0 |
		xargs -0 -r jq -e -n '[inputs | type == "object"] | all' >/dev/null ||
		{ echo "a visible file of $1 is not a whole record" >&2; return 1; }
}

# racing_git REMOTE RECORDS: writes ./wrap/git, a git that, the first time
# it is asked to push, first has another uploader (its own cache) push
# RECORDS to the git store REMOTE, then goes on; ./raced says it happened.
# Run the program under test with PATH="$PWD/wrap:$PATH".
racing_git() {
	mkdir -p wrap
	cat >wrap/git <<-EOF
		#!/bin/bash
		if [ "\$1" = push ] && [ ! -e "$PWD/raced" ]; then
			: >"$PWD/raced"
			PATH="$PATH" perf-upload -s "$1" --cache "$PWD/racer-cache" -p always "$2" >/dev/null 2>&1
		fi
		exec "$(command -v git)" "\$@"
	EOF
	chmod +x wrap/git
}

lighttpd_or_skip() {
	command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ] ||
		skip "lighttpd is not installed (make deps installs it on Debian)"
}

# answers PORT TAG: the HTTP server on 127.0.0.1:PORT names itself TAG (it
# is ours, not another program's that took the port first).
answers() {
	local line
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'HEAD / HTTP/1.0\r\n\r\n' >&3
	while IFS= read -r -t 5 line <&3; do
		line=${line%$'\r'}
		[ "$line" = "Server: $2" ] && return 0
		[ -n "$line" ] || break
	done
	return 1
}

# git_http_start ROOT PASSWORD: serves the bare repositories under ROOT at
# http://127.0.0.1:PORT/git/NAME, user hf_user with PASSWORD (basic auth),
# through git http-backend. Sets GIT_HTTP_URL and GIT_HTTP_PID.
git_http_start() {
	local root=$1 password=$2 conf port backend tag
	backend=$(git --exec-path)/git-http-backend
	conf=$BATS_TEST_TMPDIR/lighttpd.conf
	printf 'hf_user:%s\n' "$password" >"$BATS_TEST_TMPDIR/users"
	for _ in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 20000))
		tag=perfkite-test-$BASHPID-$RANDOM
		cat >"$conf" <<-EOF
			server.document-root = "$root"
			server.port = $port
			server.bind = "127.0.0.1"
			server.tag = "$tag"
			server.modules = ("mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi")
			server.errorlog = "$BATS_TEST_TMPDIR/lighttpd.log"
			alias.url = ("/git/" => "$backend/")
			\$HTTP["url"] =~ "^/git/" {
				cgi.assign = ("" => "")
				setenv.add-environment = ("GIT_PROJECT_ROOT" => "$root", "GIT_HTTP_EXPORT_ALL" => "1")
				auth.backend = "plain"
				auth.backend.plain.userfile = "$BATS_TEST_TMPDIR/users"
				auth.require = ("" => ("method" => "basic", "realm" => "perf", "require" => "valid-user"))
			}
		EOF
		PATH="$PATH:/usr/sbin" lighttpd -D -f "$conf" 3>&- &
		GIT_HTTP_PID=$!
		for _ in $(seq 300); do
			if (answers "$port" "$tag") 2>/dev/null; then
				GIT_HTTP_URL=http://127.0.0.1:$port/git
				return 0
			fi
			kill -0 "$GIT_HTTP_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$GIT_HTTP_PID" 2>/dev/null || true
		wait "$GIT_HTTP_PID" 2>/dev/null || true
	done
	echo "cannot start lighttpd: $(cat "$BATS_TEST_TMPDIR/lighttpd.log" 2>/dev/null)" >&2
	return 1
}

git_http_stop() {
	[ -n "${GIT_HTTP_PID:-}" ] || return 0
	kill "$GIT_HTTP_PID" 2>/dev/null || true
	wait "$GIT_HTTP_PID" 2>/dev/null || true
	GIT_HTTP_PID=
}
