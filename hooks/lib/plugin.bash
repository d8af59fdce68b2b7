# shellcheck shell=bash
# The plugin's options, as the agent passes them: BUILDKITE_PLUGIN_PERFKITE_<NAME>
# for a value, BUILDKITE_PLUGIN_PERFKITE_<NAME>_<i> for each item of a list.

plugin_prefix=BUILDKITE_PLUGIN_PERFKITE_
# The options plugin.yml declares, in variable form.
plugin_options=(CONFIGS RESULTS_DIR REPORTS_DIR STORE CACHE_DIR UPLOAD_POLICY RUN_SOURCE
	DASHBOARD_DAYS ANNOTATE ANNOTATE_STYLE ARTIFACTS TELEMETRY_INTERVAL TOKEN_ENV TIMEOUT CPU
	CHANGES)

# plugin_option NAME [DEFAULT]: the value of option NAME, or DEFAULT.
plugin_option() {
	local var=$plugin_prefix$1
	printf '%s' "${!var-${2-}}"
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
# option; an unknown one (a typo in pipeline.yml) is an error naming it.
plugin_check() {
	local name base known bad=0
	while IFS= read -r name; do
		base=${name#"$plugin_prefix"}
		[[ $base =~ ^(.*)_[0-9]+$ ]] && base=${BASH_REMATCH[1]}
		known=0
		for o in "${plugin_options[@]}"; do
			[ "$o" = "$base" ] && known=1
		done
		if [ "$known" -eq 0 ]; then
			base=${base,,}
			echo "perfkite: unknown plugin option '${base//_/-}'" >&2
			bad=1
		fi
	done < <(compgen -e | grep "^$plugin_prefix" || true)
	return "$bad"
}

# plugin_reports: the reports directory the lane writes and pre-exit uploads.
plugin_reports() {
	plugin_option REPORTS_DIR "${PERF_REPORTS_DIR:-perf-reports}"
}
