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
# What the steps find, by name (see "the steps, in order" below).
declare -gA lane_result=()
# The programs the lane runs (the environment hook has them built).
# shellcheck disable=SC2034 # read by the hooks
lane_programs=(perf-collect perf-gate-static perf-normalize perf-gate-rolling perf-upload
	perf-summarize perf-changes perf-ab perf-site)

# The lane's options (one set, written by bin/perf-lane's option loop, read
# by the steps): configs_dir results reports store cache policy run_source
# days interval timeout runner cpu allow_empty annotate_max changes rule site
# site_url decide ab_base ab_setup ab_pairs ab_band ab_only ab_given operands.

# lane_defaults: the options' defaults, from the variables the reference
# reads (days_from: where days came from, for its complaint: DASHBOARD_DAYS
# when set, even empty, as perf-summarize reads it; --days sets it).
lane_defaults() {
	configs_dir='' results=${PERF_RESULTS_DIR:-results}
	reports=${PERF_REPORTS_DIR:-./perf-reports}
	store=${PERFORMANCE_TRACKING_ROOT:-/tmp/perf-tracking}
	days=30 days_from=--days
	if [ -n "${DASHBOARD_DAYS+set}" ]; then days=$DASHBOARD_DAYS days_from=DASHBOARD_DAYS; fi
	cache='' policy='' run_source='' interval=10 timeout='' runner='' cpu=
	allow_empty=
	annotate_max=1000000 changes=report rule='' site='' decide=1
	site_url=${PERF_SITE_URL:-}
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
		                 [--decide | --no-decide]
		                 [--site-publish dest] [--site-url url]
		                 [--ab-base ref] [--ab-setup command]
		                 [--ab-pairs min:max] [--ab-band percent] [--ab-only]
		                 [config|dir ...]
		       perf-lane --version

		options:
		  -c, --configs dir         the configs directory when none is named (perf-collect(1))
		  -o, --results dir         raw records and worker logs
		  -r, --reports dir         the reports directory (default PERF_REPORTS_DIR)
		  -s, --store store         the history store: a directory or git+URL
		  --cache dir               the cache of a git store (perf-upload(1))
		  -p, --policy never | pass | always  the upload policy (default: by the run's classification)
		  --run-source pr | local | scheduled_main | unknown  override the classification
		  --days n                  days of history on the dashboard
		  --telemetry-interval seconds  seconds between GPU telemetry samples (default 10)
		  -t, --timeout seconds     passed to perf-collect(1)
		  --runner command          passed to perf-collect(1)
		  --cpu                     passed to perf-collect(1)
		  --allow-empty             a lane in which every benchmark was skipped ends with status 0
		  --annotate-max bytes      passed to perf-summarize(1)
		  -h, --help                print usage and exit
		  --version                 print perfkite's version
		  --changes gate | report | off  what worse change points found on a scheduled run on main do
		  --changes-gate            the same as --changes gate
		  --decide, --no-decide     a failed run's annotation ends with the perf-seed accept commands (default), or not
		  --site-publish dest       on scheduled main runs, publish the static site (perf-site(1)) to dest
		  --site-url url            where the site is served: the annotation links the failures' cohort pages (default PERF_SITE_URL)
		  --rule reference | prediction | zscore  passed to perf-gate-rolling(1)
		  --ab-base ref             on pull requests, compare the head with a worktree of ref
		  --ab-setup command        the shell command that builds the base in its worktree
		  --ab-pairs min:max        the A/B's first look and most pairs (default 5:30)
		  --ab-band percent         the A/B's equivalence band
		  --ab-only                 the A/B alone decides the comparison's status where it ran
	EOF
}

# lane_die_usage TEXT: TEXT and the synopsis (no options) on stderr, exit 2.
lane_die_usage() {
	echo "$prog: $*" >&2
	lane_usage | sed '/^$/,$d' >&2
	exit 2
}

# lane_whole N LO HI: N is a whole number (decimal digits) from LO to HI.
lane_whole() {
	[[ $1 =~ ^[0-9]{1,15}$ ]] && ((10#$1 >= $2 && 10#$1 <= $3))
}

# lane_seconds N: N is a number of seconds above 0 (digits, an optional
# fraction), as the plugin takes telemetry-interval and timeout.
lane_seconds() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && [[ $1 =~ [1-9] ]]
}

# lane_check_options: each option holds a value the lane accepts (the
# plugin's rules, and the ranges of the programs it is passed to), else
# usage on stderr and exit 2, naming the option (or DASHBOARD_DAYS), before
# anything runs.
lane_check_options() {
	local lo hi
	case ${policy:-x} in x | never | pass | always) ;; *) lane_die_usage "--policy: expected never, pass or always, not '$policy'" ;; esac
	case $changes in gate | report | off) ;; *) lane_die_usage "--changes: expected gate, report or off, not '$changes'" ;; esac
	case ${run_source:-x} in x | pr | local | scheduled_main | unknown) ;;
	*) lane_die_usage "--run-source: expected pr, local, scheduled_main or unknown, not '$run_source'" ;;
	esac
	# perf-summarize's range: 0 days would be a dashboard of nothing.
	lane_whole "$days" 1 36500 ||
		lane_die_usage "$days_from: expected a whole number of days from 1 to 36500, not '$days'"
	lane_seconds "$interval" ||
		lane_die_usage "--telemetry-interval: expected a number of seconds above 0, not '$interval'"
	[ -z "$timeout" ] || lane_seconds "$timeout" ||
		lane_die_usage "--timeout: expected a number of seconds above 0, not '$timeout'"
	lane_whole "$annotate_max" 1024 1099511627776 ||
		lane_die_usage "--annotate-max: expected a whole number of bytes from 1024 to 1099511627776, not '$annotate_max'"
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
# worker log as Markdown (the artifact relay takes only .md .html .json
# .csv): those this job's perf-collect wrote, by the names it listed
# (--written), never what earlier jobs left in the results directory (a
# copy would get this job's time, and the plugin would upload it as this
# job's). Reads: work ($work/written). Writes nothing.
lane_mirror_reports() {
	local f
	while IFS= read -r f; do
		case $f in
		*.log) [ -f "$f" ] || [ -f "$f.1" ] && mirror_log "$f" "$reports" ;;
		*.json) cp "$f" "$reports"/ 2>/dev/null ;;
		esac
	done <"$work/written"
}

