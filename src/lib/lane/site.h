/*
 * site: the history store as a static site (perf-site(1)). Records are
 * grouped into cohorts as the dashboard groups them (lane/dash.h);
 * the site is index.html (what needs attention, then every cohort, sorted
 * naturally), one page per cohort under c/, changes.html, an Atom feed
 * (feed.xml) and each cohort's series as JSON under data/. Every page is
 * plain HTML5 with inline CSS and SVG; a few lines of optional inline
 * script filter and sort the tables. Nothing is fetched.
 */
#ifndef PERF_LANE_SITE_H
#define PERF_LANE_SITE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lane/store/read.h"

struct site;

/* The top-level keys of a record the site reads, *n of them. */
const char *const *site_keys(size_t *n);

/*
 * A site titled title, generated at now (µs), of the records not older
 * than days before now (days <= 0: every record).
 */
struct site *site_new(const char *title, int64_t now, long days);

/*
 * Adds a record of the store (a stream line that repeats a store path
 * already read is dropped: store_scan() reads the streams last).
 */
void site_add(struct site *s, const struct store_hit *h);

/*
 * History streams will be read too: site_add() remembers the store's
 * paths so that a stream's copy of a store record is read once.
 */
void site_streams(struct site *s);

/*
 * Adds a change point as perf-changes writes it; false (nothing added)
 * when it is not one (no metric known to the policy, no direction).
 */
bool site_add_change(struct site *s, const cJSON *cp);

/*
 * Adds the results of an A/B report of perf-ab (perfkite.ab-report/1)
 * read from file; each result belongs to the cohorts whose model_id is
 * its benchmark_id. False (nothing added) when it is not such a report.
 */
bool site_add_ab(struct site *s, const cJSON *report, const char *file);

/*
 * Writes the site into the existing, empty directory dir. Returns 0, or
 * -1 after reporting a file that could not be written.
 */
int site_write(struct site *s, const char *dir);

/* Records and cohorts read (after site_write(): grouped). */
size_t site_records(const struct site *s);

void site_free(struct site *s);

/*
 * The id of a record's cohort, as site_write() names its page
 * (c/<id>.html) and data file: a new string.
 */
char *site_cohort_id(const cJSON *rec);

#endif
