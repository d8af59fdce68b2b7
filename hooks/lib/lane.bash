# shellcheck shell=bash
# The performance lane (perf-lane(1)) in functions: the run's
# classification, the checks of its options, its steps, the reports it
# mirrors and its outcome. bin/perf-lane reads the options and calls
# lane_main; the pre-push hook (pipeline-templates/pre-push) sources
# bin/perf-lane for lane_defaults, lane_static and lane_rolling; the plugin's
# hooks (plugin.bash) for lane_programs; tests/lane-lib.bats calls the
# functions one by one. Sourcing it runs nothing.

# shellcheck source=hooks/lib/python.bash
. "$(dirname "${BASH_SOURCE[0]}")/python.bash"

prog=perf-lane
# The programs the lane runs (the environment hook has them built).
# shellcheck disable=SC2034 # read by the hooks
lane_programs=(perf-collect perf-gate-static perf-normalize perf-gate-rolling perf-upload
	perf-summarize perf-changes perf-ab)

# The lane's options (one set, written by bin/perf-lane's option loop, read
# by the steps): configs_dir results reports store cache policy run_source
# days interval timeout runner cpu allow_empty annotate_max changes rule
# decide ab_base ab_setup ab_pairs ab_band ab_only ab_given operands.

# lane_defaults: the options' defaults, from the variables the reference
# reads.
lane_defaults() {
	configs_dir='' results=${PERF_RESULTS_DIR:-results}
	reports=${PERF_REPORTS_DIR:-./perf-reports}
	store=${PERFORMANCE_TRACKING_ROOT:-/tmp/perf-tracking}
	cache='' policy='' run_source='' days=${DASHBOARD_DAYS:-30} interval=10 timeout='' runner='' cpu=
	allow_empty=
	annotate_max=1000000 changes=report rule='' decide=
	ab_base='' ab_setup='' ab_pairs='' ab_band='' ab_only='' ab_given=''
	operands=()
}

lane_usage() {
	cat <<-EOF
		usage: perf-lane [-c configs-dir] [-o results-dir] [-r reports-dir]
		                 [-s store] [--cache dir] [-p never|pass|always]
		                 [--run-source pr|local|scheduled_main|unknown]
		                 [--days n] [--telemetry-interval seconds] [-t seconds]
		                 [--runner command] [--cpu] [--allow-empty]
		                 [--annotate-max bytes] [--changes gate|report|off]
		                 [--changes-gate] [--rule reference|prediction|zscore]
		                 [--decide]
		                 [--ab-base ref] [--ab-setup command]
		                 [--ab-pairs min:max] [--ab-band percent] [--ab-only]
		                 [config|dir ...]
		       perf-lane --version
	EOF
}

lane_die_usage() {
	echo "$prog: $*" >&2
	lane_usage >&2
	exit 2
}