# --- the gates, shared with the pre-push hook --------------------------------

# lane_static OUT RAW...: the raw records of RAW... through their fixed
# thresholds into OUT; perf-gate-static's status. Reads no variable.
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
# Reads: run_source store cache_args (the pre-push hook sets them too).
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
# The steps read the lane's options (above) and hand on what they find in
# one array, lane_result, which lane_start makes: each step's status by its
# name (collect static pytest normalize rolling upload summarize compare
# changes ab; "-" for a step that did not run), measured (0: nothing was
# measured) and nskipped (the benchmarks perf-collect skipped). Beside it
# the steps share only what lane_start sets up: work (the scratch
# directory), cache_args (--cache as arguments) and telemetry_pid (the
# telemetry in the background, which the traps stop). Each step's header
# says what it reads and writes of these; a step given its inputs as
# arguments reads nothing else of lane_result.

# lane_start: the reports directory, the run's classification, the scratch
# directory and the traps that remove it.
# Writes: run_source policy (decided), work telemetry_pid cache_args,
# lane_result (every entry "-", measured 1, nskipped 0).
lane_start() {
	mkdir -p "$reports" || { echo "$prog: $reports: cannot create the reports directory" >&2; exit 2; }
	# DASHBOARD_DAYS too: perf-summarize reads it, and refuses a bad one
	# even where --days is given.
	export PERF_REPORTS_DIR=$reports PERFORMANCE_TRACKING_ROOT=$store DASHBOARD_DAYS=$days
	lane_decide
	export PERF_RUN_SOURCE=$run_source PERF_UPLOAD_POLICY=$policy
	echo "--- perf-lane: run source $run_source, upload policy $policy, store $store, reports $reports"
	lane_store_ready || exit 2
	work=$(mktemp -d "${TMPDIR:-/tmp}/perf-lane.XXXXXX") || exit 2
	telemetry_pid=''
	trap lane_cleanup EXIT
	trap 'lane_cleanup; exit 130' INT
	trap 'lane_cleanup; exit 143' TERM
	cache_args=()
	if [ -n "$cache" ]; then cache_args=(--cache "$cache"); fi
	declare -gA lane_result=([collect]=- [static]=- [pytest]=- [normalize]=- [rolling]=-
		[upload]=- [summarize]=- [compare]=- [changes]=- [ab]=- [measured]=1 [nskipped]=0)
}

