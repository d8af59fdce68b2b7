#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/bisect.h"
#include "core/err.h"
#include "core/json.h"
#include "core/pyrandom.h"
#include "core/stats.h"

/* Running mean and sum of squared deviations (Welford). */
struct acc {
	int n;
	double mean, m2;
};

static void
acc_add(struct acc *a, double x)
{
	double d = x - a->mean;

	a->n++;
	a->mean += d / a->n;
	a->m2 += d * (x - a->mean);
}

struct probe {
	int seg, commit;
	struct acc s;
	double llr, threshold, delta, sigma;
	int verdict;		/* 1: behaves as hi, -1: as lo, 0: open */
	bool weak;
};

enum seg_state { SEARCH, SHARE, DONE };

struct segment {
	int lo, hi;		/* the change (lo, hi] */
	int a, b;		/* the culprit is in (a, b] */
	struct acc d;		/* ln hi - ln lo per round */
	struct acc x;		/* ln b - ln a per share pair */
	int reproduced;		/* -1 not known yet */
	int probe;		/* the open probe, or -1 */
	enum seg_state state;
	bool weak;
};

struct bisect {
	struct bisect_conf c;
	struct segment *seg;
	int nseg, cur;
	struct probe *probe;
	int nprobe;
	struct bisect_culprit *cul;
	int ncul;
	bool *skipped;
	struct pyrandom rng;
	int perm[6], nperm;	/* the block of orders, the next one */
	int pair[2], npair;
	struct bisect_round last;
	bool pending;		/* bisect_next() gave last, not yet recorded */
	int rounds;
	long runs;
	int weak;
	enum bisect_state final;
	bool over;
};

