#include <time.h>

#include "core/now.h"

static double
seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
now_monotonic(void)
{
	return seconds(CLOCK_MONOTONIC);
}

double
now_wall(void)
{
	return seconds(CLOCK_REALTIME);
}

double
now_thread_cpu(void)
{
	return seconds(CLOCK_THREAD_CPUTIME_ID);
}
