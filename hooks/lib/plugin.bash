# shellcheck shell=bash
# The plugin's options, as the agent passes them: BUILDKITE_PLUGIN_PERFKITE_<NAME>
# for a value, BUILDKITE_PLUGIN_PERFKITE_<NAME>_<i> for each item of a list.
# The hooks are thin: what they do is here, where the tests load it, beside
# the lane's own functions (lane.bash), which perf-lane shares.

# shellcheck source=hooks/lib/lane.bash
. "$(dirname "${BASH_SOURCE[0]}")/lane.bash"

plugin_prefix=BUILDKITE_PLUGIN_PERFKITE_
# The options plugin.yml declares, in variable form.
plugin_options=(CONFIGS RESULTS_DIR REPORTS_DIR STORE CACHE_DIR UPLOAD_POLICY RUN_SOURCE
	DASHBOARD_DAYS ANNOTATE ANNOTATE_STYLE ARTIFACTS TELEMETRY_INTERVAL TOKEN_ENV TIMEOUT CPU
	ALLOW_EMPTY CHANGES RULE DECIDE AB_BASE AB_SETUP AB_PAIRS AB_BAND AB_ONLY SITE SITE_URL
	BISECT)
# The boolean ones, and the values each enumerated one accepts.
plugin_booleans=(ANNOTATE CPU ALLOW_EMPTY DECIDE AB_ONLY BISECT)
declare -A plugin_enums=(
	[UPLOAD_POLICY]="never pass always"
	[RUN_SOURCE]="pr local scheduled_main unknown"
	[ANNOTATE_STYLE]="auto success info warning error"
	[CHANGES]="gate report off"
	[RULE]="reference prediction zscore"
)

# plugin_name NAME: the option as pipeline.yml spells it (UPLOAD_POLICY: upload-policy).
plugin_name() {
	local n=${1,,}
	printf '%s' "${n//_/-}"
}

# plugin_option NAME [DEFAULT]: the value of option NAME, or DEFAULT.
plugin_option() {
	local var=$plugin_prefix$1
	printf '%s' "${!var-${2-}}"
}

# plugin_bool NAME DEFAULT: "true" or "false", as YAML writes a boolean
# (true, True, TRUE); anything else is DEFAULT here, refused by plugin_check.
plugin_bool() {
	local v
	v=$(plugin_option "$1" "$2")
	case ${v,,} in
	true | false) printf '%s' "${v,,}" ;;
	*) printf '%s' "$2" ;;
	esac
}

