/*
 * A stand-in for libnvidia-ml.so.1, for tests on machines without a GPU:
 * the NVML entry points perf-collect uses, for the devices of FAKE_GPUS (as
 * the CUDA stand-in; the count only matters here). FAKE_NVLINK=1 reports
 * NVLink between every pair. Each call can be made to fail as the driver
 * does: FAKE_NVML_FAIL (nvmlInit), FAKE_NVML_NO_HANDLE=I (no handle for
 * device I, by index or PCI bus id), FAKE_NVML_P2P_FAIL (the P2P status
 * query). Memory in use is read, in MiB, from the file
 * FAKE_GPU_USED_MB_FILE when set (so a test runner can "allocate"), else
 * 1024 MiB. Clocks, power and temperature are fixed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nvml_dev {
	unsigned index;
};

static struct nvml_dev devs[16];

static unsigned
count(void)
{
	const char *spec = getenv("FAKE_GPUS");
	unsigned n = 1;

	if (spec == NULL)
		return 2;
	for (; *spec; spec++)
		n += *spec == ',';
	return n > 16 ? 16 : n;
}

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **h);
int nvmlDeviceGetMemoryInfo(void *h, unsigned long long *m);
int nvmlDeviceGetP2PStatus(void *a, void *b, int caps, int *status);
int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz);
int nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned *mhz);
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw);
int nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned *mw);
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *c);

int
nvmlInit_v2(void)
{
	if (getenv("FAKE_NVML_FAIL") != NULL)
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	for (unsigned i = 0; i < 16; i++)
		devs[i].index = i;
	return 0;
}

int
nvmlShutdown(void)
{
	return 0;
}

int
nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = count();
	return 0;
}

/* FAKE_NVML_NO_HANDLE names the device without a handle. */
static int
no_handle(unsigned i)
{
	const char *v = getenv("FAKE_NVML_NO_HANDLE");

	return v != NULL && *v != '\0' && (unsigned)atoi(v) == i;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	if (no_handle(i))
		return 999;	/* NVML_ERROR_UNKNOWN */
	if (i >= count())
		return 2;	/* NVML_ERROR_INVALID_ARGUMENT */
	*h = &devs[i];
	return 0;
}

int
nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **h)
{
	unsigned b;

	if (sscanf(bus, "%*x:%x:", &b) != 1 || b < 0x41 || b - 0x41 >= count())
		return 6;	/* NVML_ERROR_NOT_FOUND */
	if (no_handle(b - 0x41))
		return 999;
	*h = &devs[b - 0x41];
	return 0;
}

int
nvmlDeviceGetMemoryInfo(void *h, unsigned long long *m)
{
	const char *f = getenv("FAKE_GPU_USED_MB_FILE");
	double mb = 1024;
	FILE *fp;

	(void)h;
	if (f != NULL && (fp = fopen(f, "r")) != NULL) {
		if (fscanf(fp, "%lf", &mb) != 1)
			mb = 1024;
		fclose(fp);
	}
	m[0] = 48ULL << 30;
	m[2] = (unsigned long long)(mb * 1024 * 1024);
	m[1] = m[0] - m[2];
	return 0;
}

int
nvmlDeviceGetP2PStatus(void *a, void *b, int caps, int *status)
{
	(void)a;
	(void)b;
	if (caps != 2 || getenv("FAKE_NVML_P2P_FAIL") != NULL)
		return 3;	/* NVML_ERROR_NOT_SUPPORTED */
	*status = getenv("FAKE_NVLINK") != NULL && strcmp(getenv("FAKE_NVLINK"), "1") == 0 ?
	    0 : 4;		/* NVML_P2P_STATUS_NOT_SUPPORTED */
	return 0;
}

int
nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz)
{
	(void)h;
	(void)type;
	*mhz = 2040;
	return 0;
}

int
nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned *mhz)
{
	(void)h;
	(void)type;
	*mhz = 2520;
	return 0;
}

int
nvmlDeviceGetPowerUsage(void *h, unsigned *mw)
{
	(void)h;
	*mw = 251340;
	return 0;
}

int
nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned *mw)
{
	(void)h;
	*mw = 350000;
	return 0;
}

int
nvmlDeviceGetTemperature(void *h, int sensor, unsigned *c)
{
	(void)h;
	(void)sensor;
	*c = 61;
	return 0;
}
