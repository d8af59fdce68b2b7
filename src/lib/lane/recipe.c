#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/canon.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/text.h"
#include "lane/recipe.h"

/* The variable PERF_<name>, else FASTVIDEO_<name>, else NULL. */
static const char *
recipe_env(const char *name)
{
	char key[128];
	const char *v;

	snprintf(key, sizeof key, "PERF_%s", name);
	if ((v = getenv(key)) != NULL)
		return v;
	snprintf(key, sizeof key, "FASTVIDEO_%s", name);
	return getenv(key);
}

static bool
repo_id_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ */
static bool
repo_id_shape(const char *s)
{
	const char *slash = strchr(s, '/'), *p;

	if (slash == NULL || slash == s || slash[1] == '\0')
		return false;
	for (p = s; *p; p++)
		if (p != slash && !repo_id_char(*p))
			return false;
	return true;
}

/* Python's os.path.expanduser() for a leading "~" or "~user". */
static char *
expand_user(const char *s)
{
	const char *end, *home = NULL;
	struct passwd *pw;
	char *user;

	if (s[0] != '~')
		return estrdup(s);
	end = strchr(s, '/');
	if (end == NULL)
		end = s + strlen(s);
	if (end == s + 1) {
		if ((home = getenv("HOME")) == NULL && (pw = getpwuid(getuid())) != NULL)
			home = pw->pw_dir;
	} else {
		user = estrndup(s + 1, (size_t)(end - s - 1));
		if ((pw = getpwnam(user)) != NULL)
			home = pw->pw_dir;
		free(user);
	}
	if (home == NULL)
		return estrdup(s);
	/* As Python: "~" with an empty home is the root. */
	return *home == '\0' && *end == '\0' ? estrdup("/") : easprintf("%s%s", home, end);
}

/*
 * Python's Path(path).as_posix(): "." components, duplicate and trailing
 * slashes dropped, ".." kept as written (a path is not resolved: the
 * recipe records what the config says); exactly two leading slashes stay.
 */
static char *
posix_path(const char *path)
{
	int initial = 0, n = 0, i;
	char *copy, *tok, *save, **comps;
	buf out = BUF_INIT;

	if (path[0] == '/')
		initial = (path[1] == '/' && path[2] != '/') ? 2 : 1;
	copy = estrdup(path);
	comps = emalloc((strlen(path) + 1) * sizeof *comps);
	for (tok = strtok_r(copy, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save))
		if (strcmp(tok, ".") != 0)
			comps[n++] = tok;
	for (i = 0; i < initial; i++)
		buf_addc(&out, '/');
	for (i = 0; i < n; i++)
		buf_addf(&out, "%s%s", i ? "/" : "", comps[i]);
	free(comps);
	free(copy);
	if (out.len == 0)
		buf_addc(&out, '.');
	return buf_detach(&out);
}

char *
recipe_model_path(const cJSON *value)
{
	char *text, *t, *expanded, *norm;
	const char *p;
	size_t n;
	bool local;

	if (value == NULL || cJSON_IsNull(value))
		return NULL;
	text = json_pystr_dup(value);
	p = text_py_strip(text, &n);
	t = estrndup(p, n);
	free(text);
	if (n == 0) {
		free(t);
		return NULL;
	}
	local = t[0] == '/' || strncmp(t, "./", 2) == 0 || strncmp(t, "../", 3) == 0 ||
	    t[0] == '~' || ((strchr(t, '/') != NULL || strchr(t, '\\') != NULL) &&
	    !repo_id_shape(t));
	if (local) {
		expanded = expand_user(t);
		norm = posix_path(expanded);
		free(expanded);
		free(t);
		return norm;
	}
	/* Not local: runs of '/' collapse to one, which leaves a repo id as it is. */
	{
		buf b = BUF_INIT;
		for (p = t; *p; p++)
			if (*p != '/' || b.len == 0 || b.s[b.len - 1] != '/')
				buf_addc(&b, *p);
		free(t);
		return buf_detach(&b);
	}
}

/* init_kwargs with num_gpus set to count and text_encoder_precisions last. */
static cJSON *
recipe_init_kwargs(const cJSON *cfg, long count)
{
	const cJSON *ik = json_get(cfg, "init_kwargs");
	cJSON *out = cJSON_IsObject(ik) ? cJSON_Duplicate(ik, true) : json_new_object();
	cJSON *tep = json_take(out, "text_encoder_precisions");

	json_set(out, "num_gpus", json_new_int(count));
	/* Re-inserted last when not null, as the producer's tuple was. */
	if (tep != NULL && !cJSON_IsNull(tep))
		json_set(out, "text_encoder_precisions", tep);
	else
		cJSON_Delete(tep);
	return out;
}

