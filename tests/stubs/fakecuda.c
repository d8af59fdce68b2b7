/*
 * A stand-in for libcuda.so.1, for tests on machines without a GPU: the
 * CUDA driver API entry points perf-collect uses, answering as the real
 * driver does for the devices described by FAKE_GPUS, a comma-separated
 * list of NAME:GIB:MAJOR.MINOR (default: two NVIDIA L40S, 48 GiB, 8.9).
 * FAKE_CUDA_FAIL=1 makes cuInit fail as without a driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 16

struct dev {
	char name[128];
	unsigned long long bytes;
	int major, minor;
};

static struct dev devs[MAXDEV];
static int ndev = -1;

static void
load(void)
{
	const char *spec = getenv("FAKE_GPUS");
	char *copy, *tok, *save;
	double gib;

	if (ndev >= 0)
		return;
	ndev = 0;
	if (spec == NULL)
		spec = "NVIDIA L40S:48:8.9,NVIDIA L40S:48:8.9";
	copy = strdup(spec);
	for (tok = strtok_r(copy, ",", &save); tok && ndev < MAXDEV; tok = strtok_r(NULL, ",", &save)) {
		struct dev *d = &devs[ndev];
		char *c1 = strchr(tok, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (c1 == NULL || c2 == NULL)
			continue;
		*c1 = *c2 = '\0';
		snprintf(d->name, sizeof d->name, "%s", tok);
		gib = atof(c1 + 1);
		d->bytes = (unsigned long long)(gib * 1024 * 1024 * 1024);
		sscanf(c2 + 1, "%d.%d", &d->major, &d->minor);
		ndev++;
	}
	free(copy);
}

int cuInit(unsigned flags);
int cuDeviceGetCount(int *n);
int cuDeviceGet(int *dev, int ordinal);
int cuDeviceGetName(char *name, int len, int dev);
int cuDeviceTotalMem_v2(size_t *bytes, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev);
int cuDeviceGetPCIBusId(char *bus, int len, int dev);

int
cuInit(unsigned flags)
{
	(void)flags;
	load();
	if (getenv("FAKE_CUDA_FAIL") != NULL)
		return 100;	/* CUDA_ERROR_NO_DEVICE */
	return 0;
}

int
cuDeviceGetCount(int *n)
{
	load();
	*n = ndev;
	return 0;
}

int
cuDeviceGet(int *dev, int ordinal)
{
	if (ordinal < 0 || ordinal >= ndev)
		return 101;	/* CUDA_ERROR_INVALID_DEVICE */
	*dev = ordinal;
	return 0;
}

int
cuDeviceGetName(char *name, int len, int dev)
{
	if (dev < 0 || dev >= ndev)
		return 101;
	snprintf(name, (size_t)len, "%s", devs[dev].name);
	return 0;
}

int
cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	if (dev < 0 || dev >= ndev)
		return 101;
	*bytes = devs[dev].bytes;
	return 0;
}

int
cuDeviceGetAttribute(int *v, int attr, int dev)
{
	if (dev < 0 || dev >= ndev)
		return 101;
	if (attr == 75)
		*v = devs[dev].major;
	else if (attr == 76)
		*v = devs[dev].minor;
	else
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	return 0;
}

int
cuDeviceGetPCIBusId(char *bus, int len, int dev)
{
	if (dev < 0 || dev >= ndev)
		return 101;
	snprintf(bus, (size_t)len, "0000:%02x:00.0", dev + 0x41);
	return 0;
}
