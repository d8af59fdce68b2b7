/*
 * host: what the machine says of itself.
 */
#ifndef PERF_CORE_HOST_H
#define PERF_CORE_HOST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The CPU's model: the first "model name" line of /proc/cpuinfo, blanks
 * after the colon and the newline taken off, into out (size n, shortened
 * to fit). False, with out empty, when there is none: no /proc/cpuinfo,
 * no such line (most ARM kernels) or an empty value. A missing model is
 * never an empty string: the caller decides what stands for it.
 */
bool host_cpu_model(char *out, size_t n);

#endif
