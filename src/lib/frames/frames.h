/*
 * frames: the frame-time recordings of perf-frames
 * (perf-frames(1), doc/frames-report.md): one CSV
 * checked row by row as it streams in, the per-run metrics, and the
 * nearest-rank and median statistics the report uses.
 *
 * A recording is fed one line at a time (frames_csv_line), then finished
 * (frames_csv_finish); memory grows only with the included intervals.
 * The first problem stops the checks and stays in code/detail/line.
 */
#ifndef PERF_FRAMES_FRAMES_H
#define PERF_FRAMES_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

#define FRAMES_HEADER \
	"frame_index,elapsed_ms,frame_time_ms,players,ai,vehicles,entities,ai_simulation_ms"
#define FRAMES_MIN_INTERVALS 120
#define FRAMES_MIN_COVERAGE 0.99

/* Which window edge an excluded interval crosses. */
enum frames_edge { FRAMES_WARMUP = 1, FRAMES_END = 2, FRAMES_BOTH = 3 };

struct frames_boundary {
	long long frame_index;
	enum frames_edge edge;
	double start, end, duration, overlap;
	bool start_int;		/* start is row 1's integer 0 */
	bool overlap_int;	/* both ends of the overlap are the window's integer edges */
};

/* The per-run metrics of the report, in its key order. */
enum {
	FM_MEDIAN_FT, FM_P95_FT, FM_P99_FT, FM_MEDIAN_FPS, FM_P05_FPS, FM_P01_FPS,
	FM_THROUGHPUT, FM_MEDIAN_AI, FM_P95_AI, FM_NMETRICS
};
extern const char *const frames_metric_keys[FM_NMETRICS];

/* A point of a run's frame-time distribution: fraction p, frame time ms. */
struct frames_point {
	double p, ms;
};
#define FRAMES_CURVE_POINTS 160

struct frames_csv {
	/* Set by the caller before the first line. */
	double W, E, D;		/* the window: warm-up end, end, duration (ms) */
	bool W_int, E_int;	/* W and E are integers in the report */
	long long pop[4];	/* declared players, ai, vehicles, entities */
	bool want_curve;	/* make the distribution curve (a full sort) */

	/* The recording so far. */
	long line;		/* lines fed, the header included */
	long long rows;		/* data rows */
	double prev_end, cum;
	bool ended;		/* the last row (prev_end) reached E: no row may follow */

	/* Included intervals. */
	double *ft, *ai;
	size_t n, cap;
	double included_ms;
	struct frames_boundary *bnd;
	size_t nbnd, capbnd;

	/* The first problem: its code, what is wrong, and its line (0: none). */
	const char *code;
	char detail[400];
	long err_line;

	/* After frames_csv_finish() succeeds. */
	double metrics[FM_NMETRICS];
	struct frames_point curve[FRAMES_CURVE_POINTS];
	int ncurve;
};

/* Starts a recording with the window and the declared populations. */
void frames_csv_init(struct frames_csv *c, double W, bool W_int, double D, double E,
    bool E_int, const long long pop[4]);
/*
 * Checks one line (without its "\n"; a trailing "\r" is removed here).
 * Returns 0, or -1 once a problem is found (every later call is a no-op).
 */
int frames_csv_line(struct frames_csv *c, const char *s, size_t n);
/*
 * The end of the recording: the checks that need all of it, then the
 * metrics and (with want_curve) the distribution curve; the included
 * values are released.
 * Returns 0, or -1 with the problem.
 */
int frames_csv_finish(struct frames_csv *c);
void frames_csv_free(struct frames_csv *c);
/*
 * Reads the recording at path through frames_csv_line() and
 * frames_csv_finish(), and its SHA-256 into hex. A file that cannot be
 * read, or is not UTF-8 anywhere, is unreadable_sample, whatever else is
 * wrong with it. Returns 0, or -1 with the problem.
 */
int frames_csv_read(struct frames_csv *c, const char *path, char hex[65]);

/* Nearest rank: element ceil(pct*n/100) (1-based) of sorted v[0..n), n > 0. */
double frames_rank(const double *v, size_t n, int pct);
/* Median of sorted v[0..n), n > 0: the middle, or the mean of the two middles. */
double frames_median(const double *v, size_t n);
/* Sorts non-negative finite doubles ascending (radix sort on their bits). */
void frames_sort(double *v, size_t n);

#endif
