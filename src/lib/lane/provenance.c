#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/text.h"
#include "lane/provenance.h"

void
provenance_env_load(struct provenance_env *e)
{
	e->run_source = getenv("PERF_RUN_SOURCE");
	e->pull_request = getenv("BUILDKITE_PULL_REQUEST");
	e->branch = getenv("BUILDKITE_BRANCH");
	e->test_scope = getenv("TEST_SCOPE");
	e->commit = getenv("BUILDKITE_COMMIT");
	e->build_url = getenv("BUILDKITE_BUILD_URL");
	e->build_id = getenv("BUILDKITE_BUILD_ID");
	e->job_id = getenv("BUILDKITE_JOB_ID");
}

bool
provenance_pr_truthy(const char *s)
{
	return s != NULL && *s != '\0' && strcmp(s, "false") != 0 &&
	    strcmp(s, "0") != 0 && strcmp(s, "None") != 0 &&
	    strcmp(s, "none") != 0;
}

bool
provenance_run_source_valid(const char *s)
{
	return strcmp(s, "pr") == 0 || strcmp(s, "local") == 0 ||
	    strcmp(s, "scheduled_main") == 0 || strcmp(s, "unknown") == 0;
}

char *
provenance_strip_lower(const char *s)
{
	size_t n;
	const char *p = text_py_strip(s, &n);
	char *out = estrndup(p, n);

	for (char *q = out; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	return out;
}

const char *
provenance_infer_run_source(const struct provenance_env *e, bool warn)
{
	static const char *names[] = { "pr", "local", "scheduled_main", "unknown" };
	char *v;
	size_t i;

	if (e->run_source != NULL) {
		v = provenance_strip_lower(e->run_source);
		for (i = 0; i < 4; i++)
			if (strcmp(v, names[i]) == 0) {
				free(v);
				return names[i];
			}
		if (warn && *v != '\0') {
			buf b = BUF_INIT;

			text_py_repr(&b, v, strlen(v));
			fprintf(stderr, "Invalid PERF_RUN_SOURCE=%s; inferring run source\n",
			    b.s);
			buf_free(&b);
		}
		free(v);
	}
	if (provenance_pr_truthy(e->pull_request))
		return "pr";
	if (e->branch != NULL && strcmp(e->branch, "main") == 0 &&
	    e->test_scope != NULL && strcmp(e->test_scope, "full") == 0)
		return "scheduled_main";
	if (e->commit == NULL || *e->commit == '\0')
		return "local";
	return "unknown";
}
