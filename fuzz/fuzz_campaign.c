/*
 * The campaign plan and results parsers: the input is a plan, or (after a
 * first byte '\x01') results for the plan of fixtures/campaign, analysed
 * when they load.
 */
#include "campaign/campaign.h"
#include "fuzz.h"
#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static buf plan_text;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (buf_read_file(&plan_text, FUZZ_PLAN) != 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct problems p = { NULL, 0 };
	struct plan pl;
	struct results res = { NULL, "" };

	err_quiet(true);
	if (size > 0 && data[0] == 1) {
		if (plan_load(plan_text.s, plan_text.len, &pl, &p) != 0)
			abort();
		if (results_load((const char *)data + 1, size - 1, &pl, &res, &p) == 0)
			cJSON_Delete(campaign_analyze(&pl, &res));
		results_free(&res);
	} else if (plan_load((const char *)data, size, &pl, &p) == 0) {
		size_t n;

		free(plan_order(&pl, &n));
		cJSON_Delete(plan_order_json(&pl));
	}
	plan_free(&pl);
	problems_free(&p);
	return 0;
}
