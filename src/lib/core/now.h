/*
 * now: the clocks, read in one way everywhere, in seconds.
 */
#ifndef PERF_CORE_NOW_H
#define PERF_CORE_NOW_H

/* CLOCK_MONOTONIC: for durations and deadlines (a clock step moves nothing). */
double now_monotonic(void);

/* CLOCK_REALTIME: seconds since the epoch, for the times a record states. */
double now_wall(void);

/* CLOCK_THREAD_CPUTIME_ID: the CPU time of the calling thread (work, not waits). */
double now_thread_cpu(void);

#endif
