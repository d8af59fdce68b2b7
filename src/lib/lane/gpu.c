#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>

#include "core/host.h"
#include "lane/gpu.h"

/* The few entry points used, with the types of the vendors' headers. */
typedef int (*cu_init_t)(unsigned);
typedef int (*cu_count_t)(int *);
typedef int (*cu_get_t)(int *, int);
typedef int (*cu_name_t)(char *, int, int);
typedef int (*cu_mem_t)(size_t *, int);
typedef int (*cu_attr_t)(int *, int, int);
typedef int (*cu_pci_t)(char *, int, int);
typedef int (*nv_void_t)(void);
typedef int (*nv_count_t)(unsigned *);
typedef int (*nv_index_t)(unsigned, void **);
typedef int (*nv_pci_t)(const char *, void **);
typedef int (*nv_mem_t)(void *, unsigned long long *);
typedef int (*nv_p2p_t)(void *, void *, int, int *);
typedef int (*nv_uint_t)(void *, unsigned *);
typedef int (*nv_clock_t)(void *, int, unsigned *);

enum {
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	NVML_CLOCK_SM = 1,
	NVML_TEMPERATURE_GPU = 0,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_STATUS_OK = 0,
};

const char gpu_telemetry_header[] =
    "index, timestamp, clocks.current.sm [MHz], clocks.max.sm [MHz], "
    "power.draw [W], power.limit [W], temperature.gpu\n";

static void *
sym(void *lib, const char *name)
{
	return lib != NULL ? dlsym(lib, name) : NULL;
}

/* The NVML handle of a CUDA device: by PCI bus id, else by index. */
static void *
nvml_handle(const struct gpu *g, int ordinal, cu_pci_t pci)
{
	nv_pci_t by_pci = (nv_pci_t)sym(g->nvml_lib, "nvmlDeviceGetHandleByPciBusId_v2");
	nv_index_t by_index = (nv_index_t)sym(g->nvml_lib, "nvmlDeviceGetHandleByIndex_v2");
	char bus[64];
	void *h = NULL;

	if (pci != NULL && by_pci != NULL && pci(bus, sizeof bus, ordinal) == 0 &&
	    by_pci(bus, &h) == 0)
		return h;
	/* Same order only when CUDA sees every device. */
	if (getenv("CUDA_VISIBLE_DEVICES") == NULL && by_index != NULL &&
	    by_index((unsigned)ordinal, &h) == 0)
		return h;
	return NULL;
}

