/*
 * Unit tests for recipe: the reference's identity examples and test
 * cases. Run from the repository root (fixtures/configs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "lane/recipe.h"
#include "tap.h"

#include "modelpath_vectors.h"

static cJSON *
parse(const char *s)
{
	json_error e;

	return json_parse(s, strlen(s), &e);
}

static cJSON *
load(const char *path)
{
	FILE *fp = fopen(path, "rb");
	buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	cJSON *v;

	if (fp == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_add(&b, chunk, n);
	fclose(fp);
	v = parse(b.s);
	buf_free(&b);
	return v;
}

/* The fingerprint of cfg (count 2, runtime r). */
static char *
fp(const cJSON *cfg, const cJSON *r)
{
	char hex[65], *err = NULL;
	cJSON *rec = recipe_build(cfg, 2, r, &err);

	if (rec == NULL) {
		char *e = err;
		return e;
	}
	recipe_fingerprint(rec, hex);
	cJSON_Delete(rec);
	return strdup(hex);
}

static char *
path_of(const char *text)
{
	cJSON *v = json_new_string(text);
	char *p = recipe_model_path(v);

	cJSON_Delete(v);
	return p;
}

static void
changes(cJSON *base, const char *obj, const char *key, cJSON *v, const char *name)
{
	cJSON *c = cJSON_Duplicate(base, true);
	char *a = fp(base, NULL), *b;

	json_set(obj ? json_get(c, obj) : c, key, v);
	b = fp(c, NULL);
	ok(strcmp(a, b) != 0, "%s changes the fingerprint", name);
	free(a);
	free(b);
	cJSON_Delete(c);
}

static void
same(cJSON *base, const char *obj, const char *key, cJSON *v, const char *name)
{
	cJSON *c = cJSON_Duplicate(base, true);
	char *a = fp(base, NULL), *b;

	json_set(obj ? json_get(c, obj) : c, key, v);
	b = fp(c, NULL);
	is_str(b, a, "%s keeps the fingerprint", name);
	free(a);
	free(b);
	cJSON_Delete(c);
}

static char *
id_of(cJSON *profile, const char *prefix)
{
	cJSON *id = recipe_profile_id(profile, prefix);
	char *s = strdup(id->valuestring);

	cJSON_Delete(id);
	return s;
}

