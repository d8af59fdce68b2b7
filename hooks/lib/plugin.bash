# shellcheck shell=bash
# The plugin's options, as the agent passes them: BUILDKITE_PLUGIN_PERFKITE_<NAME>
# for a value, BUILDKITE_PLUGIN_PERFKITE_<NAME>_<i> for each item of a list.
# The hooks are thin: what they do is here, where the tests load it.

plugin_prefix=BUILDKITE_PLUGIN_PERFKITE_
# The options plugin.yml declares, in variable form.
plugin_options=(CONFIGS RESULTS_DIR REPORTS_DIR STORE CACHE_DIR UPLOAD_POLICY RUN_SOURCE
	DASHBOARD_DAYS ANNOTATE ANNOTATE_STYLE ARTIFACTS TELEMETRY_INTERVAL TOKEN_ENV TIMEOUT CPU
	ALLOW_EMPTY CHANGES RULE AB_BASE AB_SETUP AB_PAIRS AB_BAND AB_ONLY)
# The boolean ones, and the values each enumerated one accepts.
plugin_booleans=(ANNOTATE CPU ALLOW_EMPTY AB_ONLY)
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
		--rule:RULE --ab-base:AB_BASE --ab-setup:AB_SETUP --ab-pairs:AB_PAIRS --ab-band:AB_BAND; do
		case ${pair#*:} in
		UPLOAD_POLICY | RUN_SOURCE | CHANGES | RULE) v=$(plugin_enum "${pair#*:}") ;;
		*) v=$(plugin_option "${pair#*:}") ;;
		esac
		[ -z "$v" ] || printf '%s\n' "${pair%%:*}" "$v"
	done
	[ "$(plugin_bool CPU false)" = false ] || echo --cpu
	[ "$(plugin_bool ALLOW_EMPTY false)" = false ] || echo --allow-empty
	[ "$(plugin_bool AB_ONLY false)" = false ] || echo --ab-only
	plugin_list CONFIGS | grep -v '^$' || true
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

# plugin_annotation STATUS: the annotation's body on stdout and its style
# (the option, or from the lane's status) on fd 3; nothing from an earlier
# job: its summary, its note of skipped benchmarks, its dashboard link.
plugin_annotation() {
	local status=$1 reports summary skipped dashboard style link room max=1048576
	reports=$(plugin_reports)
	summary=$(plugin_newest "$reports/annotation.md")
	[ -s "$summary" ] || summary=
	skipped=$(plugin_newest "$reports/skipped.md")
	dashboard=$(plugin_newest "$reports"/dashboard_*.html)
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
	printf '%s' "$style" >&3
	link=
	[ -z "$dashboard" ] || link=$(printf '\n[Dashboard](artifact://%s)\n' "$dashboard")
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