# lane_check_options: each option holds a value the lane accepts, else
# usage on stderr and exit 2, before anything runs.
lane_check_options() {
	local n lo hi
	case ${policy:-x} in x | never | pass | always) ;; *) lane_die_usage "--policy: expected never, pass or always, not '$policy'" ;; esac
	case $changes in gate | report | off) ;; *) lane_die_usage "--changes: expected gate, report or off, not '$changes'" ;; esac
	case ${run_source:-x} in x | pr | local | scheduled_main | unknown) ;;
	*) lane_die_usage "--run-source: expected pr, local, scheduled_main or unknown, not '$run_source'" ;;
	esac
	for n in "$days" "$interval" "$annotate_max" ${timeout:+"$timeout"}; do
		[[ $n =~ ^[0-9]+(\.[0-9]+)?$ ]] || lane_die_usage "not a number: '$n'"
	done
	case ${rule:-x} in x | reference | prediction | zscore) ;;
	*) lane_die_usage "--rule: expected reference, prediction or zscore, not '$rule'" ;;
	esac
	if [ -z "$ab_base" ] && [ -n "$ab_given" ]; then
		ab_given=${ab_given# }
		lane_die_usage "${ab_given%% *} needs --ab-base"
	fi
	if [ -n "$ab_pairs" ]; then
		lo=0 hi=0
		if [[ $ab_pairs =~ ^([0-9]{1,4})(:([0-9]{1,4}))?$ ]]; then
			lo=$((10#${BASH_REMATCH[1]})) hi=$((10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}))
		fi
		((lo >= 2 && lo <= hi && hi <= 1000)) ||
			lane_die_usage "--ab-pairs: expected min:max with 2 <= min <= max <= 1000 (or one number), not '$ab_pairs'"
	fi
	[ -z "$ab_band" ] || [[ $ab_band =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
		lane_die_usage "--ab-band: expected a percent of 0 or more, not '$ab_band'"
}

# --- classification ---------------------------------------------------------

# lane_classify: "RUN_SOURCE POLICY", what kind of run this is by the
# Buildkite variables (perf-lane(1), first match wins).
lane_classify() {
	local pr=${BUILDKITE_PULL_REQUEST:-false}
	if [[ $pr =~ ^[1-9][0-9]*$ ]]; then
		echo "pr pass"
	elif [ "${BUILDKITE_BRANCH:-}" = main ] &&
		{ [ "${BUILDKITE_SOURCE:-}" = schedule ] || [ "${TEST_SCOPE:-}" = full ]; }; then
		echo "scheduled_main always"
	elif [ "${TEST_SCOPE:-}" = direct ]; then
		echo "unknown pass"
	else
		echo "unknown never"
	fi
}

# lane_env_policy VALUE: PERF_UPLOAD_POLICY's VALUE as the reference reads
# it: trimmed and lower-cased; an invalid one warned about and taken as
# never; empty, empty (the classification's then).
lane_env_policy() {
	local p
	p=$(py_strip_lower "$1")
	case $p in
	'' | never | pass | always) ;;
	*)
		echo "Invalid PERF_UPLOAD_POLICY=$(py_repr "$p"); using 'never'" >&2
		p=never ;;
	esac
	printf '%s' "$p"
}

# lane_decide: run_source and policy: an option, then PERF_RUN_SOURCE /
# PERF_UPLOAD_POLICY, then the classification's.
lane_decide() {
	local class_source class_policy
	read -r class_source class_policy < <(lane_classify)
	run_source=${run_source:-${PERF_RUN_SOURCE:-$class_source}}
	if [ -z "$policy" ] && [ -n "${PERF_UPLOAD_POLICY:-}" ]; then
		policy=$(lane_env_policy "$PERF_UPLOAD_POLICY")
	fi
	policy=${policy:-$class_policy}
}

# --- outcome -----------------------------------------------------------------

# lane_worst STATUS...: the worst of the steps' statuses: 2 (a step could not
# do its job) over 1 (a gate failed) over 0.
lane_worst() {
	local s worst=0
	for s in "$@"; do
		[ "$s" -gt "$worst" ] && worst=$s
	done
	printf '%s\n' "$worst"
}

# lane_status COLLECT COMPARE AB AB_ONLY MEASURED ALLOW_EMPTY: the lane's
# exit status: the collection's (the reference's pytest: perf-collect, then
# the fixed thresholds) when it failed, else the comparison's, or the A/B's
# (AB, "-" when it did not run) when worse or with AB_ONLY set; 2 when
# MEASURED is 0, unless ALLOW_EMPTY is set.
lane_status() {
	local status=$1 compare=$2 ab=$3 ab_only=$4 measured=$5 allow_empty=$6
	if [ "$status" -eq 0 ]; then
		status=$compare
		if [ "$ab" != - ]; then
			if [ -n "$ab_only" ] || [ "$ab" -gt "$status" ]; then
				status=$ab
			fi
		fi
	fi
	[ "$measured" -ne 0 ] || [ -n "$allow_empty" ] || status=2
	printf '%s\n' "$status"
}

# --- reports -----------------------------------------------------------------

# md_cell TEXT: TEXT as a Markdown table cell (pipes escaped).
md_cell() {
	local t=${1//\\/\\\\}
	printf '%s' "${t//|/\\|}"
}

# write_skipped LIST MEASURED FILE: the Markdown note of the skipped
# benchmarks (LIST: "benchmark_id<TAB>reason" lines) that pre-exit adds to
# the annotation; when MEASURED is 0 it says that nothing was measured.
# No skipped benchmark and something measured: no note.
write_skipped() {
	local list=$1 measured=$2 file=$3 n id reason
	n=$(wc -l <"$list")
	rm -f "$file"
	[ "$n" -gt 0 ] || [ "$measured" -eq 0 ] || return 0
	{
		if [ "$measured" -eq 0 ]; then
			printf '## Performance lane: nothing was measured\n\n'
			printf 'Every benchmark was skipped (%s); no result was compared or stored.\n' "$n"
		else
			printf '### Skipped benchmarks\n\n%s benchmark(s) did not run on this agent.\n' "$n"
		fi
		if [ "$n" -gt 0 ]; then
			printf '\n| Benchmark | Why it was skipped |\n|---|---|\n'
			while IFS=$'\t' read -r id reason; do
				printf '| %s | %s |\n' "$(md_cell "$id")" "$(md_cell "$reason")"
			done <"$list"
		fi
	} >"$file.tmp" && mv "$file.tmp" "$file"
}

# mirror_log LOG DIR: DIR/<name>.md, a heading and a fenced block holding
# the rotated LOG.1 then LOG; runs of three or more backticks are escaped so
# that no log line can close the fence.
mirror_log() {
	local log=$1 name md
	name=$(basename "$log" .log)
	md=$2/$name.md
	{
		printf '# Worker log %s\n\n```\n' "$name"
		cat "$log.1" "$log" 2>/dev/null | awk '{
			out = ""
			while (match($0, /```+/)) {
				run = ""
				for (i = 0; i < RLENGTH; i++)
					run = run "\\`"
				out = out substr($0, 1, RSTART - 1) run
				$0 = substr($0, RSTART + RLENGTH)
			}
			print out $0
		}'
		printf '```\n'
	} >"$md.tmp" && mv "$md.tmp" "$md"
}

# lane_mirror_reports: into the reports directory, the raw records and each
# worker log as Markdown (the artifact relay takes only .md .html .json .csv).
lane_mirror_reports() {
	local log
	cp "$results"/perf_*.json "$reports"/ 2>/dev/null
	for log in "$results"/worker_logs/worker_*.log; do
		[ -f "$log" ] || [ -f "$log.1" ] || continue
		mirror_log "$log" "$reports"
	done
}

# --- the gates, shared with the pre-push hook --------------------------------

# lane_static OUT RAW...: the raw records of RAW... through their fixed
# thresholds into OUT; perf-gate-static's status.
lane_static() {
	local out=$1
	shift
	perf-gate-static --tail "$@" >"$out"
}

# lane_rolling STATUSES GATED COLLECT_RC [ARG...]: the gated records of
# GATED normalized as a $run_source run and compared with the rolling
# baseline of $store (perf-gate-rolling's ARGs added), on stdout; the two
# statuses written to the file STATUSES as "normalize rolling"; the
# pipeline's status (the last that failed).
lane_rolling() {
	local statuses=$1 gated=$2 collect_rc=$3
	local -a rc
	shift 3
	perf-normalize --run-source "$run_source" "$gated" |
		perf-gate-rolling --store "$store" "${cache_args[@]}" --collect-rc "$collect_rc" "$@"
	rc=("${PIPESTATUS[@]}")
	printf '%s %s\n' "${rc[0]}" "${rc[1]}" >"$statuses"
	[ "${rc[1]}" -ne 0 ] && return "${rc[1]}"
	return "${rc[0]}"
}

# --- the steps, in order -------------------------------------------------------
# They share the lane's state: work (a scratch directory), telemetry_pid,
# cache_args, and each step's status (collect_rc static_rc pytest_rc
# normalize_rc rolling_rc upload_rc summarize_rc compare_rc changes_rc
# ab_rc, "-" for a step that did not run), measured and nskipped.

# lane_start: the reports directory, the run's classification, the scratch
# directory and the traps that remove it.
lane_start() {
	mkdir -p "$reports" || { echo "$prog: $reports: cannot create the reports directory" >&2; exit 2; }
	export PERF_REPORTS_DIR=$reports PERFORMANCE_TRACKING_ROOT=$store
	lane_decide
	export PERF_RUN_SOURCE=$run_source PERF_UPLOAD_POLICY=$policy
	echo "--- perf-lane: run source $run_source, upload policy $policy, store $store, reports $reports"
	work=$(mktemp -d "${TMPDIR:-/tmp}/perf-lane.XXXXXX") || exit 2
	telemetry_pid=''
	trap lane_cleanup EXIT
	trap 'lane_cleanup; exit 130' INT
	trap 'lane_cleanup; exit 143' TERM
	cache_args=()
	if [ -n "$cache" ]; then cache_args=(--cache "$cache"); fi
}

# shellcheck disable=SC2317 # called by the traps
lane_cleanup() {
	lane_telemetry_stop
	rm -rf "$work"
}

# lane_telemetry_start: GPU telemetry in the background: nvidia-smi when
# there is one, else perf-collect's own (NVML), into the reports directory.
lane_telemetry_start() {
	telemetry=$reports/gpu_telemetry.csv
	if command -v nvidia-smi >/dev/null 2>&1; then
		nvidia-smi --query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
			--format=csv -l "${interval%.*}" >"$telemetry" 2>/dev/null &
	else
		perf-collect --telemetry "$telemetry" --interval "$interval" 2>/dev/null &
	fi
	telemetry_pid=$!
}

lane_telemetry_stop() {
	if [ -n "$telemetry_pid" ]; then
		kill "$telemetry_pid" 2>/dev/null
		wait "$telemetry_pid" 2>/dev/null
		telemetry_pid=''
	fi
}

# lane_collect: collect, then the fixed thresholds: together, the
# reference's pytest (pytest_rc); then the benchmarks perf-collect skipped
# (no GPU, too few, another GPU type), and whether anything was measured.
lane_collect() {
	local -a collect_args=()
	echo "--- perf-collect"
	collect_args=(--results "$results")
	[ -n "$configs_dir" ] && collect_args+=(--configs "$configs_dir")
	[ -n "$timeout" ] && collect_args+=(--timeout "$timeout")
	[ -n "$runner" ] && collect_args+=(--runner "$runner")
	[ -n "$cpu" ] && collect_args+=(--cpu)
	# Its diagnostics are shown as they come and kept, for the skipped ones.
	perf-collect "${collect_args[@]}" "${operands[@]}" 2>&1 >"$work/raw.jsonl" |
		tee "$work/collect.err" >&2
	collect_rc=${PIPESTATUS[0]}
	echo "--- perf-gate-static"
	lane_static "$work/gated.jsonl" "$work/raw.jsonl"
	static_rc=$?
	pytest_rc=$collect_rc
	[ "$pytest_rc" -ne 0 ] || pytest_rc=$static_rc

	# "benchmark_id<TAB>reason" lines. When every one was skipped, nothing
	# was measured: that is not a green lane unless --allow-empty says it
	# may be.
	sed -n 's/^perf-collect: \(.*\): skipped: \(.*\)$/\1\t\2/p' "$work/collect.err" >"$work/skipped"
	nskipped=$(wc -l <"$work/skipped")
	measured=1
	if [ "$collect_rc" -eq 0 ] && ! grep -q '[^[:space:]]' "$work/raw.jsonl"; then
		measured=0
	fi
	write_skipped "$work/skipped" "$measured" "$reports/skipped.md"
}

# lane_compare: the rolling comparison, only when the collection passed or
# the run uploads whatever happened, and something was measured; then the
# change points.
lane_compare() {
	local -a statuses=()
	normalize_rc=- rolling_rc=- upload_rc=- summarize_rc=- compare_rc=0 changes_rc=-
	: >"$work/compared.jsonl"
	if [ "$measured" -eq 0 ]; then
		echo "--- the rolling comparison does not run: nothing was measured"
	elif [ "$pytest_rc" -eq 0 ] || [ "$policy" = always ]; then
		echo "--- perf-gate-rolling, perf-upload, perf-summarize"
		lane_rolling "$work/rolling.status" "$work/gated.jsonl" "$pytest_rc" \
			--artifacts "$reports/results" ${rule:+--rule "$rule"} |
			perf-upload --store "$store" "${cache_args[@]}" --policy "$policy" |
			tee "$work/compared.jsonl" |
			perf-summarize --reports-dir "$reports" --annotate-max "$annotate_max" \
				${decide:+--decide} >"$reports/annotation.md"
		statuses=("${PIPESTATUS[@]}")
		read -r normalize_rc rolling_rc <"$work/rolling.status"
		upload_rc=${statuses[1]} summarize_rc=${statuses[3]}
		compare_rc=$(lane_worst "$normalize_rc" "$rolling_rc" "$upload_rc" "$summarize_rc")
		lane_changes
		echo
		cat "$reports/annotation.md"
	else
		echo "--- the rolling comparison does not run: the collection failed (status $pytest_rc) and the policy is $policy"
	fi
}

# lane_changes: the change points of this batch's cohorts (perf-changes(1)),
# on scheduled main runs after the upload: a worse one introduced among the
# last $changes_last records is listed in the annotation and makes the
# lane's status a warning (the annotation's style), or a failure with
# --changes gate.
changes_last=10
lane_changes() {
	[ "$run_source" = scheduled_main ] && [ "$changes" != off ] || return 0
	echo "--- perf-changes"
	perf-changes --store "$store" "${cache_args[@]}" --batch "$work/compared.jsonl" \
		--last "$changes_last" --md >"$work/changes.md"
	changes_rc=$?
	case $changes_rc in
	0) echo "no worse change point among the last $changes_last records" ;;
	1)
		printf '\n' >>"$reports/annotation.md"
		cat "$work/changes.md" >>"$reports/annotation.md"
		echo "$prog: worse change points among the last $changes_last records (see the annotation)" >&2
		[ "$changes" = gate ] && [ "$compare_rc" -lt 1 ] && compare_rc=1 ;;
	*)
		echo "$prog: perf-changes failed (status $changes_rc)" >&2
		[ "$changes" = gate ] && compare_rc=2 ;;
	esac
}