static const int orders[6][3] = {
	{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
};

static cJSON *
name_json(const struct bisect *b, int c)
{
	return b->c.names != NULL ? json_new_string(b->c.names[c]) : json_new_int(c);
}

static void
emit(struct bisect *b, cJSON *ev)
{
	if (b->c.event != NULL)
		b->c.event(b->c.ctx, ev);
	else
		cJSON_Delete(ev);
}

static bool
emitting(const struct bisect *b)
{
	return b->c.event != NULL;
}

static void
add_segment(struct bisect *b, int lo, int hi)
{
	struct segment *s;

	b->seg = erealloc(b->seg, ((size_t)b->nseg + 1) * sizeof *b->seg);
	s = &b->seg[b->nseg++];
	memset(s, 0, sizeof *s);
	s->lo = s->a = lo;
	s->hi = s->b = hi;
	s->reproduced = -1;
	s->probe = -1;
	s->state = SEARCH;
}

struct bisect *
bisect_new(const struct bisect_conf *conf)
{
	struct bisect *b = ecalloc(1, sizeof *b);

	b->c = *conf;
	b->skipped = ecalloc((size_t)conf->n + 1, sizeof *b->skipped);
	pyrandom_seed(&b->rng, conf->seed);
	b->nperm = 6;
	b->npair = 2;
	add_segment(b, 0, conf->n);
	return b;
}

void
bisect_free(struct bisect *b)
{
	if (b == NULL)
		return;
	free(b->seg);
	free(b->probe);
	free(b->cul);
	free(b->skipped);
	free(b);
}

/* The pooled variance of one run's log value, and its degrees of freedom. */
static double
sigma2(const struct bisect *b, int *df)
{
	double ss = 0;
	int k = 0;

	for (int i = 0; i < b->nseg; i++) {
		const struct segment *s = &b->seg[i];

		if (s->d.n > 1) {
			ss += s->d.m2 / 2;
			k += s->d.n - 1;
		}
		if (s->x.n > 1) {
			ss += s->x.m2 / 2;
			k += s->x.n - 1;
		}
	}
	for (int i = 0; i < b->nprobe; i++)
		if (b->probe[i].s.n > 1) {
			ss += b->probe[i].s.m2 / 6;
			k += b->probe[i].s.n - 1;
		}
	*df = k;
	return k > 0 ? ss / k : NAN;
}

double
bisect_sigma(const struct bisect *b)
{
	int df;

	return sqrt(sigma2(b, &df));
}

double
bisect_delta(const struct bisect *b)
{
	return b->seg[0].d.n > 0 ? b->seg[0].d.mean : NAN;
}

/* The mid of (a, b) not skipped nearest the middle, or -1. */
static int
choose_mid(const struct bisect *b, int lo, int hi)
{
	int m = lo + (hi - lo) / 2;

	for (int k = 0; k < hi - lo; k++) {
		int up = m + (k + 1) / 2 * (k % 2 ? 1 : -1);

		if (up > lo && up < hi && !b->skipped[up])
			return up;
	}
	return -1;
}

/* The next of the six orders, a shuffled block of them at a time. */
static const int *
next_order(struct bisect *b)
{
	if (b->nperm == 6) {
		for (int i = 0; i < 6; i++)
			b->perm[i] = i;
		pyrandom_shuffle(&b->rng, b->perm, 6, sizeof *b->perm);
		b->nperm = 0;
	}
	return orders[b->perm[b->nperm++]];
}

/* Whether the next pair runs its second commit first (AB/BA blocks). */
static bool
next_swap(struct bisect *b)
{
	if (b->npair == 2) {
		b->pair[0] = 0;
		b->pair[1] = 1;
		pyrandom_shuffle(&b->rng, b->pair, 2, sizeof *b->pair);
		b->npair = 0;
	}
	return b->pair[b->npair++] == 1;
}

static void
pair_round(struct bisect *b, int x, int y, const char *kind)
{
	bool swap = next_swap(b);

	b->last.commit[0] = swap ? y : x;
	b->last.commit[1] = swap ? x : y;
	b->last.nruns = 2;
	b->last.kind = kind;
}

/* Prepares the next round of segment s in b->last; false when the segment moved on. */
static bool
plan_round(struct bisect *b, struct segment *s)
{
	if (s->state == SHARE) {
		pair_round(b, s->a, s->b, "share");
		return true;
	}
	if (s->probe < 0) {
		int mid = choose_mid(b, s->a, s->b);

		if (mid < 0 && s->reproduced == 1) {
			/* One commit left (or only skipped ones beside it). */
			s->state = SHARE;
			s->a = s->b - 1;
			while (s->a > s->lo && b->skipped[s->a])
				s->a--;
			return false;
		}
		if (mid < 0) {
			pair_round(b, s->lo, s->hi, "confirm");
			return true;
		}
		b->probe = erealloc(b->probe, ((size_t)b->nprobe + 1) * sizeof *b->probe);
		memset(&b->probe[b->nprobe], 0, sizeof *b->probe);
		b->probe[b->nprobe].seg = (int)(s - b->seg);
		b->probe[b->nprobe].commit = mid;
		s->probe = b->nprobe++;
	}
	{
		const int *o = next_order(b);
		int who[3] = { s->lo, b->probe[s->probe].commit, s->hi };

		for (int i = 0; i < 3; i++)
			b->last.commit[i] = who[o[i]];
		b->last.nruns = 3;
		b->last.kind = "probe";
	}
	return true;
}

enum bisect_state
bisect_next(struct bisect *b, struct bisect_round *r)
{
	for (;;) {
		if (b->over)
			return b->final;
		if (b->cur >= b->nseg) {
			b->over = true;
			b->final = b->ncul > 0 ? BISECT_FOUND : BISECT_NO_CULPRIT;
			continue;
		}
		if (b->seg[b->cur].state == DONE) {
			b->cur++;
			continue;
		}
		if (plan_round(b, &b->seg[b->cur]))
			break;
	}
	b->pending = true;
	*r = b->last;
	return BISECT_ROUND;
}

static double
probe_alpha(const struct bisect *b, const struct segment *s)
{
	double l;

	if (b->c.probe_alpha > 0)
		return b->c.probe_alpha;
	l = log2((double)(s->hi - s->lo));
	return b->c.alpha / (l > 1 ? l : 1);
}

/* The check after confirm_rounds rounds: is the change of s there? */
static void
check_reproduced(struct bisect *b, struct segment *s)
{
	int df;
	double v = sigma2(b, &df), se = sqrt(2 * v / s->d.n), t = s->d.mean / se;
	double crit = df > 0 ? stats_t_quantile(1 - b->c.alpha / 2, df) : INFINITY;
	bool yes = v > 0 ? fabs(t) > crit : s->d.mean != 0;

	s->reproduced = yes;
	if (emitting(b)) {
		cJSON *ev = json_new_object();

		json_set(ev, "event", json_new_string(yes ? "reproduced" : "not_reproduced"));
		json_set(ev, "good", name_json(b, s->lo));
		json_set(ev, "bad", name_json(b, s->hi));
		json_set(ev, "rounds", json_new_int(s->d.n));
		json_set(ev, "delta", json_new_finite(s->d.mean));
		json_set(ev, "sigma", json_new_finite(sqrt(v)));
		json_set(ev, "t", json_new_finite(t));
		json_set(ev, "critical", json_new_finite(crit));
		emit(b, ev);
	}
	if (yes)
		return;
	s->state = DONE;
	if (s == &b->seg[0]) {
		b->over = true;
		b->final = BISECT_NOT_REPRODUCED;
	}
}

/* A probe decided, as the report and (with event) the progress show it. */
static cJSON *
probe_json(const struct bisect *b, const struct probe *p, const char *event)
{
	const struct segment *s = &b->seg[p->seg];
	cJSON *o = json_new_object();

	if (event != NULL)
		json_set(o, "event", json_new_string(event));

	json_set(o, "commit", name_json(b, p->commit));
	json_set(o, "good", name_json(b, s->lo));
	json_set(o, "bad", name_json(b, s->hi));
	json_set(o, "verdict", json_new_string(p->verdict > 0 ? "bad" : "good"));
	json_set(o, "weak", json_new_bool(p->weak));
	json_set(o, "rounds", json_new_int(p->s.n));
	json_set(o, "mean_s", json_new_finite(p->s.mean));
	json_set(o, "delta", json_new_finite(p->delta));
	json_set(o, "sigma", json_new_finite(p->sigma));
	json_set(o, "llr", json_new_finite(p->llr));
	json_set(o, "threshold", json_new_finite(p->threshold));
	return o;
}

/* The open probe of s after another round: decided or not. */
static void
judge_probe(struct bisect *b, struct segment *s)
{
	struct probe *p = &b->probe[s->probe];
	int df;
	double v = sigma2(b, &df), a = probe_alpha(b, s);

	if (s->reproduced == 0 || 2 * s->d.n < b->c.confirm_rounds || p->s.n < b->c.probe_min)
		return;
	p->delta = s->d.mean;
	p->sigma = sqrt(v);
	p->threshold = log((1 - a) / a);
	if (v > 0)
		p->llr = s->d.mean * p->s.mean * p->s.n / (3 * v);
	else
		p->llr = p->s.mean * s->d.mean > 0 ? INFINITY : p->s.mean * s->d.mean < 0 ?
		    -INFINITY : 0;
	if (p->llr >= p->threshold)
		p->verdict = 1;
	else if (p->llr <= -p->threshold)
		p->verdict = -1;
	else if (p->s.n >= b->c.probe_max) {
		p->verdict = p->llr >= 0 ? 1 : -1;
		p->weak = true;
		s->weak = true;
		b->weak++;
	} else
		return;
	if (p->verdict > 0)
		s->b = p->commit;
	else
		s->a = p->commit;
	s->probe = -1;
	if (emitting(b))
		emit(b, probe_json(b, p, "probe"));
}

/* A culprit, as the report and (with event) the progress show it. */
static cJSON *
culprit_json(const struct bisect *b, const struct bisect_culprit *k, const char *event)
{
	cJSON *o = json_new_object(), *sk = json_new_array();

	if (event != NULL)
		json_set(o, "event", json_new_string(event));
	json_set(o, "commit", name_json(b, k->commit));
	json_set(o, "parent", name_json(b, k->parent));
	json_set(o, "share", json_new_finite(k->share));
	json_set(o, "share_low", json_new_finite(k->low));
	json_set(o, "share_high", json_new_finite(k->high));
	json_set(o, "partial", json_new_bool(k->partial));
	json_set(o, "weak", json_new_bool(k->weak));
	for (int c = k->parent + 1; c < k->commit; c++)
		if (b->skipped[c])
			json_append(sk, name_json(b, c));
	json_set(o, "skipped_candidates", sk);
	return o;
}

/* The culprit of s after another share pair: its share measured or not. */
static void
judge_share(struct bisect *b, struct segment *s)
{
	struct bisect_culprit k;
	int df, nskip = 0;
	double v = sigma2(b, &df), a = probe_alpha(b, &b->seg[0]), th = log((1 - a) / a), dl = s->d.mean;
	double top = b->seg[0].d.mean, llr, z, se;
	bool partial;

	if (s->x.n < b->c.probe_min)
		return;
	llr = v > 0 ? (dl * s->x.mean * s->x.n - s->x.n * 0.75 * dl * dl) / (4 * v) :
	    s->x.mean / dl > 0.75 ? INFINITY : -INFINITY;
	if (llr >= th)
		partial = false;
	else if (llr <= -th)
		partial = true;
	else if (s->x.n >= b->c.probe_max)
		partial = true;	/* settled below, by the interval */
	else
		return;
	for (int c = s->a + 1; c < s->b; c++)
		nskip += b->skipped[c];
	memset(&k, 0, sizeof k);
	k.commit = s->b;
	k.parent = s->a;
	k.share = s->x.mean / top;
	z = stats_norm_quantile(1 - b->c.alpha / 2);
	se = sqrt((v > 0 ? v : 0) * (2.0 / s->x.n + k.share * k.share * 2.0 / b->seg[0].d.n)) /
	    fabs(top);
	k.low = k.share - z * se;
	k.high = k.share + z * se;
	if (partial && llr > -th) {
		/* Undecided at probe_max: partial only when clearly below the whole change. */
		double zp = stats_norm_quantile(1 - a), sp = se * fabs(top / dl);

		partial = s->x.mean / dl + zp * sp < 1;
	}
	k.partial = partial;
	k.weak = s->weak;
	k.nskipped = nskip;
	s->state = DONE;
	if (k.low > 0) {
		b->cul = erealloc(b->cul, ((size_t)b->ncul + 1) * sizeof *b->cul);
		b->cul[b->ncul++] = k;
	}
	/*
	 * A commit holding none of the change is no culprit: a wrong turn on
	 * the way, or a rest that reproduced by chance; the rest is bisected.
	 */
	if (emitting(b))
		emit(b, culprit_json(b, &k, k.low > 0 ? "culprit" : "no_culprit"));
	if (partial && b->ncul < b->c.max_culprits) {
		int lo = s->lo, a1 = s->a, b1 = s->b, hi = s->hi;

		/* add_segment() may move the segments. */
		if (a1 > lo)
			add_segment(b, lo, a1);
		if (hi > b1)
			add_segment(b, b1, hi);
	}
}

static double
value_of(const struct bisect_round *r, const double *v, int c)
{
	for (int i = 0; i < r->nruns; i++)
		if (r->commit[i] == c)
			return log(v[i]);
	return NAN;
}

void
bisect_record(struct bisect *b, const double *values)
{
	struct bisect_round *r = &b->last;
	struct segment *s = &b->seg[b->cur];
	double d = NAN, sv = NAN, xv = NAN;

	if (!b->pending)
		return;
	b->pending = false;
	b->rounds++;
	b->runs += r->nruns;
	if (strcmp(r->kind, "share") == 0) {
		xv = value_of(r, values, s->b) - value_of(r, values, s->a);
		acc_add(&s->x, xv);
	} else {
		d = value_of(r, values, s->hi) - value_of(r, values, s->lo);
		acc_add(&s->d, d);
		if (r->nruns == 3) {
			sv = 2 * value_of(r, values, b->probe[s->probe].commit) -
			    value_of(r, values, s->lo) - value_of(r, values, s->hi);
			acc_add(&b->probe[s->probe].s, sv);
		}
	}
	if (emitting(b)) {
		cJSON *ev = json_new_object(), *o = json_new_array(), *vv = json_new_array();

		for (int i = 0; i < r->nruns; i++) {
			json_append(o, name_json(b, r->commit[i]));
			json_append(vv, json_new_finite(values[i]));
		}
		json_set(ev, "event", json_new_string("round"));
		json_set(ev, "round", json_new_int(b->rounds));
		json_set(ev, "kind", json_new_string(r->kind));
		json_set(ev, "order", o);
		json_set(ev, "values", vv);
		if (isfinite(d))
			json_set(ev, "d", json_new_float(d));
		if (isfinite(sv))
			json_set(ev, "s", json_new_float(sv));
		if (isfinite(xv))
			json_set(ev, "x", json_new_float(xv));
		emit(b, ev);
	}
	if (strcmp(r->kind, "share") == 0) {
		judge_share(b, s);
		return;
	}
	if (s->reproduced < 0 && s->d.n >= b->c.confirm_rounds)
		check_reproduced(b, s);
	if (s->state == SEARCH && s->probe >= 0)
		judge_probe(b, s);
}

bool
bisect_skip(struct bisect *b, int c)
{
	struct segment *s = &b->seg[b->cur < b->nseg ? b->cur : 0];

	if (c <= 0 || c >= b->c.n)
		return false;
	for (int i = 0; i < b->nseg; i++)
		if (c == b->seg[i].lo || c == b->seg[i].hi)
			return false;
	b->skipped[c] = true;
	b->pending = false;
	if (s->state == SHARE && s->a == c) {
		/* The parent could not be built: the share is measured from below it. */
		while (s->a > s->lo && b->skipped[s->a])
			s->a--;
	}
	if (s->probe >= 0 && b->probe[s->probe].commit == c) {
		/* The probe is dropped with what it measured: it never happened. */
		if (s->probe == b->nprobe - 1)
			b->nprobe--;
		s->probe = -1;
	}
	if (emitting(b)) {
		cJSON *ev = json_new_object();

		json_set(ev, "event", json_new_string("skip"));
		json_set(ev, "commit", name_json(b, c));
		emit(b, ev);
	}
	return true;
}

int
bisect_rounds(const struct bisect *b)
{
	return b->rounds;
}

long
bisect_runs(const struct bisect *b)
{
	return b->runs;
}

/* Culprits by share, the largest first; in the order found among equals. */
static int
by_share(const void *x, const void *y)
{
	const struct bisect_culprit *p = x, *q = y;

	if (p->share != q->share)
		return p->share < q->share ? 1 : -1;
	return p->commit < q->commit ? -1 : p->commit > q->commit;
}

static struct bisect_culprit *
sorted_culprits(const struct bisect *b)
{
	struct bisect_culprit *v = ecalloc((size_t)b->ncul + 1, sizeof *v);

	if (b->ncul > 0) {	/* b->cul is NULL until a culprit is found */
		memcpy(v, b->cul, (size_t)b->ncul * sizeof *v);
		qsort(v, (size_t)b->ncul, sizeof *v, by_share);
	}
	return v;
}

int
bisect_culprits(const struct bisect *b, struct bisect_culprit *out, int max)
{
	struct bisect_culprit *v = sorted_culprits(b);

	for (int i = 0; i < b->ncul && i < max; i++)
		out[i] = v[i];
	free(v);
	return b->ncul;
}

int
bisect_weak_decisions(const struct bisect *b)
{
	return b->weak;
}

cJSON *
bisect_probes_json(const struct bisect *b)
{
	cJSON *a = json_new_array();

	for (int i = 0; i < b->nprobe; i++)
		if (b->probe[i].verdict != 0)
			json_append(a, probe_json(b, &b->probe[i], NULL));
	return a;
}

cJSON *
bisect_culprits_json(const struct bisect *b)
{
	cJSON *a = json_new_array();

	struct bisect_culprit *v = sorted_culprits(b);

	for (int i = 0; i < b->ncul; i++)
		json_append(a, culprit_json(b, &v[i], NULL));
	free(v);
	return a;
}
