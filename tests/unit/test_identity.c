/* Unit tests for identity: completeness and the reference's error text. */
#include <stdlib.h>
#include <string.h>

#include "lane/identity.h"
#include "core/json.h"
#include "tap.h"

static void
of(const char *text, struct identity *id)
{
	json_error e;
	cJSON *v = json_parse(text, strlen(text), &e);

	identity_of(v, id);
	cJSON_Delete(v);
}

#define FULL "\"workload_id\":\"wan-t2v\",\"variant_id\":\"1.3b-sp2\"," \
	"\"benchmark_version\":2,\"recipe_fingerprint\":\"recipe-1\"," \
	"\"hardware_profile_id\":\"hw-l40s-2\",\"software_profile_id\":\"sw-cuda\""

int
main(void)
{
	struct identity id;

	of("{" FULL "}", &id);
	ok(id.complete && id.uses_v2 && id.error == NULL, "six keys: complete");
	is_str(id.value[IDENTITY_BENCHMARK_VERSION], "2", "benchmark_version 2 reads as \"2\"");
	is_str(id.value[IDENTITY_WORKLOAD], "wan-t2v", "the workload's slot holds workload_id");
	is_str(id.value[IDENTITY_VARIANT], "1.3b-sp2", "the variant's slot holds variant_id");
	is_str(id.value[IDENTITY_RECIPE], "recipe-1", "the recipe's slot holds recipe_fingerprint");
	is_str(id.value[IDENTITY_HARDWARE], "hw-l40s-2",
	    "the hardware's slot holds hardware_profile_id");
	is_str(id.value[IDENTITY_SOFTWARE], "sw-cuda", "the software's slot holds software_profile_id");
	ok(IDENTITY_KEYS == 6 && strcmp(identity_keys[IDENTITY_RECIPE], "recipe_fingerprint") == 0 &&
	    strcmp(identity_keys[IDENTITY_SOFTWARE], "software_profile_id") == 0,
	    "identity_keys[] is indexed by the slots");
	identity_free(&id);

	of("{\"result_schema_version\":2," FULL ",\"benchmark_version\":0}", &id);
	is_str(id.value[IDENTITY_BENCHMARK_VERSION], "0", "version 0 is valid and reads \"0\"");
	ok(id.complete, "0 is not missing");
	identity_free(&id);

	of("{\"workload_id\":\"wan\",\"variant_id\":\"  \",\"benchmark_version\":null}", &id);
	ok(!id.complete && id.uses_v2, "blank and null values are missing; keys make it v2");
	is_str(id.error, "Performance record missing required comparison identity fields: "
	    "variant_id, benchmark_version, recipe_fingerprint, hardware_profile_id, "
	    "software_profile_id", "missing keys in canonical order");
	identity_free(&id);

	of("{\"result_schema_version\":\"2\"}", &id);
	ok(id.uses_v2 && !id.complete, "a string \"2\" schema version uses v2");
	identity_free(&id);
	of("{\"result_schema_version\":2.0}", &id);
	ok(!id.uses_v2, "2.0 does not use v2");
	identity_free(&id);
	of("{\"model_id\":\"legacy\"}", &id);
	ok(!id.uses_v2 && !id.complete, "a legacy record");
	is_str(id.value[0], "None", "a missing key reads as None");
	identity_free(&id);

	of("{" FULL ",\"hardware_profile_id\":[1],\"software_profile_id\":{\"a\":1},"
	    "\"variant_id\":true}", &id);
	ok(id.complete, "other JSON types are accepted");
	is_str(id.value[4], "[1]", "an array reads as its repr");
	is_str(id.value[5], "{'a': 1}", "an object reads as its repr");
	is_str(id.value[1], "True", "true reads as True");
	identity_free(&id);
	return done_testing();
}