# lane_store_ready: a directory store that does not exist yet is made
# (a new project's first run; the reference's sync makes its root too),
# with a line saying so: the programs refuse a store that is not there,
# so the lane is where a directory store begins. A git store is its remote.
lane_store_ready() {
	case $store in '' | git+*) return 0 ;; esac
	[ -e "$store" ] && return 0
	mkdir -p -- "$store" || { echo "$prog: $store: cannot create the store" >&2; return 1; }
	echo "$prog: $store: a new store (it did not exist)" >&2
}

# shellcheck disable=SC2317 # called by the traps
lane_cleanup() {
	lane_telemetry_stop
	rm -rf "$work"
}

# lane_telemetry_start: GPU telemetry in the background: nvidia-smi when
# there is one (every whole second or more: its -l takes no fraction), else
# perf-collect's own (NVML), into the reports directory
# (gpu_telemetry.csv, which lane_finish shows). Writes: telemetry_pid.
lane_telemetry_start() {
	local every=$((10#${interval%.*})) telemetry=$reports/gpu_telemetry.csv
	((every >= 1)) || every=1
	if command -v nvidia-smi >/dev/null 2>&1; then
		nvidia-smi --query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
			--format=csv -l "$every" >"$telemetry" 2>/dev/null &
	else
		perf-collect --telemetry "$telemetry" --interval "$interval" 2>/dev/null &
	fi
	telemetry_pid=$!
}

# lane_telemetry_stop [first]: the telemetry stopped; with first, once its
# first sample is in (a header and a line), waited for up to 2 s while the
# sampler runs, so that a lane over in a moment still shows one. Reads and
# clears telemetry_pid.
lane_telemetry_stop() {
	local i n
	if [ -n "$telemetry_pid" ] && [ "${1:-}" = first ]; then
		for ((i = 0; i < 40; i++)); do
			n=0
			[ ! -f "$reports/gpu_telemetry.csv" ] || n=$(wc -l <"$reports/gpu_telemetry.csv")
			[ "$n" -lt 2 ] || break
			# gone, or a zombie not yet reaped: no sample is coming
			grep -qs '^[0-9]* ([^)]*) [^Z]' "/proc/$telemetry_pid/stat" || break
			sleep 0.05
		done
	fi
	if [ -n "$telemetry_pid" ]; then
		kill "$telemetry_pid" 2>/dev/null
		wait "$telemetry_pid" 2>/dev/null
		telemetry_pid=''
	fi
}

# lane_collect: collect, then the fixed thresholds: together, the
# reference's pytest; then the benchmarks perf-collect skipped (no GPU, too
# few, another GPU type), and whether anything was measured.
# Reads: work. Writes: lane_result[collect static pytest measured nskipped];
# $work/raw.jsonl gated.jsonl skipped written.
lane_collect() {
	local measured=1
	local -a collect_args=()
	echo "--- perf-collect"
	# The files it writes, by name: the only ones mirrored into the reports.
	: >"$work/written"
	collect_args=(--results "$results" --written "$work/written")
	[ -n "$configs_dir" ] && collect_args+=(--configs "$configs_dir")
	[ -n "$timeout" ] && collect_args+=(--timeout "$timeout")
	[ -n "$runner" ] && collect_args+=(--runner "$runner")
	[ -n "$cpu" ] && collect_args+=(--cpu)
	# Its diagnostics are shown as they come and kept, for the skipped ones.
	perf-collect "${collect_args[@]}" "${operands[@]}" 2>&1 >"$work/raw.jsonl" |
		tee "$work/collect.err" >&2
	lane_result[collect]=${PIPESTATUS[0]}
	echo "--- perf-gate-static"
	lane_static "$work/gated.jsonl" "$work/raw.jsonl"
	lane_result[static]=$?
	lane_result[pytest]=${lane_result[collect]}
	[ "${lane_result[pytest]}" -ne 0 ] || lane_result[pytest]=${lane_result[static]}

	# "benchmark_id<TAB>reason" lines. When every one was skipped, nothing
	# was measured: that is not a green lane unless --allow-empty says it
	# may be.
	sed -n 's/^perf-collect: \(.*\): skipped: \(.*\)$/\1\t\2/p' "$work/collect.err" >"$work/skipped"
	lane_result[nskipped]=$(wc -l <"$work/skipped")
	if [ "${lane_result[collect]}" -eq 0 ] && ! grep -q '[^[:space:]]' "$work/raw.jsonl"; then
		measured=0
	fi
	lane_result[measured]=$measured
	write_skipped "$work/skipped" "$measured" "$reports/skipped.md"
}

# lane_compare MEASURED PYTEST_RC: the rolling comparison, only when the
# collection passed (PYTEST_RC 0) or the run uploads whatever happened, and
# something was measured (MEASURED not 0); then the change points, and how
# to seed the benchmarks that need calibration.
# Reads: work cache_args. Writes: lane_result[normalize rolling upload
# summarize compare changes]; $work/compared.jsonl rolling.err.
lane_compare() {
	local measured=$1 pytest_rc=$2 normalize_rc rolling_rc
	local -a statuses=()
	lane_result[normalize]=- lane_result[rolling]=- lane_result[upload]=-
	lane_result[summarize]=- lane_result[compare]=0 lane_result[changes]=-
	: >"$work/compared.jsonl"
	: >"$work/rolling.err"
	if [ "$measured" -eq 0 ]; then
		echo "--- the rolling comparison does not run: nothing was measured"
	elif [ "$pytest_rc" -eq 0 ] || [ "$policy" = always ]; then
		echo "--- perf-gate-rolling, perf-upload, perf-summarize"
		# The rolling gate's words are shown as they come and kept: they
		# name the normalized artifacts it wrote (lane_seed_note). The
		# annotation (not the report, the reference's) ends with the
		# accept commands of the failing rows; seeding is lane_seed_note's.
		{ lane_rolling "$work/rolling.status" "$work/gated.jsonl" "$pytest_rc" \
			--artifacts "$reports/results" ${rule:+--rule "$rule"} 2>&1 >&3 3>&- |
			tee "$work/rolling.err" >&2; } 3>&1 |
			perf-upload --store "$store" "${cache_args[@]}" --policy "$policy" |
			tee "$work/compared.jsonl" |
			perf-summarize --reports-dir "$reports" --annotate-max "$annotate_max" \
				${decide:+--annotate-decide} ${site_url:+--site-url "$site_url"} \
				>"$reports/annotation.md"
		statuses=("${PIPESTATUS[@]}")
		read -r normalize_rc rolling_rc <"$work/rolling.status"
		lane_result[normalize]=$normalize_rc lane_result[rolling]=$rolling_rc
		lane_result[upload]=${statuses[1]} lane_result[summarize]=${statuses[3]}
		lane_result[compare]=$(lane_worst "$normalize_rc" "$rolling_rc" "${statuses[1]}" \
			"${statuses[3]}")
		lane_changes
		lane_seed_note >>"$reports/annotation.md"
		lane_site
		echo
		cat "$reports/annotation.md"
	else
		echo "--- the rolling comparison does not run: the collection failed (status $pytest_rc) and the policy is $policy"
	fi
}

# lane_changes_step: whether this lane looks for change points: on
# scheduled main runs, unless --changes off. Reads no step's result.
lane_changes_step() {
	[ "$run_source" = scheduled_main ] && [ "$changes" != off ]
}

# lane_changes: the change points of this batch's cohorts (perf-changes(1)),
# on scheduled main runs after the upload, as JSON lines for the dashboard
# ($work/changes.jsonl) and as the Markdown table of --md ($work/changes.md,
# from the same run: --md-file); a worse one introduced among the last 10
# records is listed in the annotation (that table) and makes the lane's
# status a warning (the annotation's style), or a failure with --changes
# gate, which the annotation then says.
# Reads: work cache_args, $work/compared.jsonl. Writes:
# lane_result[changes], and lane_result[compare] raised under --changes gate.
# shellcheck disable=SC2016 # the backticks are Markdown's
lane_changes() {
	local last=10 rc
	local -a args
	lane_changes_step || return 0
	echo "--- perf-changes"
	args=(--store "$store" "${cache_args[@]}" --batch "$work/compared.jsonl" --last "$last"
		--md-file "$work/changes.md")
	# One analysis of the store gives both the lines and the table.
	rm -f "$work/changes.md"
	perf-changes "${args[@]}" >"$work/changes.jsonl"
	rc=$?
	lane_result[changes]=$rc
	case $rc in
	0) echo "no worse change point among the last $last records" ;;
	1)
		{
			printf '\n'
			cat "$work/changes.md"
			lane_bisect_trigger
			if [ "$changes" = gate ]; then
				printf '\n**The lane failed because of the worse change points above**'
				printf ' (`--changes gate`, the plugin option `changes: gate`).\n'
			fi
		} >>"$reports/annotation.md"
		echo "$prog: worse change points among the last $last records (see the annotation)" >&2
		[ "$changes" = gate ] && [ "${lane_result[compare]}" -lt 1 ] && lane_result[compare]=1 ;;
	*)
		echo "$prog: perf-changes failed (status $rc)" >&2
		rm -f "$work/changes.jsonl" "$work/changes.md"
		if [ "$changes" = gate ]; then
			lane_result[compare]=2
			{
				printf '\n**The lane failed because perf-changes could not look for change points**'
				printf ' (status %s, `--changes gate`, the plugin option `changes: gate`); see the job log.\n' "$rc"
			} >>"$reports/annotation.md"
		fi ;;
	esac
}