void
gpu_open(struct gpu *g)
{
	const char *cpath = getenv("PERF_CUDA_LIBRARY"), *npath = getenv("PERF_NVML_LIBRARY");
	cu_init_t init;
	cu_count_t count;
	cu_get_t get;
	cu_name_t name;
	cu_mem_t mem;
	cu_attr_t attr;
	cu_pci_t pci;
	nv_void_t ninit;
	int n = 0, dev;
	size_t bytes;
	struct utsname u;

	memset(g, 0, sizeof *g);
	/* The device without a GPU: never blank, the architecture at least. */
	if (!host_cpu_model(g->cpu_model, sizeof g->cpu_model))
		snprintf(g->cpu_model, sizeof g->cpu_model, "%s", uname(&u) == 0 ? u.machine :
		    "cpu");
	g->cuda_lib = dlopen(cpath != NULL ? cpath : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	g->nvml_lib = dlopen(npath != NULL ? npath : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	ninit = (nv_void_t)sym(g->nvml_lib, "nvmlInit_v2");
	g->nvml = ninit != NULL && ninit() == 0;
	init = (cu_init_t)sym(g->cuda_lib, "cuInit");
	count = (cu_count_t)sym(g->cuda_lib, "cuDeviceGetCount");
	get = (cu_get_t)sym(g->cuda_lib, "cuDeviceGet");
	name = (cu_name_t)sym(g->cuda_lib, "cuDeviceGetName");
	mem = (cu_mem_t)sym(g->cuda_lib, "cuDeviceTotalMem_v2");
	attr = (cu_attr_t)sym(g->cuda_lib, "cuDeviceGetAttribute");
	pci = (cu_pci_t)sym(g->cuda_lib, "cuDeviceGetPCIBusId");
	if (init == NULL || count == NULL || get == NULL || init(0) != 0 ||
	    count(&n) != 0 || n <= 0)
		return;
	g->cuda = true;
	g->count = n > GPU_MAX ? GPU_MAX : n;
	for (int i = 0; i < g->count; i++) {
		struct gpu_dev *d = &g->dev[i];

		if (get(&dev, i) != 0)
			continue;
		if (name == NULL || name(d->name, sizeof d->name, dev) != 0)
			d->name[0] = '\0';
		if (mem != NULL && mem(&bytes, dev) == 0)
			d->total_bytes = bytes;
		if (attr != NULL) {
			attr(&d->cc_major, CU_ATTR_CC_MAJOR, dev);
			attr(&d->cc_minor, CU_ATTR_CC_MINOR, dev);
		}
		if (g->nvml)
			d->nvml = nvml_handle(g, dev, pci);
	}
}

void
gpu_close(struct gpu *g)
{
	nv_void_t shut = (nv_void_t)sym(g->nvml_lib, "nvmlShutdown");

	if (g->nvml && shut != NULL)
		shut();
	if (g->nvml_lib != NULL)
		dlclose(g->nvml_lib);
	if (g->cuda_lib != NULL)
		dlclose(g->cuda_lib);
	memset(g, 0, sizeof *g);
}

const char *
gpu_device_name(const struct gpu *g)
{
	return g->cuda && g->count > 0 ? g->dev[0].name : g->cpu_model;
}

/*
 * As FastVideo decides it: without NVML (no library, or it does not
 * initialise) the platform has no NVLink check and answers "no"; a device
 * whose handle cannot be had is an error ("unknown"); a P2P query that
 * fails or answers anything but OK means "no".
 */
const char *
gpu_interconnect(const struct gpu *g, int n)
{
	nv_p2p_t p2p = (nv_p2p_t)sym(g->nvml_lib, "nvmlDeviceGetP2PStatus");
	int st;

	if (n <= 1)
		return "single_gpu";
	if (!g->nvml)
		return "none_or_partial";
	for (int i = 0; i < n; i++)
		if (i >= g->count || g->dev[i].nvml == NULL)
			return "unknown";
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (p2p == NULL ||
			    p2p(g->dev[i].nvml, g->dev[j].nvml, NVML_P2P_CAPS_INDEX_NVLINK, &st) != 0 ||
			    st != NVML_P2P_STATUS_OK)
				return "none_or_partial";
	return "full_nvlink";
}

bool
gpu_memory_used(const struct gpu *g, int i, unsigned long long *bytes)
{
	nv_mem_t meminfo = (nv_mem_t)sym(g->nvml_lib, "nvmlDeviceGetMemoryInfo");
	unsigned long long m[3];	/* nvmlMemory_t: total, free, used */

	if (!g->nvml || meminfo == NULL || i >= g->count || g->dev[i].nvml == NULL ||
	    meminfo(g->dev[i].nvml, m) != 0)
		return false;
	*bytes = m[2];
	return true;
}

int
gpu_telemetry(const struct gpu *g, buf *out)
{
	nv_count_t count = (nv_count_t)sym(g->nvml_lib, "nvmlDeviceGetCount_v2");
	nv_index_t by_index = (nv_index_t)sym(g->nvml_lib, "nvmlDeviceGetHandleByIndex_v2");
	nv_clock_t clock = (nv_clock_t)sym(g->nvml_lib, "nvmlDeviceGetClockInfo");
	nv_clock_t maxclock = (nv_clock_t)sym(g->nvml_lib, "nvmlDeviceGetMaxClockInfo");
	nv_uint_t power = (nv_uint_t)sym(g->nvml_lib, "nvmlDeviceGetPowerUsage");
	nv_uint_t limit = (nv_uint_t)sym(g->nvml_lib, "nvmlDeviceGetEnforcedPowerLimit");
	nv_clock_t temp = (nv_clock_t)sym(g->nvml_lib, "nvmlDeviceGetTemperature");
	unsigned n = 0, sm, smmax, mw, lim, t;
	struct timeval tv;
	struct tm tm;
	char ts[64];
	void *h;

	if (!g->nvml || count == NULL || by_index == NULL || count(&n) != 0)
		return -1;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof ts, "%Y/%m/%d %H:%M:%S", &tm);
	for (unsigned i = 0; i < n; i++) {
		if (by_index(i, &h) != 0)
			continue;
		buf_addf(out, "%u, %s.%03ld, ", i, ts, (long)(tv.tv_usec / 1000));
		if (clock != NULL && clock(h, NVML_CLOCK_SM, &sm) == 0)
			buf_addf(out, "%u MHz, ", sm);
		else
			buf_adds(out, "[N/A], ");
		if (maxclock != NULL && maxclock(h, NVML_CLOCK_SM, &smmax) == 0)
			buf_addf(out, "%u MHz, ", smmax);
		else
			buf_adds(out, "[N/A], ");
		if (power != NULL && power(h, &mw) == 0)
			buf_addf(out, "%.2f W, ", mw / 1000.0);
		else
			buf_adds(out, "[N/A], ");
		if (limit != NULL && limit(h, &lim) == 0)
			buf_addf(out, "%.2f W, ", lim / 1000.0);
		else
			buf_adds(out, "[N/A], ");
		if (temp != NULL && temp(h, NVML_TEMPERATURE_GPU, &t) == 0)
			buf_addf(out, "%u\n", t);
		else
			buf_adds(out, "[N/A]\n");
	}
	return 0;
}
