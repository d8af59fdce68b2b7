/*
 * gen-store: writes a history store of N tracking records over 200 cohorts
 * (50 workloads x 4 variants; or COHORTS) into DIR, laid out as the reference's dataset
 * (<model_id>/<timestamp>_<commit>.json, pretty-printed), the same records
 * as JSON lines on stdout (a history stream: the same history, value for
 * value), and with -b a batch of 10
 * current records, one per cohort 0, 20, 40, ... on stdout instead.
 * DIR "-" writes the stream only. With -m M every record also carries M
 * named metrics (issue 24: "metrics", M/3 each in s, B and items/s, about
 * Google Benchmark's magnitudes), after the six.
 * usage: gen-store [-m M] N DIR [COHORTS] | gen-store [-m M] -b
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static unsigned long long state = 0x9e3779b97f4a7c15ULL;
static long named;	/* -m: named metrics per record */

static double
rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (double)(state >> 11) / 9007199254740992.0;
}

/* The random values of one record, drawn once for both of its copies. */
struct draw {
	double lat, mem, te;
};

static struct draw
draw(int cohort)
{
	struct draw d;

	d.lat = 20 + cohort * 0.1 + rnd() * 0.4;
	d.mem = 9000 + cohort * 10 + rnd() * 50;
	d.te = 1 + rnd() * 0.1;
	return d;
}

/* One record; sep is ",\n  " for the store file or "," for a line. */
static void
record(FILE *fp, int cohort, long i, int day, int sec, int current, int pretty,
    const struct draw *d)
{
	const char *sep = pretty ? ",\n  " : ",", *open = pretty ? "{\n  " : "{",
	    *close = pretty ? "\n}" : "}\n", *colon = pretty ? ": " : ":";
	double lat = d->lat;

	fprintf(fp, "%s\"model_id\"%s\"model-%03d\"%s\"timestamp\"%s\"2026-06-%02dT%02d:%02d:%02d+00:00\"",
	    open, colon, cohort, sep, colon, day, sec / 3600, sec / 60 % 60, sec % 60);
	fprintf(fp, "%s\"commit_sha\"%s\"%040lx\"%s\"gpu_type\"%s\"NVIDIA L40S\"", sep,
	    colon, (unsigned long)i * 2654435761UL, sep, colon);
	fprintf(fp, "%s\"latency\"%s%.3f%s\"throughput\"%s%.3f%s\"memory\"%s%.1f",
	    sep, colon, lat, sep, colon, 45 / lat, sep, colon, d->mem);
	fprintf(fp, "%s\"text_encoder_time_s\"%s%.3f%s\"dit_time_s\"%s%.3f%s\"vae_decode_time_s\"%snull",
	    sep, colon, d->te, sep, colon, lat * 0.8, sep, colon);
	for (long k = 0; k < named; k++) {
		static const char *const units[] = { "s", "B", "items/s" };
		static const double scale[] = { 1e-6, 4096, 1e8 };

		fprintf(fp, "%s\"BM_Op%02ld/%s\"%s{\"value\"%s%.6g%s\"unit\"%s\"%s\"}",
		    k == 0 ? (pretty ? ",\n  \"metrics\": {" : ",\"metrics\":{") : (pretty ? ", " : ","),
		    k / 3, k % 3 == 0 ? "time" : k % 3 == 1 ? "bytes" : "items_per_second",
		    colon, colon, scale[k % 3] * (1 + cohort * 0.01) * (1 + lat / 200),
		    pretty ? ", " : ",", colon, units[k % 3]);
		if (k == named - 1)
			fputs("}", fp);
	}
	fprintf(fp, "%s\"regression_thresholds\"%s{\"latency\": {\"threshold_percent\": 0.08, "
	    "\"threshold_absolute\": 0.5, \"gated\": true}, \"throughput\": {\"threshold_percent\": 0.08, "
	    "\"threshold_absolute\": 0.05, \"gated\": true}, \"memory\": {\"threshold_percent\": 0.05, "
	    "\"threshold_absolute\": 256.0, \"gated\": true}, \"text_encoder_time_s\": "
	    "{\"threshold_percent\": 0.05, \"threshold_absolute\": 0.25, \"gated\": true}, "
	    "\"dit_time_s\": {\"threshold_percent\": 0.05, \"threshold_absolute\": 0.25, "
	    "\"gated\": true}, \"vae_decode_time_s\": {\"threshold_percent\": 0.05, "
	    "\"threshold_absolute\": 0.25, \"gated\": true}}", sep, colon);
	fprintf(fp, "%s\"success\"%strue%s\"run_source\"%s\"%s\"%s\"baseline_eligible\"%s%s",
	    sep, colon, sep, colon, current ? "pr" : "scheduled_main", sep, colon,
	    current ? "false" : "true");
	fprintf(fp, "%s\"branch\"%s\"main\"%s\"pr_number\"%s\"\"%s\"test_scope\"%s\"full\""
	    "%s\"build_url\"%s\"https://buildkite.com/org/perf/builds/%ld\"%s\"build_id\"%s\"build-%ld\""
	    "%s\"job_id\"%s\"job-%ld\"", sep, colon, sep, colon, sep, colon, sep, colon, i, sep,
	    colon, i, sep, colon, i);
	fprintf(fp, "%s\"result_schema_version\"%s2%s\"workload_id\"%s\"workload-%02d\"%s\"variant_id\"%s\"v%d\""
	    "%s\"benchmark_version\"%s3%s\"recipe_fingerprint\"%s\"%064x\"%s\"hardware_profile_id\"%s"
	    "\"hw-41f86157a00d7e43\"%s\"software_profile_id\"%s\"sw-51a21bb706c36ab3\"",
	    sep, colon, sep, colon, cohort / 4, sep, colon, cohort % 4, sep, colon, sep, colon,
	    cohort * 7919, sep, colon, sep, colon);
	if (!current)
		fprintf(fp, "%s\"baseline_status\"%s\"compared\"%s\"comparison_status\"%s\"PASS\""
		    "%s\"comparison_status_reason\"%s\"Comparable baseline found with no gated regressions\"",
		    sep, colon, sep, colon, sep, colon);
	fputs(close, fp);
}