# lane_ab: the A/B (perf-ab(1)), with --ab-base on pull requests whose
# benchmarks perf-collect ran: base and head interleaved on this agent over
# the configs measured here. Its table goes above the rolling comparison's
# in annotation.md; the lane's status is the worse of the two, or the A/B's
# alone with --ab-only.
lane_ab() {
	local path id skipped
	local -a confs=() check_args=() ab_args=()
	ab_rc=-
	[ -n "$ab_base" ] || return 0
	if [ "$run_source" != pr ]; then
		echo "--- the A/B does not run: the run source is $run_source, not pr"
		return 0
	elif [ "$measured" -eq 0 ] || [ "$collect_rc" -ne 0 ]; then
		echo "--- the A/B does not run: the collection failed (status $collect_rc) or measured nothing"
		return 0
	fi
	echo "--- perf-ab against $ab_base"
	# The configs perf-collect lists, less those it skipped on this agent.
	[ -n "$configs_dir" ] && check_args+=(--configs "$configs_dir")
	skipped=$(cut -f1 "$work/skipped")
	while IFS=$'\t' read -r path id _; do
		grep -qxF -- "$id" <<<"$skipped" || confs+=("$path")
	done < <(perf-collect --check "${check_args[@]}" "${operands[@]}" 2>/dev/null)
	ab_args=(--base-ref "$ab_base" --head . -o "$reports/ab_report.json" --md)
	[ -n "$ab_setup" ] && ab_args+=(--setup "$ab_setup")
	[ -n "$ab_pairs" ] && ab_args+=(--pairs "$ab_pairs")
	[ -n "$ab_band" ] && ab_args+=(--band "$ab_band")
	[ -n "$cpu" ] && ab_args+=(--cpu)
	[ -n "$timeout" ] && ab_args+=(--timeout "$timeout")
	[ -n "$runner" ] && ab_args+=(--runner "$runner")
	perf-ab "${ab_args[@]}" -- "${confs[@]}" >"$work/ab.md"
	ab_rc=$?
	if [ "$ab_rc" -gt 1 ] || ! [ -s "$work/ab.md" ]; then
		printf '### A/B: head against base\n\nperf-ab could not compare head with %s (status %s); see the job log.\n' \
			"$(md_cell "$ab_base")" "$ab_rc" >"$work/ab.md"
	fi
	# The A/B's table first, then what the rolling comparison wrote.
	{
		cat "$work/ab.md"
		[ "$normalize_rc" = - ] || ! [ -s "$reports/annotation.md" ] ||
			{ echo; cat "$reports/annotation.md"; }
	} >"$work/annotation.md" && mv "$work/annotation.md" "$reports/annotation.md"
	echo
	cat "$work/ab.md"
}

