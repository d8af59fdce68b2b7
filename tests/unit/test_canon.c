/* Unit tests for canon: the reference's canonical JSON and fingerprints. */
#include <string.h>

#include "core/canon.h"
#include "core/json.h"
#include "tap.h"

static const char recipe_canon[] =
    "{\"attention\":{\"requested_backend\":\"auto\"},\"benchmark\":{\"benchmark_version\":3,"
    "\"variant_id\":\"1.3b-sp2\",\"workload_id\":\"wan-t2v\"},\"generation_kwargs\":"
    "{\"embedded_cfg_scale\":6,\"fps\":24,\"guidance_scale\":3,\"height\":480,"
    "\"num_frames\":45,\"num_inference_steps\":4,\"seed\":1024,\"width\":832},"
    "\"init_kwargs\":{\"flow_shift\":7.0,\"num_gpus\":2,\"sp_size\":2,"
    "\"text_encoder_precisions\":[\"fp32\"],\"tp_size\":1,\"vae_sp\":true,"
    "\"vae_tiling\":true},\"inputs\":{\"negative_prompt_sha256\":"
    "\"e488b06083693241fbe71bed61a3eb0035f4ec96d858d235be1662c226452fac\","
    "\"prompt_count\":1,\"prompt_sha256\":"
    "[\"85f2ae1a875cd86ae820c71c34a1295e2d8cdd9345cdcdcad6b609bb7f54fb50\"]},"
    "\"model\":{\"model_path\":\"Wan-AI/Wan2.1-T2V-1.3B-Diffusers\",\"revision\":null},"
    "\"recipe_schema_version\":2}";

/* The same document in the stored (insertion) order with whitespace. */
static const char recipe_stored[] =
    "{\n  \"recipe_schema_version\": 2,\n  \"model\": {\"model_path\": "
    "\"Wan-AI/Wan2.1-T2V-1.3B-Diffusers\", \"revision\": null},\n"
    "  \"init_kwargs\": {\"num_gpus\": 2, \"flow_shift\": 7.0, \"sp_size\": 2, "
    "\"tp_size\": 1, \"vae_sp\": true, \"vae_tiling\": true, "
    "\"text_encoder_precisions\": [\"fp32\"]},\n"
    "  \"benchmark\": {\"workload_id\": \"wan-t2v\", \"variant_id\": \"1.3b-sp2\", "
    "\"benchmark_version\": 3},\n"
    "  \"generation_kwargs\": {\"height\": 480, \"width\": 832, \"num_frames\": 45, "
    "\"num_inference_steps\": 4, \"guidance_scale\": 3, \"embedded_cfg_scale\": 6, "
    "\"seed\": 1024, \"fps\": 24},\n"
    "  \"inputs\": {\"prompt_count\": 1, \"prompt_sha256\": "
    "[\"85f2ae1a875cd86ae820c71c34a1295e2d8cdd9345cdcdcad6b609bb7f54fb50\"], "
    "\"negative_prompt_sha256\": "
    "\"e488b06083693241fbe71bed61a3eb0035f4ec96d858d235be1662c226452fac\"},\n"
    "  \"attention\": {\"requested_backend\": \"auto\"}\n}";

static const char hw[] =
    "{\"device_type\":\"cuda\",\"gpu_count\":2,\"gpus\":[{\"compute_capability\":\"8.9\","
    "\"memory_gb\":48,\"name\":\"NVIDIA L40S\"},{\"compute_capability\":\"8.9\","
    "\"memory_gb\":48,\"name\":\"NVIDIA L40S\"}],\"interconnect\":\"none_or_partial\"}";

static const char sw[] =
    "{\"attention_backend\":\"auto\",\"cuda\":\"13.0\",\"flash_attention_4_enabled\":false,"
    "\"packages\":{\"fastvideo_kernel\":\"0.3.2\",\"triton\":\"3.4.1\"},"
    "\"python\":\"3.12\",\"pytorch\":\"2.12\"}";

int
main(void)
{
	char hex[SHA256_HEX], id[64];
	json_error e;
	buf b = BUF_INIT;
	cJSON *v;

	canon_sha256_hex(recipe_canon, strlen(recipe_canon), hex);
	is_str(hex, "ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c",
	    "the reference's canonical recipe hashes to its recipe_fingerprint");

	v = json_parse(recipe_stored, strlen(recipe_stored), &e);
	ok(canon_json(&b, v) == 0, "canonical JSON of the stored recipe");
	is_str(b.s, recipe_canon, "key order and whitespace do not matter; 7.0 stays 7.0");
	ok(canon_sha256(v, hex) == 0, "fingerprint of the stored recipe");
	is_str(hex, "ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c",
	    "same fingerprint from the parsed document");
	json_set(json_get(v, "attention"), "requested_backend",
	    json_new_string("FLASH_ATTN"));
	canon_sha256(v, hex);
	is_str(hex, "941e1db3f5bdac1289379fcc0a04eedbb61f6a08abdf24ae2b1583c4aed91c14",
	    "FLASH_ATTN requested backend gives the reference's other fingerprint");
	json_set(json_get(v, "init_kwargs"), "flow_shift", json_new_int(7));
	canon_sha256(v, hex);
	ok(strcmp(hex, "941e1db3f5bdac1289379fcc0a04eedbb61f6a08abdf24ae2b1583c4aed91c14") != 0,
	    "an integer 7 and a float 7.0 hash differently");
	cJSON_Delete(v);

	v = json_parse(hw, strlen(hw), &e);
	ok(canon_profile_id(v, "hw-", id, sizeof id) == 0, "hardware profile id");
	is_str(id, "hw-41f86157a00d7e43", "2x L40S profile id matches the reference");
	cJSON_Delete(v);
	v = json_parse(sw, strlen(sw), &e);
	canon_profile_id(v, "sw-", id, sizeof id);
	is_str(id, "sw-51a21bb706c36ab3", "software profile id matches the reference");
	cJSON_Delete(v);

	v = json_parse("{\"b\":[2,1],\"a\":{\"z\":\"last\",\"m\":\"middle\"}}", 41, &e);
	buf_reset(&b);
	canon_json(&b, v);
	is_str(b.s, "{\"a\":{\"m\":\"middle\",\"z\":\"last\"},\"b\":[2,1]}",
	    "mappings are sorted, arrays keep their order");
	cJSON_Delete(v);
	v = json_parse("{\"x\":NaN}", 9, &e);
	ok(canon_sha256(v, hex) == -1, "a NaN cannot be fingerprinted");
	cJSON_Delete(v);
	buf_free(&b);
	return done_testing();
}