int
main(int argc, char *argv[])
{
	char path[4096];
	long n, i, cohorts = 200;
	int cohort, day, sec;
	struct draw d;
	FILE *fp;

	if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		named = atol(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc == 2 && strcmp(argv[1], "-b") == 0) {
		for (i = 0; i < 10; i++) {
			d = draw((int)i * 20);
			record(stdout, (int)i * 20, 999999 - i, 30, 0, 1, 0, &d);
		}
		return 0;
	}
	if (argc != 3 && argc != 4)
		return 2;
	n = atol(argv[1]);
	if (argc == 4)
		cohorts = atol(argv[3]);
	if (strcmp(argv[2], "-") != 0)
		mkdir(argv[2], 0777);
	for (i = 0; i < n; i++) {
		cohort = (int)(i % cohorts);
		day = 1 + (int)(i / cohorts % 29);
		sec = (int)(i / cohorts / 29 % 86400);
		d = draw(cohort);
		if (strcmp(argv[2], "-") == 0) {
			record(stdout, cohort, i, day, sec, 0, 0, &d);
			continue;
		}
		snprintf(path, sizeof path, "%s/model-%03d", argv[2], cohort);
		mkdir(path, 0777);
		snprintf(path, sizeof path, "%s/model-%03d/2026-06-%02dT%02d_%02d_%02d_00_00_%040lx.json",
		    argv[2], cohort, day, sec / 3600, sec / 60 % 60, sec % 60,
		    (unsigned long)i * 2654435761UL);
		if ((fp = fopen(path, "w")) == NULL)
			return 1;
		record(fp, cohort, i, day, sec, 0, 1, &d);
		if (fclose(fp) != 0)
			return 1;
		record(stdout, cohort, i, day, sec, 0, 0, &d);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
