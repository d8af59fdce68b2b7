/* Unit tests for seed: truthiness, provenance, paths, order, the seed's keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "lane/seed.h"
#include "tap.h"

static cJSON *
parse(const char *s)
{
	json_error e;
	cJSON *v = json_parse(s, strlen(s), &e);

	if (v == NULL)
		fprintf(stderr, "bad test JSON: %s: %s\n", s, e.msg);
	return v;
}

static bool
pr(const char *text)
{
	cJSON *v = parse(text);
	bool t = seed_pr_truthy(v);

	cJSON_Delete(v);
	return t;
}

static char *
prov(const char *text)
{
	cJSON *v = parse(text);
	char *p = seed_provenance(v);

	cJSON_Delete(v);
	return p;
}

static bool
equal(const char *a, const char *b)
{
	cJSON *x = parse(a), *y = parse(b);
	bool e = json_equal(x, y);

	cJSON_Delete(x);
	cJSON_Delete(y);
	return e;
}

int
main(void)
{
	static const char *const falsy[] = { "null", "false", "0", "0.0", "\"\"", "\"false\"",
	    "\"0\"", "\"None\"", "\"none\"", "[]", "{}" };
	cJSON *recs[5], *src, *seed;
	const cJSON *cr[5];
	int order[5];
	char *a, *b, *p;
	buf keys = BUF_INIT;

	for (size_t i = 0; i < sizeof falsy / sizeof *falsy; i++)
		ok(!pr(falsy[i]), "PR number %s is not a PR", falsy[i]);
	ok(pr("\"123\"") && pr("123") && pr("true") && pr("\"False\""), "PR numbers");

	a = prov("{\"job_id\":\"job-1\",\"build_id\":\"b\",\"commit_sha\":\"x\"}");
	b = prov("{\"job_id\":\"job-1\",\"timestamp\":\"other\",\"model_id\":\"renamed\"}");
	ok(a != NULL && b != NULL && strcmp(a, b) == 0, "job_id wins, model_id is no part");
	free(b);
	b = prov("{\"build_id\":\"job-1\"}");
	ok(strcmp(a, b) != 0, "a build id is not a job id");
	free(a);
	free(b);
	a = prov("{\"job_id\":\"\",\"build_id\":null,\"commit_sha\":\"c\",\"timestamp\":\"t\"}");
	b = prov("{\"commit_sha\":\"c\",\"timestamp\":\"t\",\"latency\":2}");
	ok(a != NULL && strcmp(a, b) == 0, "else commit and timestamp");
	free(a);
	free(b);
	ok(prov("{\"latency\":1}") == NULL, "no provenance");

	ok(equal("{\"a\":1,\"b\":[1,2.0]}", "{\"b\":[1.0,2],\"a\":1.0}"), "dicts ignore order, 1 == 1.0");
	ok(!equal("{\"a\":1}", "{\"a\":1,\"b\":null}"), "a missing key differs from null");
	ok(!equal("{\"a\":true}", "{\"a\":1}"), "a boolean equals only a boolean");
	ok(!equal("12345678901234567890", "12345678901234567891"), "big integers exactly");
	ok(equal("\"x\"", "\"x\"") && !equal("\"x\"", "\"y\"") && equal("null", "null"), "scalars");

	recs[0] = parse("{\"timestamp\":\"2026-06-02\"}");
	recs[1] = parse("{}");
	recs[2] = parse("{\"timestamp\":\"malformed\"}");
	recs[3] = parse("{\"timestamp\":\"2026-06-01T00:00:00Z\"}");
	recs[4] = parse("{\"timestamp\":\"2026-06-01T01:00:00+01:00\"}");
	for (int i = 0; i < 5; i++)
		cr[i] = recs[i];
	seed_order(cr, 5, order, false);
	ok(order[0] == 3 && order[1] == 4 && order[2] == 0 && order[3] == 1 && order[4] == 2,
	    "dated by instant (ties in input order), then the undated in input order");
	for (int i = 0; i < 5; i++)
		cJSON_Delete(recs[i]);

	src = parse("{\"model_id\":\"m/x\",\"timestamp\":\"old\",\"commit_sha\":null,"
	    "\"comparison_status\":\"CALIBRATION_NEEDED\",\"success\":true,\"baseline_seed\":false,"
	    "\"run_source\":\"scheduled_main\",\"branch\":\"main\",\"test_scope\":\"full\"}");
	seed = seed_build(src, "2026-07-01T00:00:00+00:00", "why", NULL, "/src.json", 2, 3);
	for (const cJSON *c = seed->child; c != NULL; c = c->next)
		buf_addf(&keys, "%s ", c->string);
	is_str(keys.s, "model_id timestamp commit_sha comparison_status success baseline_seed "
	    "run_source branch test_scope baseline_eligible comparison_status_reason "
	    "baseline_seed_reason baseline_seed_source_status baseline_seed_source_timestamp "
	    "baseline_seed_source_success baseline_seed_source_run_source "
	    "baseline_seed_source_branch baseline_seed_source_test_scope "
	    "baseline_seed_source_pr_number baseline_seed_batch_size baseline_seed_batch_index "
	    "baseline_seed_source_result ", "overwritten in place, new keys appended in order");
	ok(cJSON_IsNull(json_get(seed, "baseline_seed_source_pr_number")) &&
	    strcmp(json_get(seed, "baseline_seed_source_timestamp")->valuestring, "old") == 0,
	    "source values copied, missing ones null");
	ok(json_get(seed, "baseline_seed_operator") == NULL, "no operator, no key");
	p = seed_path(seed, 2, 3);
	is_str(p, "m_x/2026-07-01T00_00_00_00_00_unknown_seed_02.json", "a batch seed's path");
	free(p);
	p = seed_path(seed, 1, 1);
	is_str(p, "m_x/2026-07-01T00_00_00_00_00_unknown_seed.json", "a lone seed's path");
	free(p);
	p = seed_check_prepared(seed);
	ok(p != NULL && strstr(p, "v2 record") != NULL, "a prepared seed needs the v2 identity");
	free(p);
	p = seed_check_source(src);
	is_str(p, "baseline seeds require a v2 record with exact comparable identity fields",
	    "so does a source");
	free(p);
	buf_free(&keys);
	cJSON_Delete(seed);
	cJSON_Delete(src);

	/* reseed: the cohort's fields the source has, in its order, then provenance */
	{
		const char *fields[] = { "branch", "commit_sha", "comparison_status_reason",
		    "latency", "model_id", "store_only" };
		cJSON *rec;

		src = parse("{\"model_id\":\"m/x\",\"timestamp\":\"old\",\"latency\":11,"
		    "\"source_only\":1,\"commit_sha\":\"c\",\"success\":false,"
		    "\"baseline_seed\":true,\"baseline_reseed_reason\":\"earlier\","
		    "\"comparison_status\":\"REGRESSION\",\"comparison_status_reason\":\"slow\","
		    "\"branch\":\"main\"}");
		rec = reseed_build(src, (char *const *)fields, 6, "2026-07-01T00:00:00+00:00", "why", "alice",
		    "/src.json", 2, 3, 0.05);
		keys = (buf)BUF_INIT;
		for (const cJSON *c = rec->child; c != NULL; c = c->next)
			buf_addf(&keys, "%s ", c->string);
		is_str(keys.s, "model_id timestamp latency commit_sha success comparison_status "
		    "comparison_status_reason branch baseline_eligible baseline_reseed "
		    "baseline_reseed_reason baseline_reseed_source_result "
		    "baseline_reseed_source_timestamp baseline_reseed_source_success "
		    "baseline_reseed_batch_size baseline_reseed_batch_index "
		    "baseline_reseed_operator baseline_reseed_max_intra_batch_regression ",
		    "a reseed keeps the inferred fields in the source's order, provenance appended");
		is_str(json_get(rec, "comparison_status_reason")->valuestring,
		    "Approved baseline reseed from REGRESSION source artifact", "its reason");
		ok(cJSON_IsTrue(json_get(rec, "success")) &&
		    cJSON_IsFalse(json_get(rec, "baseline_reseed_source_success")) &&
		    strcmp(json_get(rec, "baseline_reseed_source_timestamp")->valuestring, "old") == 0 &&
		    json_get(rec, "baseline_reseed_max_intra_batch_regression")->valuedouble == 0.05,
		    "successful, with the source's success and timestamp kept");
		p = reseed_path(rec, 2);
		is_str(p, "m_x/2026-07-01T00_00_00_00_00_c_reseed_02.json", "a reseed's path");
		free(p);
		ok(reseed_provenance_key("baseline_reseed") && reseed_provenance_key("baseline_seed_x") &&
		    !reseed_provenance_key("baseline_eligible") && !reseed_provenance_key("baseline_status"),
		    "provenance keys");
		buf_free(&keys);
		cJSON_Delete(rec);
		cJSON_Delete(src);
	}
	return done_testing();
}
