/*
 * campaign: paired generic-versus-optimized campaigns
 * (perf-plan(1), perf-analyze(1), doc/campaign-report.md): the plan,
 * its digest and seeded run order, the results, and the analysis that
 * makes the vq.benchmark-report/1 document.
 */
#ifndef PERF_CAMPAIGN_CAMPAIGN_H
#define PERF_CAMPAIGN_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/canon.h"

/* A refusal: its error code (doc/campaign-report.md) and what is wrong. */
struct problem {
	const char *code;
	char *detail;
};

struct problems {
	struct problem *v;
	int n;
};

void problems_add(struct problems *p, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void problems_free(struct problems *p);

struct plan_variant {
	const char *name, *digest, *flags;
	const cJSON *libraries;		/* object, or NULL */
	double build_cost, deploy_cost;
	bool int_costs;			/* both integers (or absent): their sum is one */
	bool has_storage;
	long long storage;
};

struct plan_check {
	const char *quantity;
	double abs_tol, rel_tol;
};

struct plan_workload {
	const char *name, *digest;
	struct plan_check *checks;
	int nchecks;
};

struct plan {
	cJSON *doc;			/* the parsed plan; the strings point into it */
	char sha[SHA256_HEX];
	const char *id, *baseline;
	int base;			/* index of the baseline variant */
	struct plan_variant *variants;
	int nvariants;
	struct plan_workload *workloads;
	int nworkloads;
	const char **node_classes;
	int nnode_classes;
	long long mpi_ranks, threads, warmup, repeats;
	uint64_t seed;
	double confidence, margin;
};

/* One run of the order. */
struct order_run {
	int node_class, workload, variant;	/* plan indices */
	long long block;			/* <= 0: a warm-up block */
};

/*
 * Reads a plan from JSON text. Returns 0, or -1 with every problem found
 * in p (invalid_json alone when the text is not JSON).
 */
int plan_load(const char *text, size_t len, struct plan *pl, struct problems *p);
void plan_free(struct plan *pl);

/* The seeded run order (doc/campaign-report.md): a new array of *n runs. */
struct order_run *plan_order(const struct plan *pl, size_t *n);
/*
 * The run report of one run (perf-measure(1) writes it in the job's
 * working directory), and where a run's report lies among a pipeline's
 * artifacts: campaign/NODE_CLASS/BLOCK/WORKLOAD/VARIANT/ under dir ("" for
 * the path relative to it), a new string.
 */
#define CAMPAIGN_RUN_REPORT "vq-benchmark-run.json"
char *campaign_report_dir(const char *dir, const struct plan *pl, const struct order_run *r);

/* perf-plan --json: {plan_id, plan_sha256, order}. */
cJSON *plan_order_json(const struct plan *pl);

int plan_variant_index(const struct plan *pl, const char *name);
int plan_workload_index(const struct plan *pl, const char *name);
int plan_node_class_index(const struct plan *pl, const char *name);

/* A results file (vq.benchmark-results/1) checked against its plan. */
struct results {
	cJSON *doc;
	char sha[SHA256_HEX];		/* of the runs sorted by their key */
};

/* Reads results; 0, or -1 with the first problem in p. */
int results_load(const char *text, size_t len, const struct plan *pl, struct results *r,
    struct problems *p);
void results_free(struct results *r);

/* The vq.benchmark-report/1 document. */
cJSON *campaign_analyze(const struct plan *pl, const struct results *r);

#endif
