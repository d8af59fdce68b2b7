/*
 * Unit tests for decision: the stored object and its id, parsing, the
 * store's decisions newest first with reverts, the accept in force, and
 * which records an accept's baseline admits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/isotime.h"
#include "core/json.h"
#include "lane/decision.h"
#include "tap.h"

static char k0[] = "wan-t2v", k1[] = "1.3b", k2[] = "3", k3[] = "rf", k4[] = "hw", k5[] = "sw";
static char *const ident[IDENTITY_KEYS] = { k0, k1, k2, k3, k4, k5 };

/* A decision of kind k on record rel (at day rday) decided on day wday. */
static void
make(struct decision *d, enum decision_kind k, const char *rel, int rday, int wday,
    const char *reverts)
{
	memset(d, 0, sizeof *d);
	d->kind = k;
	d->by = estrdup("alice");
	d->when = easprintf("2026-02-%02dT12:00:00+00:00", wday);
	isotime_parse(d->when, &d->instant);
	d->reason = estrdup("why");
	for (int i = 0; i < IDENTITY_KEYS; i++)
		d->identity[i] = estrdup(ident[i]);
	d->metric[policy_metric_index("dit_time_s")] = true;
	d->record = estrdup(rel);
	d->record_timestamp = easprintf("2026-02-%02dT00:00:00+00:00", rday);
	isotime_parse(d->record_timestamp, &d->record_instant);
	d->reverts = reverts != NULL ? estrdup(reverts) : NULL;
}

/* Stores d under dir, as perf-seed upload would; its id is set. */
static void
store(const char *dir, struct decision *d)
{
	cJSON *o = decision_json(d);
	buf text = BUF_INIT;
	char *rel, *path, *sub;
	FILE *f;

	rel = decision_path(d->id);
	path = easprintf("%s/%s", dir, rel);
	free(rel);

	sub = easprintf("%s/" DECISIONS_DIR, dir);
	mkdir(sub, 0777);
	json_write(&text, o, JSON_INDENT2, NULL);
	f = fopen(path, "w");
	fwrite(text.s, 1, text.len, f);
	fclose(f);
	cJSON_Delete(o);
	buf_free(&text);
	free(path);
	free(sub);
}

