/*
 * gpu: the machine's GPUs, found at run time through the CUDA driver API
 * (libcuda.so.1) and NVML (libnvidia-ml.so.1), both loaded with dlopen so
 * that perfkite builds and runs without them; PERF_CUDA_LIBRARY and
 * PERF_NVML_LIBRARY name other files (the test suite's stand-ins). Without
 * CUDA the device is the CPU.
 */
#ifndef PERF_LANE_GPU_H
#define PERF_LANE_GPU_H

#include <stdbool.h>

#include "core/buf.h"

#define GPU_MAX 64

struct gpu_dev {
	char name[256];
	unsigned long long total_bytes;
	int cc_major, cc_minor;
	void *nvml;		/* the NVML handle of the same device, or NULL */
};

struct gpu {
	bool cuda;		/* the driver answered */
	bool nvml;
	int count;		/* devices CUDA makes visible */
	struct gpu_dev dev[GPU_MAX];
	char cpu_model[256];
	void *cuda_lib, *nvml_lib;
};

/* Discovers the devices; never fails (no library means no GPU). */
void gpu_open(struct gpu *g);
void gpu_close(struct gpu *g);

/* The name of device 0, or the CPU model without CUDA. */
const char *gpu_device_name(const struct gpu *g);

/*
 * The interconnect of devices 0..n-1, as FastVideo decides it: n <= 1
 * "single_gpu"; NVML missing or not initialising "none_or_partial"; a
 * device without an NVML handle "unknown"; a P2P NVLink query that fails
 * or is not OK for some pair "none_or_partial"; else "full_nvlink".
 */
const char *gpu_interconnect(const struct gpu *g, int n);

/* Memory in use on visible device i, in bytes. False when unknown. */
bool gpu_memory_used(const struct gpu *g, int i, unsigned long long *bytes);

/*
 * Appends one CSV line per NVML device, as
 * nvidia-smi --query-gpu=index,timestamp,clocks.sm,clocks.max.sm,power.draw,
 * power.limit,temperature.gpu --format=csv prints them. -1 without NVML.
 */
int gpu_telemetry(const struct gpu *g, buf *out);
/* The CSV header line of gpu_telemetry(), with its newline. */
extern const char gpu_telemetry_header[];

#endif
