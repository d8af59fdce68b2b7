/*
 * seqbound: the alpha-spending bound of a group-sequential test
 * (Lan and DeMets 1983) with a look after every pair from min to max,
 * as perf-ab(1) repeats its analysis.
 *
 * The statistic is the standardized sum of the paired log-ratios, a
 * Brownian motion observed at information fractions t = n / max. The
 * spending function gives the two-sided type I error spent by fraction
 * t, alpha * t^rho (Kim and DeMets's power family: rho 1 is close to
 * Pocock's bound, rho 3 to O'Brien and Fleming's); the boundary c_k at
 * each look is the one whose crossing probability, having not crossed
 * before, is what the function spends between the previous look and
 * this one, computed by the recursive numerical integration of
 * Armitage, McPherson and Rowe on a fine grid. The result is each look's
 * nominal two-sided level 2 (1 - Phi(c_k)); an analysis at look k uses a
 * Student t interval at confidence 1 - level[k] (a repeated confidence
 * interval, Jennison and Turnbull), so that over all the looks together
 * the chance that any interval misses the true ratio stays at alpha.
 * Student t statistics with few degrees of freedom cross such bounds
 * somewhat more often than the normal recursion says, so the levels are
 * then scaled by one factor found on 40,000 seeded normal paths
 * (seqbound.c); the result is deterministic.
 */
#ifndef PERF_CORE_SEQBOUND_H
#define PERF_CORE_SEQBOUND_H

/* rho of the spending function perf-ab uses (perf-ab(1) says why). */
#define SEQBOUND_RHO 2.0

/*
 * Fills level[0 .. max - min] with the nominal two-sided level of the
 * looks after min, min + 1, ..., max pairs (2 <= min <= max <= 1000,
 * 0 < alpha < 1, rho > 0).
 */
void seqbound_levels(double alpha, double rho, int min, int max, double *level);

#endif