const cJSON *
recipe_prompt(const cJSON *cfg, char **err)
{
	static char text[] = "A cinematic video.";
	static cJSON def = { .type = cJSON_String, .valuestring = text };
	const cJSON *tp = json_get(cfg, "test_prompts");

	*err = NULL;
	if (tp == NULL)
		return &def;
	if (!cJSON_IsArray(tp) || tp->child == NULL) {
		char *id = json_get(cfg, "benchmark_id") ?
		    json_pystr_dup(json_get(cfg, "benchmark_id")) : estrdup("None");
		*err = easprintf("%s: test_prompts must be a non-empty list", id);
		free(id);
		return NULL;
	}
	return tp->child;
}

/* sha256 of Python's str() of a value, as a string node. */
static cJSON *
digest_of(const cJSON *v)
{
	char hex[SHA256_HEX], *s = json_pystr_dup(v);

	canon_sha256_hex(s, strlen(s), hex);
	free(s);
	return json_new_string(hex);
}

/* A runtime value with blank strings read as null. */
static cJSON *
runtime_value(const cJSON *runtime, const char *key)
{
	const cJSON *v = json_get(runtime, key);
	size_t n;

	if (v == NULL || cJSON_IsNull(v))
		return json_new_null();
	if (cJSON_IsString(v)) {
		text_py_strip(v->valuestring, &n);
		if (n == 0)
			return json_new_null();
	}
	return cJSON_Duplicate(v, true);
}

cJSON *
recipe_build(const cJSON *cfg, long count, const cJSON *runtime, char **err)
{
	static const char *bkeys[] = { "benchmark_id", "workload_id", "variant_id",
	    "benchmark_version" };
	static const char *dropped[] = { "output_path", "output_video_name", "prompt",
	    "negative_prompt", "neg_prompt" };
	const cJSON *model = json_get(cfg, "model"), *gk = json_get(cfg, "generation_kwargs");
	const cJSON *v, *prompt, *neg = NULL;
	cJSON *r, *b, *m, *g, *in, *arr, *att;
	buf missing = BUF_INIT;
	const char *req;
	char *path;
	size_t i, n;

	*err = NULL;
	for (i = 0; i < 4; i++) {
		v = json_get(cfg, bkeys[i]);
		if (v == NULL || cJSON_IsNull(v) ||
		    (cJSON_IsString(v) && (text_py_strip(v->valuestring, &n), n == 0)))
			buf_addf(&missing, "%s%s", missing.len ? ", " : "", bkeys[i]);
	}
	if (missing.len > 0) {
		*err = easprintf("Benchmark config missing required identity fields: %s",
		    missing.s);
		buf_free(&missing);
		return NULL;
	}
	if ((prompt = recipe_prompt(cfg, err)) == NULL)
		return NULL;

	r = json_new_object();
	json_set(r, "recipe_schema_version", json_new_int(2));
	b = json_new_object();
	for (i = 0; i < 4; i++)
		json_set(b, bkeys[i], cJSON_Duplicate(json_get(cfg, bkeys[i]), true));
	json_set(r, "benchmark", b);

	m = json_new_object();
	path = recipe_model_path(json_get(model, "model_path"));
	json_set(m, "model_path", path != NULL ? json_new_string(path) : json_new_null());
	free(path);
	v = json_get(model, "revision");
	if (!json_truthy(v))
		v = json_get(cfg, "revision");
	if (json_truthy(v) && !(cJSON_IsString(v) &&
	    (text_py_strip(v->valuestring, &n), n == 0)))
		json_set(m, "revision", cJSON_Duplicate(v, true));
	else
		json_set(m, "revision", json_new_null());
	json_set(m, "resolved_revision", runtime_value(runtime, "resolved_model_revision"));
	json_set(r, "model", m);

	json_set(r, "init_kwargs", recipe_init_kwargs(cfg, count));

	g = json_new_object();
	cJSON_ArrayForEach(v, gk) {
		for (i = 0; i < 5; i++)
			if (strcmp(v->string, dropped[i]) == 0)
				break;
		if (i == 5)
			json_set(g, v->string, cJSON_Duplicate(v, true));
	}
	json_set(r, "generation_kwargs", g);

	/* negative_prompt wins, even when null; else neg_prompt. */
	if ((neg = json_get(gk, "negative_prompt")) == NULL)
		neg = json_get(gk, "neg_prompt");
	in = json_new_object();
	json_set(in, "prompt_count", json_new_int(1));
	arr = json_new_array();
	json_append(arr, digest_of(prompt));
	json_set(in, "prompt_sha256", arr);
	json_set(in, "negative_prompt_sha256", neg != NULL && !cJSON_IsNull(neg) ?
	    digest_of(neg) : json_new_null());
	json_set(r, "inputs", in);

	att = json_new_object();
	req = recipe_env("ATTENTION_BACKEND");
	if (req != NULL)
		text_py_strip(req, &n);
	json_set(att, "requested_backend", json_new_string(req != NULL && n > 0 ? req : "auto"));
	json_set(att, "resolved_backend", runtime_value(runtime, "resolved_attention_backend"));
	json_set(r, "attention", att);
	return r;
}

