/*
 * changes: change points in a series, as Apache Otava (Hunter) finds them
 * (Fleming et al., ICPE 2023), reproduced exactly: a split step of
 * E-Divisive means (Matteson and James) with pairwise L1 distances over
 * sliding windows, each candidate kept while a two-sided Student t-test
 * finds it significant, then Otava's merge step.
 *
 * Sums, means and standard deviations are computed as numpy computes them
 * (pairwise summation in blocks of 8192), so every mean, standard
 * deviation and candidate is the one Otava finds; p-values come from the
 * incomplete beta function (stats_t_two_sided()), within 1e-12 of SciPy's.
 * Nothing depends on randomness or on the number of threads.
 */
#ifndef PERF_LANE_CHANGES_H
#define PERF_LANE_CHANGES_H

#include <stdbool.h>
#include <stddef.h>

/* A change point: index is the position of the first point after the change. */
struct change_point {
	size_t index;
	size_t n_before, n_after;	/* points in the segments compared */
	double mean_before, mean_after;
	double std_before, std_after;	/* population (ddof 0) */
	double pvalue;			/* NaN when both sides are constant and equal */
};

/* Otava's forward relative change, mean_after / mean_before - 1 (0 for a zero mean). */
double changes_forward(const struct change_point *cp);
/* max(|after/before - 1|, |before/after - 1|), each 0 for a zero denominator. */
double changes_magnitude(const struct change_point *cp);

/*
 * Fills the missing values of x[0..n) (has[i] false) as Otava does:
 * forward from the previous value, leading ones back from the first
 * value. Returns false when no value is present.
 */
bool changes_fill(double *x, const bool *has, size_t n);

/* Otava's first-pass p-value: 10p below 0.05, 2p below 0.5, else p. */
double changes_first_pass(double pvalue);

/*
 * The split step, resumable. After changes_split() over n points, weak
 * holds the weak change points (sorted, distinct) and resume the start of
 * the first window that the end of the series cut short; early[0..nearly)
 * are the weak points the windows before it found. Appending points
 * changes nothing before resume, so a later changes_split() over the
 * longer series continues from there (resume and early as left, n the
 * old length) and gives what a split of the whole series gives.
 */
struct changes_split {
	size_t n;
	size_t resume;
	size_t *early, nearly;
	size_t *weak, nweak;
	struct changes_cache *cache;	/* work kept between calls (private) */
	size_t compared, reused;	/* comparisons the last merge made, reused */
};

/*
 * The split step's candidate in the interval [s, e) (e - s >= 2) of the
 * window w[0..m) (m <= window): *index, the position of Otava's first
 * largest Q = A - B - C, and *qhat that Q, computed in lanes as the split
 * step computes them. For the unit test that holds it to plain loops.
 */
void changes_candidate(const double *w, size_t m, size_t window, size_t s, size_t e,
    size_t *index, double *qhat);

/*
 * Runs (or continues, when s->n > 0) the split step over x[0..n) with
 * windows of window >= 2 points at significance alpha.
 */
void changes_split(const double *x, size_t n, size_t window, double alpha,
    struct changes_split *s);
void changes_split_free(struct changes_split *s);

/*
 * changes_merge() of the weak points of s over x[0..n), the series its
 * last changes_split() read. The comparisons of segments that an earlier
 * call made over the same series (the same points, maybe fewer) are
 * reused rather than made again, so that the merge after an append costs
 * what the new tail costs; the answer is changes_merge()'s, bit for bit.
 * s->compared and s->reused count the comparisons it made and reused.
 */
size_t changes_merge_split(const double *x, size_t n, struct changes_split *s,
    double pvalue, double min_magnitude, struct change_point *out);

/*
 * One comparison of the merge: the change point at cp.index between the
 * segments x[lo..cp.index) and x[cp.index..hi), as the merge computes it.
 * It depends on those points only, so it stays right for any series whose
 * points lo to hi - 1 are the same.
 */
struct changes_memo {
	size_t lo, hi;
	struct change_point cp;
};

/*
 * The comparisons the last changes_merge_split() of s used (what its next
 * merge would reuse), sorted by index, lo and hi: *out (malloc'd, NULL
 * when none) gets them; returns how many.
 */
size_t changes_memo_get(const struct changes_split *s, struct changes_memo **out);

/*
 * Gives s, after its changes_split(), comparisons m[0..n) for its next
 * changes_merge_split() to reuse (those it holds for the same positions
 * stay), as changes_memo_get() gave them for an earlier form of the
 * series, maybe in another process. The caller promises that the points
 * of each, x[lo..hi), are those of the series the next merge reads, and
 * that lo < cp.index < hi; n_before and n_after are taken from the
 * positions. What that merge does not use is then forgotten.
 */
void changes_memo_add(struct changes_split *s, const struct changes_memo *m, size_t n);

/*
 * The merge step over the weak points weak[0..nweak) (sorted) of
 * x[0..n): Otava's merge, including its recomputation of only the next
 * two points after a removal (the previous one keeps its statistics).
 * Writes the change points to out (room for nweak) and returns how many.
 */
size_t changes_merge(const double *x, size_t n, const size_t *weak, size_t nweak,
    double pvalue, double min_magnitude, struct change_point *out);

/*
 * Both steps over x[0..n) (window >= 2, Otava's defaults 50, 0.001, 0):
 * *out (malloc'd, NULL when none) gets the change points; returns how
 * many.
 */
size_t changes_find(const double *x, size_t n, size_t window, double pvalue,
    double min_magnitude, struct change_point **out);

#endif
