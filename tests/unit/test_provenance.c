/* Unit tests for prov: run-source inference. */
#include <stdio.h>
#include <string.h>

#include "lane/provenance.h"
#include "tap.h"

int
main(void)
{
	struct provenance_env e;

	memset(&e, 0, sizeof e);
	ok(provenance_pr_truthy("123") && provenance_pr_truthy("FALSE") && provenance_pr_truthy(" "),
	    "PR numbers and other strings are truthy");
	ok(!provenance_pr_truthy(NULL) && !provenance_pr_truthy("") && !provenance_pr_truthy("false") &&
	    !provenance_pr_truthy("0") && !provenance_pr_truthy("None") && !provenance_pr_truthy("none"),
	    "unset, empty, false, 0, None, none are not");

	e.run_source = "local";
	e.pull_request = "123";
	is_str(provenance_infer_run_source(&e, false), "local", "explicit run source wins");
	e.run_source = "  Scheduled_Main ";
	is_str(provenance_infer_run_source(&e, false), "scheduled_main", "trimmed and lower-cased");
	e.run_source = NULL;
	is_str(provenance_infer_run_source(&e, false), "pr", "a PR infers pr");
	e.pull_request = "false";
	e.branch = "main";
	e.test_scope = "full";
	is_str(provenance_infer_run_source(&e, false), "scheduled_main",
	    "main + full infers scheduled_main");
	e.test_scope = "direct";
	is_str(provenance_infer_run_source(&e, false), "local", "no commit infers local");
	e.commit = "";
	is_str(provenance_infer_run_source(&e, false), "local", "an empty commit infers local");
	e.commit = "abc";
	is_str(provenance_infer_run_source(&e, false), "unknown", "otherwise unknown");
	e.run_source = "bogus";
	fprintf(stderr, "# (expect an Invalid PERF_RUN_SOURCE line next)\n");
	is_str(provenance_infer_run_source(&e, true), "unknown", "an invalid value is ignored");
	ok(provenance_run_source_valid("pr") && !provenance_run_source_valid("PR"),
	    "validity is exact");
	return done_testing();
}