int
recipe_fingerprint(const cJSON *recipe, char hex[65])
{
	cJSON *c = cJSON_Duplicate(recipe, true);
	int rc;

	json_remove(json_get(c, "model"), "resolved_revision");
	json_remove(json_get(c, "attention"), "resolved_backend");
	json_remove(json_get(c, "benchmark"), "benchmark_id");
	rc = canon_sha256(c, hex);
	cJSON_Delete(c);
	return rc;
}

cJSON *
recipe_hardware_profile(bool cuda, long count, const struct hw_gpu *gpus,
    int nvisible, const char *interconnect)
{
	cJSON *p = json_new_object(), *arr = json_new_array(), *g;
	char cc[32];
	size_t n;

	if (!cuda) {
		json_set(p, "device_type", json_new_string("cpu"));
		json_set(p, "gpu_count", json_new_int(0));
		json_set(p, "gpus", arr);
		json_set(p, "interconnect", json_new_string("none"));
		return p;
	}
	json_set(p, "device_type", json_new_string("cuda"));
	json_set(p, "gpu_count", json_new_int(count));
	for (long i = 0; i < count; i++) {
		g = json_new_object();
		if (i < nvisible) {
			const char *name = gpus[i].name;
			text_py_strip(name != NULL ? name : "", &n);
			json_set(g, "name", json_new_string(n > 0 ? name : "unknown"));
			/* round(bytes / 1024^3), half to even, an integer. */
			json_set(g, "memory_gb", json_new_int((long long)num_round(
			    (double)gpus[i].total_bytes / (1024.0 * 1024 * 1024), 0)));
			snprintf(cc, sizeof cc, "%d.%d", gpus[i].cc_major, gpus[i].cc_minor);
			json_set(g, "compute_capability", json_new_string(cc));
		} else {
			json_set(g, "name", json_new_string("unknown"));
			json_set(g, "memory_gb", json_new_null());
			json_set(g, "compute_capability", json_new_null());
		}
		json_append(arr, g);
	}
	json_set(p, "gpus", arr);
	json_set(p, "interconnect", json_new_string(count <= 1 ? "single_gpu" :
	    interconnect));
	return p;
}

char *
recipe_major_minor(const char *version)
{
	const char *p;

	if (version == NULL || *version == '\0')
		return NULL;
	/* The first match of \d+\.\d+ */
	for (p = version; *p; p++) {
		const char *q = p, *start = p;

		if (*q < '0' || *q > '9')
			continue;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q != '.' || q[1] < '0' || q[1] > '9')
			continue;
		q++;
		while (*q >= '0' && *q <= '9')
			q++;
		return estrndup(start, (size_t)(q - start));
	}
	return estrdup(version);
}

static cJSON *
major_minor_of(const cJSON *runtime, const char *key)
{
	const cJSON *v = json_get(runtime, key);
	char *s;
	cJSON *out;

	if (!cJSON_IsString(v) || (s = recipe_major_minor(v->valuestring)) == NULL)
		return json_new_null();
	out = json_new_string(s);
	free(s);
	return out;
}

/*
 * FastVideo's attention and kernel packages: each logical name, then the
 * distribution names it is found under, first found wins. No other package
 * is part of a profile.
 */