# lane_dashboard: the dashboard (its failure is ignored).
lane_dashboard() {
	local sha dashboard
	echo "--- dashboard"
	sha=${BUILDKITE_COMMIT-unknown}	# the reference's name: empty when set but empty
	dashboard=$reports/dashboard_${sha:0:7}_$(date +%Y%m%d_%H%M%S).html
	# (No reports directory and no step summary: the Markdown report of the
	# run was written once, above.)
	if PERF_REPORTS_DIR='' GITHUB_STEP_SUMMARY='' perf-summarize --html "$dashboard" --store "$store" \
		"${cache_args[@]}" --days "$days" "$work/compared.jsonl" >/dev/null; then
		echo "dashboard: $dashboard"
	else
		echo "$prog: the dashboard failed (ignored)" >&2
	fi
}

# lane_finish: the telemetry stopped and shown, what was not measured said,
# the steps' statuses summed up; the lane's exit status.
lane_finish() {
	local status
	lane_telemetry_stop
	echo "--- GPU telemetry (clocks.sm vs clocks.max.sm reveals capped hosts) ---"
	cat "$telemetry" 2>/dev/null
	status=$(lane_status "$pytest_rc" "$compare_rc" "$ab_rc" "$ab_only" "$measured" "$allow_empty")
	if [ "$measured" -eq 0 ]; then
		if [ "$nskipped" -gt 0 ]; then
			echo "$prog: nothing was measured: $nskipped skipped ($(cut -f2 "$work/skipped" |
				awk '!seen[$0]++ { printf "%s%s", n++ ? "; " : "", $0 }'))" >&2
		else
			echo "$prog: nothing was measured: no benchmark ran" >&2
		fi
	fi
	echo "$prog: collect $collect_rc, static $static_rc, normalize $normalize_rc, rolling $rolling_rc, upload $upload_rc, summarize $summarize_rc${ab_base:+, ab $ab_rc}: exit $status" >&2
	return "$status"
}

# lane_main: the lane, its options read and checked: every step runs and
# its status is kept; the lane's status is decided at the end.
lane_main() {
	lane_start
	lane_telemetry_start
	lane_collect
	lane_compare
	lane_ab
	lane_dashboard
	lane_mirror_reports
	lane_finish
}