# lane_seed_command WORD...: WORD... as one shell command line, each word
# that the shell would read otherwise in single quotes. Reads no variable.
lane_seed_command() {
	local w line=''
	for w in "$@"; do
		[[ $w =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]] || w="'${w//\'/\'\\\'\'}'"
		line+=${line:+ }$w
	done
	printf '%s\n' "$line"
}

# lane_seed_note: for the benchmarks of this run that need calibration
# (CALIBRATION_NEEDED: no baseline yet), how to seed them (perf-seed(1)):
# from each one's normalized artifact, by the name perf-gate-rolling gave it,
# when this run can seed (a scheduled main run on main with TEST_SCOPE=full
# and no pull request, what perf-seed takes), else which run can. Markdown
# for the annotation on stdout; nothing when no benchmark needs it.
# Reads: work ($work/rolling.err). Writes nothing.
# shellcheck disable=SC2016 # the backticks are Markdown's
lane_seed_note() {
	local path store_shown k=0 staging rationale pr
	local -a need=()
	while IFS= read -r path; do
		grep -q '^  "comparison_status": "CALIBRATION_NEEDED",\?$' "$path" 2>/dev/null && need+=("$path")
	done < <(sed -n 's/^Normalized performance result written to //p' "$work/rolling.err")
	[ ${#need[@]} -gt 0 ] || return 0
	printf '\n### Seeding a baseline\n\n'
	printf '%s benchmark(s) of this run have no baseline (CALIBRATION_NEEDED) and stay so until a reviewed\n' "${#need[@]}"
	printf 'baseline seed is uploaded.'
	if ! lane_seedable "${need[0]}"; then
		printf ' The artifacts of this run cannot seed one: perf-seed takes only those of a scheduled run\n'
		printf 'on main with `TEST_SCOPE=full` and no pull request (this run: run source %s, branch %s,\n' \
			"$(lane_shown "$run_source")" "$(lane_shown "${BUILDKITE_BRANCH-}")"
		pr=''
		[[ ${BUILDKITE_PULL_REQUEST:-} =~ ^[1-9][0-9]*$ ]] && pr=", pull request $BUILDKITE_PULL_REQUEST"
		printf 'TEST_SCOPE %s%s). The annotation of such a run says how to seed from its artifacts.\n' \
			"$(lane_shown "${TEST_SCOPE-}")" "$pr"
		return 0
	fi
	# The store as shown in the commands: without a password in its URL.
	store_shown=$(printf '%s' "$store" | sed 's|://[^/@]*@|://|')
	rationale="first baseline, reviewed${BUILDKITE_BUILD_URL:+ in $BUILDKITE_BUILD_URL}"
	printf ' Once its numbers are reviewed as the baseline, seed each benchmark from its artifact\n'
	printf '(where the store can be written; the artifacts of more scheduled runs of the same benchmark can be\n'
	printf 'added as more `--source-result` options, and the rationale is yours to say):\n\n```sh\n'
	for path in "${need[@]}"; do
		k=$((k + 1))
		staging=perf-seed-staging/$k
		[ -z "${BUILDKITE_BUILD_ID:-}" ] ||
			lane_seed_command buildkite-agent artifact download "$path" . --build "$BUILDKITE_BUILD_ID"
		lane_seed_command perf-seed prepare --source-result "$path" --intent-rationale "$rationale" \
			--store "$store_shown" --staging-root "$staging"
		printf '%s/.seed-reservations/*/manifest\n' \
			"$(lane_seed_command perf-seed upload --store "$store_shown" --confirm "$staging")"
	done
	printf '```\n'
}

# lane_shown VALUE: VALUE in single quotes for a sentence, "unset" when empty.
lane_shown() {
	if [ -n "$1" ]; then printf "'%s'" "$(md_cell "$1")"; else printf unset; fi
}

# lane_seedable ARTIFACT: the normalized ARTIFACT (the reference's
# two-space layout) is from a run perf-seed takes as a source: scheduled
# main, branch main, scope full, no pull request. One read of the file.
lane_seedable() {
	awk '/^  "run_source": "scheduled_main",?$/ { s = 1 }
		/^  "branch": "main",?$/ { b = 1 }
		/^  "test_scope": "full",?$/ { t = 1 }
		/^  "pr_number": "",?$/ { p = 1 }
		END { exit !(s && b && t && p) }' "$1"
}

# lane_site: with --site-publish, on scheduled main runs after the upload,
# the history as a static site (perf-site(1)) with the store's change
# points, published to a directory (replaced whole) or to a branch of a git
# remote, git+URL[#branch] (default gh-pages): perf-site --publish pushes it
# as one commit, force-pushed so that the branch does not grow, through the
# store's git transport (no prompts; the token, HF_TOKEN, by GIT_ASKPASS,
# never on a command line). A site that cannot be made or published is
# reported; the lane's status stays that of its gates.
# Reads: work cache_args. Writes nothing (its status is not the lane's).
lane_site() {
	[ "$run_source" = scheduled_main ] && [ -n "$site" ] || return 0
	local out=$site url branch=gh-pages st=0
	local -a publish=()
	echo "--- perf-site"
	perf-changes --store "$store" "${cache_args[@]}" >"$work/site-changes.jsonl"
	st=$?
	if [ "$st" -gt 1 ]; then
		echo "$prog: perf-changes failed (status $st): the site is not published" >&2
		return 0
	fi
	case $site in git+*) out=$work/site publish=(--publish "$site") ;; esac
	if ! perf-site --store "$store" "${cache_args[@]}" --changes "$work/site-changes.jsonl" \
		-o "$out" "${publish[@]}"; then
		if [ "${#publish[@]}" -gt 0 ] && [ -e "$out/index.html" ]; then
			url=${site#git+}
			case $url in *'#'*) branch=${url##*#} url=${url%#*} ;; esac
			# a password in the URL is never shown
			url=$(sed -E 's#(://[^/:@]*):[^/@]*@#\1:***@#' <<<"$url")
			echo "$prog: the site could not be pushed to $url ($branch)" >&2
		else
			echo "$prog: perf-site failed: the site is not published" >&2
		fi
		return 0
	fi
	echo "site published to $site"
}

# lane_bisect_trigger: after worse change points, the ready-made trigger of
# a bisect (perf-bisect(1), pipeline-templates/bisect.yml) of the last one
# listed that no stored bisect has found the culprit of yet: a trigger step
# of the pipeline PERF_BISECT_PIPELINE (default performance-bisect) for
# buildkite-agent pipeline upload, in a folded block, with the change
# point's commits and the change point itself (PERF_BISECT_CHANGE, so that
# the bisect takes its metric and cohort); nothing when its commits are not
# known. perf-changes writes the change's commit_sha before its previous
# one's.
# Reads: work ($work/changes.jsonl). Writes nothing.
lane_bisect_trigger() {
	local line quoted
	local -a shas
	line=$(grep '"direction":"worse"' "$work/changes.jsonl" | grep -v '"tentative":true' |
		grep -v '"culprit":' | tail -n 1)
	mapfile -t shas < <(grep -oE '"commit_sha":"[0-9a-f]{7,64}"' <<<"$line" | cut -d'"' -f4)
	[ "${#shas[@]}" -eq 2 ] || return 0
	# A YAML single-quoted scalar ('' for '), and $$ for $, which
	# pipeline upload would otherwise interpolate.
	quoted=${line//\'/\'\'}
	quoted=${quoted//\$/\$\$}
	cat <<-EOF

		<details><summary>Find the culprit of the last worse change on one agent (perf-bisect)</summary>

		\`\`\`sh
		buildkite-agent pipeline upload <<'YAML'
		steps:
		  - trigger: ${PERF_BISECT_PIPELINE:-performance-bisect}
		    build:
		      commit: "${shas[0]}"
		      env:
		        PERF_BISECT_GOOD: "${shas[1]}"
		        PERF_BISECT_BAD: "${shas[0]}"
		        PERF_BISECT_CHANGE: '${quoted}'
		YAML
		\`\`\`
		</details>
	EOF
}

# lane_ab MEASURED COLLECT_RC COMPARED: the A/B (perf-ab(1)), with
# --ab-base on pull requests whose benchmarks perf-collect ran (COLLECT_RC
# 0) and measured something (MEASURED not 0): base and head interleaved on
# this agent over the configs measured here. Its table goes above the
# rolling comparison's in annotation.md (when COMPARED is 1: the
# comparison ran and wrote it); the lane's status is the worse of the two,
# or the A/B's alone with --ab-only.
# Reads: work ($work/skipped). Writes: lane_result[ab].
lane_ab() {
	local measured=$1 collect_rc=$2 compared=$3 path id skipped ab_rc
	local -a confs=() check_args=() ab_args=()
	lane_result[ab]=-
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
	lane_result[ab]=$ab_rc
	if [ "$ab_rc" -gt 1 ] || ! [ -s "$work/ab.md" ]; then
		printf '### A/B: head against base\n\nperf-ab could not compare head with %s (status %s); see the job log.\n' \
			"$(md_cell "$ab_base")" "$ab_rc" >"$work/ab.md"
	fi
	# The A/B's table first, then what the rolling comparison wrote.
	{
		cat "$work/ab.md"
		[ "$compared" != 1 ] || ! [ -s "$reports/annotation.md" ] ||
			{ echo; cat "$reports/annotation.md"; }
	} >"$work/annotation.md" && mv "$work/annotation.md" "$reports/annotation.md"
	echo
	cat "$work/ab.md"
}

# lane_dashboard: the dashboard (its failure is ignored), with the change
# points this lane found. Reads: work cache_args. Writes nothing.
lane_dashboard() {
	local sha dashboard
	local -a changes_args
	echo "--- dashboard"
	sha=${BUILDKITE_COMMIT-unknown}	# the reference's name: empty when set but empty
	dashboard=$reports/dashboard_${sha:0:7}_$(date +%Y%m%d_%H%M%S).html
	# (No reports directory and no step summary: the Markdown report of the
	# run was written once, above.)
	# The change points this lane found are drawn on their charts.
	changes_args=()
	if [ -s "$work/changes.jsonl" ]; then changes_args=(--changes "$work/changes.jsonl"); fi
	if PERF_REPORTS_DIR='' GITHUB_STEP_SUMMARY='' perf-summarize --html "$dashboard" \
		--store "$store" "${cache_args[@]}" --days "$days" "${changes_args[@]}" "$work/compared.jsonl" >/dev/null; then
		echo "dashboard: $dashboard"
	else
		echo "$prog: the dashboard failed (ignored)" >&2
	fi
}

# lane_finish: the telemetry stopped and shown, what was not measured said,
# the steps' statuses summed up; the lane's exit status.
# Reads: work telemetry_pid, lane_result (all of it). Writes nothing.
lane_finish() {
	local status steps
	local -n r=lane_result
	lane_telemetry_stop first
	echo "--- GPU telemetry (clocks.sm vs clocks.max.sm reveals capped hosts) ---"
	cat "$reports/gpu_telemetry.csv" 2>/dev/null
	status=$(lane_status "${r[pytest]}" "${r[compare]}" "${r[ab]}" "$ab_only" "${r[measured]}" \
		"$allow_empty")
	if [ "${r[measured]}" -eq 0 ]; then
		if [ "${r[nskipped]}" -gt 0 ]; then
			echo "$prog: nothing was measured: ${r[nskipped]} skipped ($(cut -f2 "$work/skipped" |
				awk '!seen[$0]++ { printf "%s%s", n++ ? "; " : "", $0 }'))" >&2
		else
			echo "$prog: nothing was measured: no benchmark ran" >&2
		fi
	fi
	steps="collect ${r[collect]}, static ${r[static]}, normalize ${r[normalize]}"
	steps+=", rolling ${r[rolling]}, upload ${r[upload]}, summarize ${r[summarize]}"
	! lane_changes_step || steps+=", changes ${r[changes]}"
	[ -z "$ab_base" ] || steps+=", ab ${r[ab]}"
	echo "$prog: $steps: exit $status" >&2
	return "$status"
}

# lane_main: the lane, its options read and checked: every step runs and
# its status is kept in lane_result; the lane's status is decided at the end.
lane_main() {
	local compared
	lane_start
	lane_telemetry_start
	lane_collect
	lane_compare "${lane_result[measured]}" "${lane_result[pytest]}"
	compared=0
	[ "${lane_result[normalize]}" = - ] || compared=1
	lane_ab "${lane_result[measured]}" "${lane_result[collect]}" "$compared"
	lane_dashboard
	lane_mirror_reports
	lane_finish
}
