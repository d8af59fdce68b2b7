/*
 * gen-raw: writes N realistic raw benchmark records (about 1.5 KB each, as
 * perf-collect writes them, compact) to stdout, for the benchmarks.
 * usage: gen-raw N
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 88172645463325252ULL;

static double
rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (double)(state >> 11) / 9007199254740992.0;
}

int
main(int argc, char *argv[])
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;
	static const char *gpus[] = { "NVIDIA L40S", "NVIDIA H100 80GB HBM3",
	    "NVIDIA GB10", "NVIDIA A100-SXM4-80GB" };

	for (i = 0; i < n; i++) {
		int cohort = (int)(i % 50), g = cohort % 4;
		double t0 = 20 + cohort * 0.37 + rnd(), t1 = t0 + rnd() * 0.3,
		    t2 = t0 - rnd() * 0.3, avg = (t0 + t1 + t2) / 3;
		double m0 = 9000 + cohort * 53.1 + rnd() * 40, m1 = m0 + rnd() * 20;

		printf("{\"benchmark_id\":\"bench-%02d-%dgpu\",\"result_schema_version\":2,"
		    "\"model_short_name\":\"Model-%02d\",\"device\":\"%s\",\"num_gpus\":%d,"
		    "\"num_warmup_runs\":2,\"num_measurement_runs\":3,"
		    "\"avg_generation_time_s\":%.3f,\"individual_times_s\":[%.3f,%.3f,%.3f],"
		    "\"throughput_fps\":%.3f,\"max_peak_memory_mb\":%.1f,"
		    "\"individual_peak_memories_mb\":[%.1f,%.1f,%.1f],"
		    "\"thresholds\":{\"max_generation_time_s\":%.1f,\"max_peak_memory_mb\":30000.0,"
		    "\"max_text_encoder_time_s\":5.0,\"max_dit_time_s\":60.0,"
		    "\"max_vae_decode_time_s\":10.0},"
		    "\"worker_log_path\":\"results/worker_logs/worker_bench-%02d_20260616T%06ldZ.log\","
		    "\"regression_thresholds\":{\"latency\":{\"threshold_percent\":0.1}},"
		    "\"commit\":\"%040lx\",\"run_source\":\"scheduled_main\",\"branch\":\"main\","
		    "\"pr_number\":\"\",\"test_scope\":\"full\","
		    "\"build_url\":\"https://buildkite.com/org/perf/builds/%ld\","
		    "\"build_id\":\"build-%ld\",\"job_id\":\"job-%ld\","
		    "\"timestamp\":\"2026-06-%02ldT%02ld:%02ld:00+00:00\","
		    "\"text_encoder_time_s\":%.3f,\"dit_time_s\":%.3f,\"vae_decode_time_s\":%.3f,"
		    "\"recipe_fingerprint\":\"%064x\",\"hardware_profile\":{\"device_type\":\"cuda\","
		    "\"gpu_count\":%d,\"gpus\":[{\"name\":\"%s\",\"memory_gb\":48,"
		    "\"compute_capability\":\"8.9\"}],\"interconnect\":\"none_or_partial\"},"
		    "\"hardware_profile_id\":\"hw-%016x\",\"software_profile\":{\"python\":\"3.12\","
		    "\"pytorch\":\"2.12\",\"cuda\":\"13.0\",\"packages\":{\"triton\":\"3.4.1\"},"
		    "\"attention_backend\":\"auto\",\"flash_attention_4_enabled\":false},"
		    "\"software_profile_id\":\"sw-%016x\",\"environment_fingerprint\":\"env-%016x\","
		    "\"workload_id\":\"workload-%02d\",\"variant_id\":\"v%d\",\"benchmark_version\":3}\n",
		    cohort, g + 1, cohort, gpus[g], g + 1, avg, t0, t1, t2, 45 / avg, m1,
		    m0, m1, m0 + 5, 35.0 + cohort, cohort, i % 1000000,
		    (unsigned long)i * 2654435761UL, i, i, i, 1 + i % 28, i / 60 % 24, i % 60,
		    1.0 + rnd() * 0.1, t0 * 0.8, 2.0 + rnd() * 0.2, cohort * 7919, g + 1,
		    gpus[g], cohort * 31, g * 17, (int)(i % 97), cohort, g);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