int
main(void)
{
	cJSON *cfg = load("fixtures/configs/wan-t2v-1.3b.json"), *r, *rt, *rt2, *hw, *sw, *env;
	struct hw_gpu l40s[2] = { { "NVIDIA L40S", 48ULL << 30, 8, 9 },
	    { "NVIDIA L40S", 51539607552ULL, 8, 9 } };
	buf b = BUF_INIT;
	char *s, *t, *err;

	unsetenv("FASTVIDEO_ATTENTION_BACKEND");
	unsetenv("PERF_ATTENTION_BACKEND");
	unsetenv("FASTVIDEO_FA4");
	unsetenv("PERF_FA4");
	unsetenv("IMAGE_VERSION");
	unsetenv("FASTVIDEO_PERFORMANCE_PROFILE_VERSION");
	if (!ok(cfg != NULL, "the fixture Wan config loads"))
		return done_testing();

	s = fp(cfg, NULL);
	is_str(s, "ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c",
	    "the shipped Wan config's recipe_fingerprint");
	free(s);
	setenv("FASTVIDEO_ATTENTION_BACKEND", "FLASH_ATTN", 1);
	s = fp(cfg, NULL);
	is_str(s, "941e1db3f5bdac1289379fcc0a04eedbb61f6a08abdf24ae2b1583c4aed91c14",
	    "with FASTVIDEO_ATTENTION_BACKEND=FLASH_ATTN");
	free(s);
	setenv("PERF_ATTENTION_BACKEND", "  ", 1);
	s = fp(cfg, NULL);
	is_str(s, "ec56b019a3e37278d55085fbf6bf77286d07b19790e9a44a5478c7620da0744c",
	    "PERF_ATTENTION_BACKEND wins; blank means auto");
	free(s);
	unsetenv("PERF_ATTENTION_BACKEND");
	unsetenv("FASTVIDEO_ATTENTION_BACKEND");

	r = recipe_build(cfg, 2, NULL, &err);
	buf_reset(&b);
	cJSON *k;
	cJSON_ArrayForEach(k, r)
		buf_addf(&b, "%s ", k->string);
	is_str(b.s, "recipe_schema_version benchmark model init_kwargs generation_kwargs "
	    "inputs attention ", "stored key order");
	buf_reset(&b);
	json_write(&b, json_get(r, "benchmark"), JSON_COMPACT, NULL);
	is_str(b.s, "{\"benchmark_id\":\"wan-t2v-1.3b-2gpu\",\"workload_id\":\"wan-t2v\","
	    "\"variant_id\":\"1.3b-sp2\",\"benchmark_version\":3}", "benchmark block");
	buf_reset(&b);
	json_write(&b, json_get(r, "init_kwargs"), JSON_COMPACT, NULL);
	is_str(b.s, "{\"num_gpus\":2,\"flow_shift\":7.0,\"sp_size\":2,\"tp_size\":1,"
	    "\"vae_sp\":true,\"vae_tiling\":true,\"text_encoder_precisions\":[\"fp32\"]}",
	    "effective init_kwargs: 7.0 stays a float, precisions last");
	ok(json_get(json_get(r, "generation_kwargs"), "neg_prompt") == NULL,
	    "neg_prompt leaves generation_kwargs");
	cJSON_Delete(r);

	/* The recipe: what it keeps, drops and fills in. */
	{
		cJSON *c = cJSON_Duplicate(cfg, true);
		json_remove(c, "workload_id");
		r = recipe_build(c, 2, NULL, &err);
		ok(r == NULL && strstr(err, "workload_id") != NULL, "missing workload_id: %s", err);
		free(err);
		cJSON_Delete(c);
	}
	same(cfg, "generation_kwargs", "output_path", json_new_string("/tmp/generated"),
	    "output_path");
	same(cfg, NULL, "benchmark_id", json_new_string("renamed"), "renaming the benchmark");
	{
		cJSON *c = cJSON_Duplicate(cfg, true);
		json_append(json_get(c, "test_prompts"), json_new_string("unused"));
		s = fp(cfg, NULL);
		t = fp(c, NULL);
		is_str(t, s, "unused prompts are ignored");
		free(s);
		free(t);
		cJSON_Delete(c);
	}
	rt = parse("{\"resolved_attention_backend\":\"FLASH_ATTN\",\"resolved_model_revision\":\"aaaa1111\"}");
	rt2 = parse("{\"resolved_attention_backend\":\"TORCH_SDPA\",\"resolved_model_revision\":\"bbbb2222\"}");
	s = fp(cfg, rt);
	t = fp(cfg, rt2);
	is_str(t, s, "runtime values are ignored");
	free(s);
	free(t);
	r = recipe_build(cfg, 2, rt, &err);
	is_str(json_get(json_get(r, "attention"), "resolved_backend")->valuestring, "FLASH_ATTN",
	    "the stored recipe keeps the resolved backend");
	is_str(json_get(json_get(r, "model"), "resolved_revision")->valuestring, "aaaa1111",
	    "and the resolved revision");
	cJSON_Delete(r);
	changes(cfg, "generation_kwargs", "num_inference_steps", json_new_int(8), "steps 4 -> 8");
	changes(cfg, NULL, "benchmark_version", json_new_int(2), "the version");
	changes(cfg, "init_kwargs", "text_encoder_precisions", parse("[\"bf16\"]"),
	    "precision");
	changes(cfg, "generation_kwargs", "width", json_new_int(1024), "width");
	changes(cfg, "generation_kwargs", "seed", json_new_int(2048), "seed");
	changes(cfg, "init_kwargs", "sp_size", json_new_int(1), "sp_size");
	changes(cfg, "generation_kwargs", "negative_prompt", json_new_null(),
	    "a null negative_prompt (it wins over neg_prompt)");

	/* model paths */
	s = path_of("Wan-AI/Wan2.1-T2V-1.3B-Diffusers");
	is_str(s, "Wan-AI/Wan2.1-T2V-1.3B-Diffusers", "a repo id is unchanged");
	free(s);
	s = path_of(" org//repo ");
	is_str(s, "org/repo", "org//repo is local and normalized");
	free(s);
	s = path_of("models/local/checkpoint");
	is_str(s, "models/local/checkpoint", "models/local/checkpoint is local");
	free(s);
	s = path_of("C:\\models\\checkpoint");
	is_str(s, "C:\\models\\checkpoint", "a backslash path is local");
	free(s);
	s = path_of("//a/b/");
	is_str(s, "//a/b", "two leading slashes stay");
	free(s);
	s = path_of("///a/./b/../c");
	is_str(s, "/a/b/../c", "three collapse; . dropped, .. kept");
	free(s);
	s = path_of("../x/./y");
	is_str(s, "../x/y", "a leading .. stays");
	free(s);
	setenv("HOME", "/home/tester", 1);
	s = path_of("~/models/m");
	is_str(s, "/home/tester/models/m", "~ expands");
	free(s);
	ok(path_of("   ") == NULL, "blank is null");
	/* Paths and the fingerprints of the Wan recipe with each, from Python. */
	for (size_t i = 0; i < sizeof modelpath_vectors / sizeof *modelpath_vectors; i++) {
		cJSON *c = cJSON_Duplicate(cfg, true);

		s = path_of(modelpath_vectors[i].in);
		ok(modelpath_vectors[i].out == NULL ? s == NULL :
		    s != NULL && strcmp(s, modelpath_vectors[i].out) == 0,
		    "model path '%s' is recorded as '%s'", modelpath_vectors[i].in,
		    modelpath_vectors[i].out != NULL ? modelpath_vectors[i].out : "null");
		free(s);
		cJSON_ReplaceItemInObject(json_get(c, "model"), "model_path",
		    json_new_string(modelpath_vectors[i].in));
		s = fp(c, NULL);
		is_str(s, modelpath_vectors[i].fp, "the recipe fingerprint with model path '%s'",
		    modelpath_vectors[i].in);
		free(s);
		cJSON_Delete(c);
	}

	/* The hardware profile and its id. */
	hw = recipe_hardware_profile(true, 2, l40s, 2, "none_or_partial");
	s = id_of(hw, "hw-");
	is_str(s, "hw-41f86157a00d7e43", "2x L40S none_or_partial");
	free(s);
	buf_reset(&b);
	json_write(&b, json_get(hw, "gpus"), JSON_COMPACT, NULL);
	is_str(b.s, "[{\"name\":\"NVIDIA L40S\",\"memory_gb\":48,\"compute_capability\":\"8.9\"},"
	    "{\"name\":\"NVIDIA L40S\",\"memory_gb\":48,\"compute_capability\":\"8.9\"}]",
	    "memory in GiB as an integer");
	cJSON_Delete(hw);
	hw = recipe_hardware_profile(true, 2, l40s, 1, "unknown");
	buf_reset(&b);
	json_write(&b, json_get(hw, "gpus")->child->next, JSON_COMPACT, NULL);
	is_str(b.s, "{\"name\":\"unknown\",\"memory_gb\":null,\"compute_capability\":null}",
	    "padding beyond the visible devices");
	cJSON_Delete(hw);
	hw = recipe_hardware_profile(false, 2, NULL, 0, "none");
	buf_reset(&b);
	json_write(&b, hw, JSON_COMPACT, NULL);
	is_str(b.s, "{\"device_type\":\"cpu\",\"gpu_count\":0,\"gpus\":[],\"interconnect\":\"none\"}",
	    "no CUDA: the cpu profile");
	cJSON_Delete(hw);
	hw = recipe_hardware_profile(true, 1, l40s, 2, "whatever");
	is_str(json_get(hw, "interconnect")->valuestring, "single_gpu", "one GPU is single_gpu");
	cJSON_Delete(hw);

	/* The software profile and its id, as the reference gives them. */
	cJSON_Delete(rt);
	rt = parse("{\"python\":\"3.12.4\",\"pytorch\":\"2.12.0+cu130\",\"cuda\":\"13.0\","
	    "\"packages\":{\"triton\":\"3.4.1\",\"fastvideo_kernel\":\"0.3.2\",\"flash_attn\":null}}");
	sw = recipe_software_profile(rt);
	s = id_of(sw, "sw-");
	is_str(s, "sw-51a21bb706c36ab3", "the reference's software profile id");
	free(s);
	buf_reset(&b);
	json_write(&b, sw, JSON_COMPACT, NULL);
	is_str(b.s, "{\"python\":\"3.12\",\"pytorch\":\"2.12\",\"cuda\":\"13.0\",\"packages\":"
	    "{\"fastvideo_kernel\":\"0.3.2\",\"triton\":\"3.4.1\"},\"attention_backend\":\"auto\","
	    "\"flash_attention_4_enabled\":false}", "X.Y versions, sorted truthy packages");
	/* Only FastVideo's ten packages count, found by logical or distribution name. */
	cJSON_Delete(sw);
	cJSON_Delete(rt);
	rt = parse("{\"python\":\"3.12.4\",\"pytorch\":\"2.12.0+cu130\",\"cuda\":\"13.0\","
	    "\"packages\":{\"triton\":\"3.4.1\",\"fastvideo-kernel\":\"0.3.2\",\"numpy\":\"2.1\","
	    "\"flash_attn\":\"\",\"flash-attn\":\"2.8.0\",\"flashinfer\":null,\"torch\":\"2.12\"}}");
	sw = recipe_software_profile(rt);
	buf_reset(&b);
	json_write(&b, json_get(sw, "packages"), JSON_COMPACT, NULL);
	is_str(b.s, "{\"fastvideo_kernel\":\"0.3.2\",\"flash_attn\":\"2.8.0\",\"triton\":\"3.4.1\"}",
	    "packages: FastVideo's names only, a distribution name for its logical one");
	cJSON_Delete(sw);
	cJSON_Delete(rt);
	rt = parse("{\"python\":\"3.12.4\",\"pytorch\":\"2.12.0+cu130\",\"cuda\":\"13.0\","
	    "\"packages\":{\"triton\":\"3.4.1\",\"fastvideo_kernel\":\"0.3.2\",\"numpy\":\"2.1\"}}");
	sw = recipe_software_profile(rt);
	s = id_of(sw, "sw-");
	is_str(s, "sw-51a21bb706c36ab3", "a package FastVideo does not record leaves the id as FastVideo's");
	free(s);
	hw = recipe_hardware_profile(true, 2, l40s, 2, "none_or_partial");
	env = recipe_environment_metadata(rt, hw, sw);
	s = id_of(env, "env-");
	setenv("FASTVIDEO_CONTAINER_IMAGE_REF", "img@sha256:abc", 1);
	cJSON_Delete(env);
	env = recipe_environment_metadata(rt, hw, sw);
	t = id_of(env, "env-");
	ok(strcmp(s, t) != 0, "the image ref changes the environment fingerprint");
	free(s);
	free(t);
	s = id_of(sw, "sw-");
	cJSON_Delete(sw);
	sw = recipe_software_profile(rt);
	t = id_of(sw, "sw-");
	is_str(t, s, "but not the software profile id");
	free(s);
	free(t);
	setenv("FASTVIDEO_ATTENTION_BACKEND", "SAGE_ATTN", 1);
	setenv("FASTVIDEO_FA4", "1", 1);
	setenv("FASTVIDEO_PERFORMANCE_PROFILE_VERSION", "perf-profile-v2", 1);
	setenv("IMAGE_VERSION", "py3.12-cuda13.0", 1);
	cJSON_Delete(sw);
	sw = recipe_software_profile(rt);
	buf_reset(&b);
	json_write(&b, sw, JSON_COMPACT, NULL);
	ok(strstr(b.s, "\"attention_backend\":\"SAGE_ATTN\",\"flash_attention_4_enabled\":true,"
	    "\"performance_profile_version\":\"perf-profile-v2\","
	    "\"container_image_version\":\"py3.12-cuda13.0\"") != NULL,
	    "the producer's additions: %s", b.s);
	s = id_of(sw, "sw-");
	setenv("FASTVIDEO_FA4", "0", 1);
	cJSON_Delete(sw);
	sw = recipe_software_profile(rt);
	t = id_of(sw, "sw-");
	ok(strcmp(s, t) != 0, "FA4 1 -> 0 changes the software profile id");
	free(s);
	free(t);
	setenv("FASTVIDEO_FA4", "false", 1);
	cJSON_Delete(sw);
	sw = recipe_software_profile(rt);
	ok(cJSON_IsTrue(json_get(sw, "flash_attention_4_enabled")),
	    "HEAD's rule: \"false\" enables FA4 (only \"0\" does not)");
	s = recipe_major_minor("cuda-13.0.1");
	is_str(s, "13.0", "the first digits.digits");
	free(s);
	s = recipe_major_minor("nightly");
	is_str(s, "nightly", "no match: unchanged");
	free(s);
	ok(recipe_major_minor("") == NULL, "empty: null");

	cJSON_Delete(sw);
	cJSON_Delete(env);
	cJSON_Delete(hw);
	cJSON_Delete(rt);
	cJSON_Delete(rt2);
	cJSON_Delete(cfg);
	buf_free(&b);
	return done_testing();
}
