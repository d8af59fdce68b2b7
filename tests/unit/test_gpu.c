/*
 * Unit tests for gpu, through the test suite's stand-ins for libcuda.so.1
 * and libnvidia-ml.so.1 (PERF_STUBS names their directory).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "lane/gpu.h"
#include "tap.h"

int
main(void)
{
	const char *stubs = getenv("PERF_STUBS");
	char cuda[512], nvml[512];
	struct gpu g;
	unsigned long long used;
	buf b = BUF_INIT;

	setenv("PERF_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	setenv("PERF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	gpu_open(&g);
	ok(!g.cuda && !g.nvml && g.count == 0, "without the libraries: no GPU");
	ok(strcmp(gpu_device_name(&g), g.cpu_model) == 0 && g.cpu_model[0] != '\0',
	    "the device is the CPU: %s", g.cpu_model);
	ok(gpu_telemetry(&g, &b) == -1, "no telemetry without NVML");
	gpu_close(&g);

	if (stubs == NULL) {
		printf("ok %d # skip PERF_STUBS not set\n", ++tap_n);
		return done_testing();
	}
	snprintf(cuda, sizeof cuda, "%s/libfakecuda.so", stubs);
	snprintf(nvml, sizeof nvml, "%s/libfakenvml.so", stubs);
	setenv("PERF_CUDA_LIBRARY", cuda, 1);
	setenv("PERF_NVML_LIBRARY", nvml, 1);
	setenv("FAKE_GPUS", "NVIDIA L40S:48:8.9,NVIDIA L40S:48:8.9", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	gpu_open(&g);
	ok(g.cuda && g.nvml && g.count == 2, "two stand-in GPUs");
	is_str(gpu_device_name(&g), "NVIDIA L40S", "device 0's name");
	ok(g.dev[1].total_bytes == 48ULL << 30 && g.dev[1].cc_major == 8 && g.dev[1].cc_minor == 9,
	    "memory and compute capability");
	ok(g.dev[0].nvml != NULL && g.dev[1].nvml != NULL, "NVML handles found by PCI bus id");
	is_str(gpu_interconnect(&g, 2), "none_or_partial", "no NVLink");
	ok(gpu_memory_used(&g, 0, &used) && used == 1024ULL << 20, "memory in use");
	ok(gpu_telemetry(&g, &b) == 0, "telemetry");
	ok(strstr(b.s, ", 2040 MHz, 2520 MHz, 251.34 W, 350.00 W, 61\n") != NULL &&
	    strncmp(b.s, "0, ", 3) == 0 && strstr(b.s, "\n1, ") != NULL,
	    "one nvidia-smi style line per GPU: %s", b.s);
	gpu_close(&g);
	setenv("FAKE_NVLINK", "1", 1);
	gpu_open(&g);
	is_str(gpu_interconnect(&g, 2), "full_nvlink", "NVLink between every pair");
	gpu_close(&g);
	setenv("FAKE_CUDA_FAIL", "1", 1);
	gpu_open(&g);
	ok(!g.cuda, "a driver that fails cuInit: no GPU");
	gpu_close(&g);
	buf_free(&b);
	return done_testing();
}