# plugin_enum NAME [DEFAULT]: the value of an enumerated option, trimmed and
# lower-cased as the lane reads PERF_UPLOAD_POLICY.
plugin_enum() {
	local v
	v=$(plugin_option "$1" "${2-}")
	v=${v#"${v%%[![:space:]]*}"}
	v=${v%"${v##*[![:space:]]}"}
	v=${v,,}
	# YAML 1.1 reads an unquoted off as false: changes: off means off.
	[ "$1" != CHANGES ] || [ "$v" != false ] || v=off
	printf '%s' "$v"
}

# plugin_list NAME: the items of a list option (or its single value), one per line.
plugin_list() {
	local var=$plugin_prefix$1 i=0 item
	if [ -n "${!var+set}" ]; then
		printf '%s\n' "${!var}"
		return
	fi
	while item=$plugin_prefix${1}_$i && [ -n "${!item+set}" ]; do
		printf '%s\n' "${!item}"
		i=$((i + 1))
	done
}

# plugin_check: every BUILDKITE_PLUGIN_PERFKITE_* variable is a declared
# option and every boolean, enumerated or numeric option holds a value it
# accepts; each one that does not is an error naming the plugin option.
plugin_check() {
	local name base known bad=0 o v
	while IFS= read -r name; do
		base=${name#"$plugin_prefix"}
		[[ $base =~ ^(.*)_[0-9]+$ ]] && base=${BASH_REMATCH[1]}
		known=0
		for o in "${plugin_options[@]}"; do
			[ "$o" = "$base" ] && known=1
		done
		if [ "$known" -eq 0 ]; then
			echo "perfkite: unknown plugin option '$(plugin_name "$base")'" >&2
			bad=1
		fi
	done < <(compgen -e | grep "^$plugin_prefix" || true)
	for o in "${plugin_booleans[@]}"; do
		v=$(plugin_option "$o" true)
		case ${v,,} in
		true | false) ;;
		*)
			echo "perfkite: plugin option '$(plugin_name "$o")': expected true or false, not '$v'" >&2
			bad=1 ;;
		esac
	done
	for o in "${!plugin_enums[@]}"; do
		v=$(plugin_enum "$o")
		[ -n "$(plugin_option "$o")" ] || continue
		if [[ " ${plugin_enums[$o]} " != *" $v "* ]]; then
			echo "perfkite: plugin option '$(plugin_name "$o")': expected ${plugin_enums[$o]// /, }, not '$(plugin_option "$o")'" >&2
			bad=1
		fi
	done
	v=$(plugin_option DASHBOARD_DAYS)
	if [ -n "$v" ] && ! [[ $v =~ ^[1-9][0-9]*$ ]]; then
		echo "perfkite: plugin option 'dashboard-days': expected a whole number of days, not '$v'" >&2
		bad=1
	fi
	for o in TELEMETRY_INTERVAL TIMEOUT; do
		v=$(plugin_option "$o")
		if [ -n "$v" ] && { ! [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! [[ $v =~ [1-9] ]]; }; then
			echo "perfkite: plugin option '$(plugin_name "$o")': expected a number of seconds above 0, not '$v'" >&2
			bad=1
		fi
	done
	v=$(plugin_option AB_PAIRS)
	if [ -n "$v" ] && { ! [[ $v =~ ^([0-9]{1,4})(:([0-9]{1,4}))?$ ]] ||
		((10#${BASH_REMATCH[1]} < 2 || 10#${BASH_REMATCH[1]} > 10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}} ||
			10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}} > 1000)); }; then
		echo "perfkite: plugin option 'ab-pairs': expected min:max with 2 <= min <= max <= 1000 (or one number), not '$v'" >&2
		bad=1
	fi
	v=$(plugin_option AB_BAND)
	if [ -n "$v" ] && ! [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		echo "perfkite: plugin option 'ab-band': expected a percent of 0 or more, not '$v'" >&2
		bad=1
	fi
	if [ -z "$(plugin_option AB_BASE)" ]; then
		for o in AB_SETUP AB_PAIRS AB_BAND AB_ONLY; do
			v=$(plugin_option "$o")
			[ -z "$v" ] || { [ "$o" = AB_ONLY ] && [ "${v,,}" = false ]; } && continue
			echo "perfkite: plugin option '$(plugin_name "$o")' needs ab-base" >&2
			bad=1
		done
	fi
	return "$bad"
}

# plugin_reports: the reports directory the lane writes and pre-exit uploads.
plugin_reports() {
	plugin_option REPORTS_DIR "${PERF_REPORTS_DIR:-perf-reports}"
}

# plugin_lane_args: perf-lane's arguments for the plugin's options, one per line.
plugin_lane_args() {
	local pair v
	printf '%s\n' --reports "$(plugin_reports)"
	for pair in --results:RESULTS_DIR --store:STORE --cache:CACHE_DIR \
		--policy:UPLOAD_POLICY --run-source:RUN_SOURCE --days:DASHBOARD_DAYS \
		--telemetry-interval:TELEMETRY_INTERVAL --timeout:TIMEOUT --changes:CHANGES \
		--rule:RULE --ab-base:AB_BASE --ab-setup:AB_SETUP --ab-pairs:AB_PAIRS --ab-band:AB_BAND \
		--site-publish:SITE --site-url:SITE_URL; do
		case ${pair#*:} in
		UPLOAD_POLICY | RUN_SOURCE | CHANGES | RULE) v=$(plugin_enum "${pair#*:}") ;;
		*) v=$(plugin_option "${pair#*:}") ;;
		esac
		[ -z "$v" ] || printf '%s\n' "${pair%%:*}" "$v"
	done
	[ "$(plugin_bool CPU false)" = false ] || echo --cpu
	[ "$(plugin_bool ALLOW_EMPTY false)" = false ] || echo --allow-empty
	[ "$(plugin_bool DECIDE true)" = true ] || echo --no-decide
	[ "$(plugin_bool AB_ONLY false)" = false ] || echo --ab-only
	plugin_list CONFIGS | grep -v '^$' || true
}