static const char *const package_names[][3] = {
	{ "fastvideo_kernel", "fastvideo-kernel", NULL },
	{ "flash_attention_fp4", "flash-attention-fp4", NULL },
	{ "flash_attn", "flash-attn", NULL },
	{ "flash_attn_4", "flash-attn-4", NULL },
	{ "flashinfer", "flashinfer-python", NULL },
	{ "nvidia_cutlass_dsl", "cutlass-dsl", NULL },
	{ "sageattention", NULL, NULL },
	{ "sageattn3", NULL, NULL },
	{ "triton", NULL, NULL },
	{ "xformers", NULL, NULL },
};

/*
 * The runner's packages as FastVideo records them: the logical names above
 * (a runner may report a distribution name instead; a name without a truthy
 * version is not installed) with a truthy version, keys sorted (the table
 * is in order).
 */
static cJSON *
packages_of(const cJSON *runtime)
{
	const cJSON *p = json_get(runtime, "packages"), *c;
	cJSON *out = json_new_object();

	for (size_t i = 0; i < sizeof package_names / sizeof package_names[0]; i++)
		for (int k = 0; k < 3 && package_names[i][k] != NULL; k++)
			if ((c = json_get(p, package_names[i][k])) != NULL && json_truthy(c)) {
				json_set(out, package_names[i][0], cJSON_Duplicate(c, true));
				break;
			}
	return out;
}

cJSON *
recipe_software_profile(const cJSON *runtime)
{
	cJSON *p = json_new_object();
	const char *v;

	json_set(p, "python", major_minor_of(runtime, "python"));
	json_set(p, "pytorch", major_minor_of(runtime, "pytorch"));
	json_set(p, "cuda", major_minor_of(runtime, "cuda"));
	json_set(p, "packages", packages_of(runtime));
	v = recipe_env("ATTENTION_BACKEND");
	json_set(p, "attention_backend", json_new_string(v != NULL && *v ? v : "auto"));
	/* HEAD's rule: anything but the exact string "0" enables FA4. */
	v = recipe_env("FA4");
	json_set(p, "flash_attention_4_enabled", json_new_bool(strcmp(v ? v : "0", "0") != 0));
	if ((v = recipe_env("PERFORMANCE_PROFILE_VERSION")) != NULL && *v)
		json_set(p, "performance_profile_version", json_new_string(v));
	if ((v = getenv("IMAGE_VERSION")) != NULL && *v)
		json_set(p, "container_image_version", json_new_string(v));
	return p;
}

cJSON *
recipe_environment_metadata(const cJSON *runtime, const cJSON *hw, const cJSON *sw)
{
	static const char *envs[] = { "CUDA_VISIBLE_DEVICES", "FASTVIDEO_ATTENTION_BACKEND",
	    "IMAGE_VERSION", "UV_TORCH_BACKEND", "FASTVIDEO_CONTAINER_IMAGE_REF" };
	cJSON *m = json_new_object(), *o;
	struct utsname u;
	const char *v;

	o = json_new_object();
	json_set(o, "version", runtime_value(runtime, "python"));
	json_set(o, "implementation", runtime_value(runtime, "python_implementation"));
	json_set(m, "python", o);
	o = json_new_object();
	if (uname(&u) == 0) {
		json_set(o, "system", json_new_string(u.sysname));
		json_set(o, "machine", json_new_string(u.machine));
		json_set(o, "release", json_new_string(u.release));
	}
	json_set(m, "platform", o);
	o = json_new_object();
	json_set(o, "version", runtime_value(runtime, "pytorch"));
	json_set(o, "cuda", runtime_value(runtime, "cuda"));
	json_set(o, "cudnn", runtime_value(runtime, "cudnn"));
	json_set(m, "torch", o);
	o = json_new_object();
	for (size_t i = 0; i < sizeof envs / sizeof *envs; i++)
		if ((v = getenv(envs[i])) != NULL)
			json_set(o, envs[i], json_new_string(v));
	json_set(m, "env", o);
	json_set(m, "packages", packages_of(runtime));
	json_set(m, "hardware_profile", cJSON_Duplicate(hw, true));
	json_set(m, "software_profile", cJSON_Duplicate(sw, true));
	return m;
}

cJSON *
recipe_profile_id(const cJSON *v, const char *prefix)
{
	char id[64];

	if (canon_profile_id(v, prefix, id, sizeof id) != 0)
		return json_new_null();
	return json_new_string(id);
}