int
main(void)
{
	char tmpl[] = "/tmp/test_decision.XXXXXX", *dir = mkdtemp(tmpl);
	struct decision a, b, r, x;
	struct decisions ds;
	cJSON *o, *back;
	char *why, *path;
	int dit = policy_metric_index("dit_time_s"), lat = policy_metric_index("latency");
	int64_t t;

	err_init("test_decision");
	/* Window order: by instant, then by store path. */
	ok(decision_order(1, "b", 2, "a") < 0, "an earlier instant comes first");
	ok(decision_order(2, "a", 1, "b") > 0, "a later instant comes after");
	ok(decision_order(1, "a", 1, "b") < 0, "one instant: the path decides");
	ok(decision_order(1, "a", 1, "a") == 0, "the same record is in the same place");
	/* The record's instant: ISOTIME_MIN without a readable record_timestamp. */
	memset(&x, 0, sizeof x);
	decision_set_record_instant(&x);
	ok(x.record_instant == ISOTIME_MIN, "no record_timestamp: the oldest instant");
	x.record_timestamp = (char *)"not a time";
	decision_set_record_instant(&x);
	ok(x.record_instant == ISOTIME_MIN, "an unreadable record_timestamp: the oldest instant");
	x.record_timestamp = (char *)"1970-01-01T00:00:01+00:00";
	decision_set_record_instant(&x);
	ok(x.record_instant == 1000000, "a record_timestamp gives its instant");
	memset(&x, 0, sizeof x);
	/* The object: its id first, 16 hex digits of the rest's canonical SHA-256. */
	make(&a, DECISION_ACCEPT, "m/41.json", 11, 11, NULL);
	o = decision_json(&a);
	is_str(o->child->string, "id", "the id comes first");
	ok(strlen(a.id) == DECISION_ID_LEN, "the id is 16 hex digits");
	back = decision_json(&a);
	ok(json_identical(o, back), "the same decision gives the same object and id");
	cJSON_Delete(back);
	ok((why = decision_parse(o, &x)) == NULL && strcmp(x.id, a.id) == 0 && x.metric[dit] &&
	    !x.metric[lat] && x.in_force, "a stored decision parses back");
	free(why);
	decision_free(&x);
	json_set(o, "reason", json_new_string(""));
	why = decision_parse(o, &x);
	ok(why != NULL, "an empty reason is refused: %s", why != NULL ? why : "");
	free(why);
	decision_free(&x);
	cJSON_Delete(o);
	path = decision_path("0123456789abcdef");
	is_str(path, ".perfkite-decisions/0123456789abcdef.decision",
	    "hidden, and never *.json");
	free(path);

	/* None stored: no decision; then an accept at 41, one at 30, a revert of 41's. */
	ok(decisions_load(dir, &ds) == 0 && ds.n == 0, "a store without decisions has none");
	store(dir, &a);
	make(&b, DECISION_ACCEPT, "m/30.json", 1, 12, NULL);
	store(dir, &b);
	ok(decisions_load(dir, &ds) == 0 && ds.n == 2, "two decisions read");
	is_str(ds.d[0].id, b.id, "newest first");
	ok(decisions_accept(&ds, ident, dit) != NULL &&
	    strcmp(decisions_accept(&ds, ident, dit)->id, a.id) == 0,
	    "the accept in force is the one of the latest record");
	ok(decisions_accept(&ds, ident, lat) == NULL, "no accept of another metric");
	ok(decisions_latest(&ds, ident, dit, "m/30.json") != NULL &&
	    decisions_latest(&ds, ident, dit, "m/29.json") == NULL, "decisions by record");
	/* What a's baseline admits. */
	{
		const struct decision *acc = decisions_accept(&ds, ident, dit);
		const char *text = "{\"comparison_status\":\"REGRESSION\","
		    "\"run_source\":\"scheduled_main\"}";
		json_error e;
		cJSON *reg = json_parse(text, strlen(text), &e);

		isotime_parse("2026-02-10T00:00:00+00:00", &t);
		ok(!decision_admits(acc, t, "m/40.json", reg, true), "never a record before it");
		ok(decision_admits(acc, acc->record_instant, "m/41.json", reg, false),
		    "the accepted record itself, whatever its status");
		isotime_parse("2026-02-11T06:00:00+00:00", &t);
		ok(decision_admits(acc, t, "m/41b.json", reg, false),
		    "a regression that ran before the decision");
		isotime_parse("2026-02-12T00:00:00+00:00", &t);
		ok(!decision_admits(acc, t, "m/42.json", reg, false),
		    "not a regression that ran after it");
		ok(decision_admits(acc, t, "m/42.json", reg, true), "a trusted record after it");
		cJSON_Delete(reg);
	}
	make(&r, DECISION_REVERT, "m/41.json", 11, 13, a.id);
	store(dir, &r);
	decisions_free(&ds);
	ok(decisions_load(dir, &ds) == 0 && ds.n == 3 && ds.d[0].kind == DECISION_REVERT,
	    "the revert is the newest");
	ok(!decisions_find(&ds, a.id)->in_force, "the reverted accept is not in force");
	ok(decisions_accept(&ds, ident, dit) != NULL &&
	    strcmp(decisions_accept(&ds, ident, dit)->id, b.id) == 0,
	    "the older accept is in force again");
	decisions_free(&ds);
	/* Named metrics: kept sorted once, stored as named_metrics, decided alone. */
	{
		struct decision n;
		const cJSON *nm;
		int64_t lo, hi;

		o = decision_json(&a);
		ok(json_get(o, "named_metrics") == NULL,
		    "a decision on the six alone has no named_metrics: its bytes and id stay");
		cJSON_Delete(o);
		make(&n, DECISION_ACCEPT, "m/45.json", 15, 16, NULL);
		n.metric[dit] = false;
		decision_add_named(&n, "time");
		decision_add_named(&n, "BM/x");
		decision_add_named(&n, "time");
		ok(n.nnamed == 2 && strcmp(n.named[0], "BM/x") == 0 &&
		    strcmp(n.named[1], "time") == 0, "named metrics sorted, each once");
		o = decision_json(&n);
		nm = json_get(o, "named_metrics");
		ok(cJSON_GetArraySize(json_get(o, "metrics")) == 0 && cJSON_GetArraySize(nm) == 2,
		    "stored: no six, two named metrics");
		ok((why = decision_parse(o, &x)) == NULL && x.nnamed == 2 &&
		    decision_on_named(&x, "time") && !decision_on_named(&x, "rss"),
		    "a decision on named metrics alone parses back");
		free(why);
		decision_free(&x);
		cJSON_ReplaceItemInArray((cJSON *)nm, 0, json_new_string("bad\nname"));
		why = decision_parse(o, &x);
		ok(why != NULL, "a named metric with a control character is refused: %s",
		    why != NULL ? why : "");
		free(why);
		decision_free(&x);
		cJSON_Delete(o);
		store(dir, &n);
		ok(decisions_load(dir, &ds) == 0 && ds.n == 4, "the named decision read");
		ok(decisions_accept_named(&ds, ident, "time") != NULL &&
		    strcmp(decisions_accept_named(&ds, ident, "time")->id, n.id) == 0,
		    "the accept of a named metric");
		ok(decisions_accept_named(&ds, ident, "rss") == NULL, "not of another named metric");
		ok(strcmp(decisions_accept(&ds, ident, dit)->id, b.id) == 0,
		    "the six's accept is not moved by a named one");
		ok(decisions_latest_named(&ds, ident, "BM/x", "m/45.json") != NULL &&
		    decisions_latest_named(&ds, ident, "BM/x", "m/44.json") == NULL,
		    "named decisions by record");
		isotime_parse("2026-02-14T00:00:00+00:00", &lo);
		isotime_parse("2026-02-15T00:00:00+00:00", &hi);
		ok(decisions_accept_between_named(&ds, ident, "time", lo, "m/44.json", hi,
		    "m/45.json") != NULL && decisions_accept_between(&ds, ident, dit, lo, "m/44.json",
		    hi, "m/45.json") == NULL, "the accept between two records, by name only");
		decisions_free(&ds);
		decision_free(&n);
	}
	/* A file that is not a decision is reported, with its name. */
	{
		char *bad = easprintf("%s/" DECISIONS_DIR "/bad" DECISION_SUFFIX, dir);
		FILE *f = fopen(bad, "w");

		fputs("{\"decision_schema_version\": 1}", f);
		fclose(f);
		ok(decisions_load(dir, &ds) == -1 && ds.n == 0, "a bad decision file fails the load");
		unlink(bad);
		free(bad);
	}
	decision_free(&a);
	decision_free(&b);
	decision_free(&r);
	{
		char *cmd = easprintf("rm -rf '%s'", dir);

		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
		free(cmd);
	}
	return done_testing();
}