# plugin_bisect_change: the change point the bisect was triggered from, a
# perf-changes(1) JSON line: PERF_BISECT_CHANGE (the lane's ready-made
# trigger sets it), else the build's meta-data perf-bisect-change; nothing
# when neither is set.
plugin_bisect_change() {
	local v=${PERF_BISECT_CHANGE:-}
	[ -n "$v" ] || v=$(buildkite-agent meta-data get perf-bisect-change 2>/dev/null) || v=
	printf '%s' "$v"
}

# plugin_bisect_args REPORTS CHANGE: perf-bisect's arguments (its report
# into the reports directory REPORTS) for the plugin's options (the configs
# must be files), the trigger's PERF_BISECT_GOOD, PERF_BISECT_BAD (else the
# build's meta-data perf-bisect-good and perf-bisect-bad, else the change
# point CHANGE's commits), PERF_BISECT_METRIC and PERF_BISECT_SETUP, one per
# line, --good and --bad first; with CHANGE, --from-change, so that the
# bisect takes its metric and cohort (perf-bisect reads CHANGE on standard
# input). Non-zero after saying what is missing.
plugin_bisect_args() {
	local reports=$1 change=$2 configs v good=${PERF_BISECT_GOOD:-} bad=${PERF_BISECT_BAD:-}
	# Else the build's meta-data, as a trigger from a change point sets it.
	[ -n "$good" ] || good=$(buildkite-agent meta-data get perf-bisect-good 2>/dev/null) || good=
	[ -n "$bad" ] || bad=$(buildkite-agent meta-data get perf-bisect-bad 2>/dev/null) || bad=
	if [ -n "$change" ] && { [ -z "$good" ] || [ -z "$bad" ]; }; then
		v=$(jq -er '[.previous.commit_sha, .commit_sha] | select(all(type == "string"))
			| join("\n")' <<<"$change" 2>/dev/null) || {
			echo "perfkite: plugin option 'bisect': the change point it was triggered with is not a perf-changes line" >&2
			return 2
		}
		[ -n "$good" ] || good=${v%%$'\n'*}
		[ -n "$bad" ] || bad=${v#*$'\n'}
	fi
	if [ -z "$good" ] || [ -z "$bad" ]; then
		echo "perfkite: plugin option 'bisect' needs PERF_BISECT_GOOD and PERF_BISECT_BAD" >&2
		return 2
	fi
	configs=$(plugin_list CONFIGS | grep -v '^$' || true)
	if [ -z "$configs" ]; then
		echo "perfkite: plugin option 'bisect' needs configs, the benchmark config files" >&2
		return 2
	fi
	while IFS= read -r v; do
		[ -f "$v" ] && continue
		echo "perfkite: plugin option 'bisect' needs configs to be config files, not '$v'" >&2
		return 2
	done <<<"$configs"
	printf '%s\n' --good "$good" --bad "$bad" -o "$reports/bisect_report.json" --md
	[ -z "$change" ] || echo --from-change
	[ -z "${PERF_BISECT_METRIC:-}" ] || printf '%s\n' --metric "$PERF_BISECT_METRIC"
	[ -z "${PERF_BISECT_SETUP:-}" ] || printf '%s\n' --setup "$PERF_BISECT_SETUP"
	v=$(plugin_option STORE)
	[ -z "$v" ] || printf '%s\n' --store "$v"
	v=$(plugin_option CACHE_DIR)
	[ -z "$v" ] || printf '%s\n' --cache "$v"
	v=$(plugin_option TIMEOUT)
	[ -z "$v" ] || printf '%s\n' --timeout "$v"
	[ "$(plugin_bool CPU false)" = false ] || echo --cpu
	printf '%s\n' "$configs"
}

# plugin_bisect ROOT: the command hook with bisect: true: perf-bisect, its
# progress shown in the job's annotation while it runs
# (plugin_bisect_progress), its table as the annotation pre-exit posts in
# the progress's place, its report among the artifacts; returns its status
# (3: the change did not reproduce).
plugin_bisect() {
	local root=$1 reports out change
	local -a args
	reports=$(plugin_reports)
	change=$(plugin_bisect_change)
	out=$(plugin_bisect_args "$reports" "$change") || return 2
	mapfile -t args <<<"$out"
	mkdir -p "$reports" || return 2
	echo "--- perf-bisect ${args[1]}..${args[3]}"
	# With --md its progress lines are on standard error.
	PATH="$root/bin:$PATH" perf-bisect "${args[@]}" 2>&1 >"$reports/annotation.md" <<<"$change" |
		plugin_bisect_progress "${args[1]}" "${args[3]}"
	return "${PIPESTATUS[0]}"
}

# plugin_bisect_progress GOOD BAD: perf-bisect's progress (its JSON lines
# on standard input, perf-bisect(1)) passed on to standard error as they
# come; after the check of the change and after each probe decided, the
# job's annotation (its context, plugin_context, style info) replaced with
# the progress so far, unless the annotate option is false. pre-exit's
# final table then takes the same context.
# shellcheck disable=SC2016 # the backticks are Markdown's
plugin_bisect_progress() {
	local good=$1 bad=$2 line rounds=0 check='not yet confirmed' rows='' ctx annotate
	local commit verdict n
	ctx=$(plugin_context)
	annotate=$(plugin_bool ANNOTATE true)
	while IFS= read -r line; do
		printf '%s\n' "$line" >&2
		[[ $line =~ ^\{\"event\":\ ?\"([a-z_]+)\" ]] || continue
		case ${BASH_REMATCH[1]} in
		round)
			[[ $line =~ \"round\":\ ?([0-9]+) ]] && rounds=${BASH_REMATCH[1]}
			continue ;;
		reproduced) check='reproduced' ;;
		not_reproduced) check='did not reproduce' ;;
		probe)
			commit='?' verdict='?' n='?'
			[[ $line =~ \"commit\":\ ?\"?([^\",]*) ]] && commit=${BASH_REMATCH[1]}
			[[ $line =~ \"verdict\":\ ?\"([a-z]+)\" ]] && verdict=${BASH_REMATCH[1]}
			[[ $line =~ \"weak\":\ ?true ]] && verdict+=' (weak)'
			[[ $line =~ \"rounds\":\ ?([0-9]+) ]] && n=${BASH_REMATCH[1]}
			rows+="| \`${commit:0:12}\` | $verdict | $n |"$'\n' ;;
		*) continue ;;
		esac
		[ "$annotate" = true ] || continue
		{
			printf '### Bisect in progress: %s..%s\n\n' "${good:0:12}" "${bad:0:12}"
			printf 'Round %s; the change from good to bad: %s.\n' "$rounds" "$check"
			[ -z "$rows" ] ||
				printf '\n| Probe | Behaves as | Rounds |\n|---|---|---|\n%s' "$rows"
		} | buildkite-agent annotate --context "$ctx" --style info ||
			echo "perfkite: could not annotate the build" >&2
	done
}

# plugin_start_job: the environment hook's mark of when the job started,
# exported as PERFKITE_JOB_START (a file whose time is the start), so that
# pre-exit never takes a report an earlier job left for this one's.
plugin_start_job() {
	PERFKITE_JOB_START=$(mktemp "${TMPDIR:-/tmp}/perfkite-job.XXXXXX") || return 1
	export PERFKITE_JOB_START
}

# plugin_fresh FILE: FILE was written during this job (any file, when no
# job start was marked).
plugin_fresh() {
	[ -z "${PERFKITE_JOB_START:-}" ] || [ ! -e "$PERFKITE_JOB_START" ] ||
		[ "$1" -nt "$PERFKITE_JOB_START" ]
}

# plugin_artifacts: the files to upload, one ';'-separated list per glob
# (the artifacts option, else every file under the reports directory),
# only files written during this job.
plugin_artifacts() {
	local g f list restore
	local -a globs=()
	restore=$(shopt -p globstar nullglob)
	while IFS= read -r g; do
		[ -n "$g" ] && globs+=("$g")
	done < <(plugin_list ARTIFACTS)
	[ ${#globs[@]} -gt 0 ] || globs=("$(plugin_reports)/**/*")
	shopt -s globstar nullglob
	for g in "${globs[@]}"; do
		list=
		# shellcheck disable=SC2206 # the glob is meant to expand
		for f in $g; do
			[ -f "$f" ] && plugin_fresh "$f" && list+=${list:+;}$f
		done
		[ -z "$list" ] || printf '%s\n' "$list"
	done
	eval "$restore"
}

# plugin_context: the annotation's context, one per step (its key and its
# label: the jobs of a matrix share the key, their labels carry the matrix
# values) and per parallel job, so that steps never overwrite each other,
# while a retried job replaces its own.
plugin_context() {
	local ctx=perf-summary part
	for part in "${BUILDKITE_STEP_KEY:-}" "${BUILDKITE_LABEL:-}" "${BUILDKITE_PARALLEL_JOB:-}"; do
		part=$(printf '%s' "$part" | tr -cs 'A-Za-z0-9_.-' '-')
		part=${part#-}
		part=${part%-}
		[ -z "$part" ] || ctx+=-$part
	done
	printf '%s' "$ctx"
}

# plugin_newest GLOB...: the last of the files written during this job.
plugin_newest() {
	local f newest=
	for f in "$@"; do
		[ -f "$f" ] && plugin_fresh "$f" && newest=$f
	done
	printf '%s' "$newest"
}

# plugin_style STATUS SUMMARY SKIPPED: the annotation's style: the
# annotate-style option, else from the lane's exit STATUS and what its
# summary (the file SUMMARY) and its note of skipped benchmarks (SKIPPED)
# say; an empty SUMMARY or SKIPPED is none.
plugin_style() {
	local status=$1 summary=$2 skipped=$3 style
	style=$(plugin_enum ANNOTATE_STYLE auto)
	if [ "$style" = auto ]; then
		case $status in
		0) style=success
			grep -q '| CALIBRATION_NEEDED |' "$summary" 2>/dev/null && style=info
			# perf-lane's worse change points, reported (not gated): a warning.
			sed -n '/^## Change points$/,$p' "$summary" 2>/dev/null | grep -q '^| .* | worse ' &&
				style=warning
			# a rolling regression that ab-only let pass: a warning too.
			grep -q '| REGRESSION |' "$summary" 2>/dev/null && style=warning ;;
		1) style=error ;;
		*) style=warning ;;
		esac
		# nothing measured is never a success
		[ -n "$summary" ] || [ -z "$skipped" ] || style=warning
	fi
	printf '%s' "$style"
}

# plugin_annotation_body STATUS SUMMARY SKIPPED LINK [MAX]: the annotation:
# the summary (the file SUMMARY) whole, or cut to whole lines with a line
# saying where the rest is, so that it fits in MAX bytes (1 MiB, what an
# annotation holds) with the note of skipped benchmarks (the file SKIPPED)
# that follows, the dashboard's LINK that ends it, and 200 bytes to spare;
# with neither a summary nor a note, a line saying the lane ended (with
# STATUS) before the rolling comparison. An empty SUMMARY or SKIPPED is none.
plugin_annotation_body() {
	local status=$1 summary=$2 skipped=$3 link=$4 max=${5:-1048576} room
	if [ -n "$summary" ]; then
		room=$((max - ${#link} - 200))
		[ -z "$skipped" ] || room=$((room - $(wc -c <"$skipped") - 1))
		if [ "$(wc -c <"$summary")" -le "$room" ]; then
			cat "$summary"
		else
			# Whole lines only, then where the rest is.
			head -c "$room" "$summary" | sed '$d'
			printf '\n_The summary was cut to fit an annotation; the whole of it is in the perf_*.md artifact._\n'
		fi
		[ -z "$skipped" ] || { echo; cat "$skipped"; }
	elif [ -n "$skipped" ]; then
		cat "$skipped"
	else
		printf '## Performance lane\n\nThe lane ended with status %s before the rolling comparison ran; see the job log' "${status:-unknown}"
		printf ' and the worker logs among the artifacts.\n'
	fi
	printf '%s\n' "$link"
}

# plugin_annotation STATUS: the annotation's body on stdout and its style
# on fd 3, for the lane's exit STATUS; nothing from an earlier job: its
# summary, its note of skipped benchmarks, its dashboard link.
plugin_annotation() {
	local status=$1 reports summary skipped dashboard link
	reports=$(plugin_reports)
	summary=$(plugin_newest "$reports/annotation.md")
	[ -s "$summary" ] || summary=
	skipped=$(plugin_newest "$reports/skipped.md")
	dashboard=$(plugin_newest "$reports"/dashboard_*.html)
	plugin_style "$status" "$summary" "$skipped" >&3
	link=
	[ -z "$dashboard" ] || link=$(printf '\n[Dashboard](artifact://%s)\n' "$dashboard")
	plugin_annotation_body "$status" "$summary" "$skipped" "$link"
}

# plugin_build ROOT: perfkite's programs built in the plugin's checkout ROOT
# (make), when one the lane runs, or perf-seed, is missing.
plugin_build() {
	local root=$1 p missing=0
	for p in "${lane_programs[@]}" perf-seed; do
		[ -x "$root/bin/$p" ] || missing=1
	done
	[ "$missing" -eq 1 ] || return 0
	echo "--- :hammer: building perfkite"
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$root" >&2 || {
		echo "perfkite: the build failed; 'make -C $root deps' installs what it needs" >&2
		return 1
	}
}

# plugin_token: the git store's token (the variable token-env names) as
# HF_TOKEN, the name git is given it by.
plugin_token() {
	local token_env
	token_env=$(plugin_option TOKEN_ENV)
	[ -n "$token_env" ] || return 0
	if [ -z "${!token_env:-}" ]; then
		echo "perfkite: token-env names $token_env, which is not set" >&2
	else
		HF_TOKEN=${!token_env}
		export HF_TOKEN
	fi
}

# plugin_upload TMP: this job's reports uploaded as artifacts and the build
# annotated with its summary (TMP: a scratch directory); globstar and
# nullglob set.
plugin_upload() {
	local tmp=$1 reports status list style
	reports=$(plugin_reports)
	status=${BUILDKITE_COMMAND_EXIT_STATUS:-}
	if [ -z "$(plugin_newest "$reports"/* "$reports"/**/*)" ]; then
		echo "perfkite: no reports of this job in $reports"
		return 0
	fi
	echo "--- :arrow_up: uploading the performance reports"
	while IFS= read -r list; do
		buildkite-agent artifact upload "$list" || echo "perfkite: could not upload $list" >&2
	done < <(plugin_artifacts)

	[ "$(plugin_bool ANNOTATE true)" = true ] || return 0
	{ plugin_annotation "$status" 3>"$tmp/style" >"$tmp/body"; } || true
	style=$(cat "$tmp/style")
	buildkite-agent annotate --context "$(plugin_context)" --style "$style" <"$tmp/body" ||
		echo "perfkite: could not annotate the build" >&2
}

# plugin_pre_exit: the pre-exit hook: the reports uploaded, the build
# annotated, the job's start mark removed; whatever fails, the job's status
# is left as it is.
plugin_pre_exit() {
	local tmp
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfkite-pre-exit.XXXXXX") || return 0
	shopt -s globstar nullglob
	plugin_upload "$tmp"
	shopt -u globstar nullglob
	rm -rf "$tmp"
	[ -z "${PERFKITE_JOB_START:-}" ] || rm -f "$PERFKITE_JOB_START"
}
