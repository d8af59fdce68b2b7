#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/opt.h"

/* The getopt arrays of the last (table, cmd) opt_next() saw. */
static struct {
	const struct opt_table *t;
	const char *cmd;
	struct option *longopts;
	char *optstring;
} parse;

/* The text of the last table opt_text() saw. */
static struct {
	const struct opt_table *t;
	buf text;
} usage = { NULL, BUF_INIT };

static int
val_of(const struct opt_def *o)
{
	return o->val != 0 ? o->val : o->letter;
}

static int
selected(const struct opt_def *o, const char *cmd)
{
	return cmd == NULL || (o->cmd != NULL && strcmp(o->cmd, cmd) == 0);
}

/* Appends o's long option to parse.longopts[*k], unless it is there already. */
static void
add_long(const struct opt_def *o, size_t *k)
{
	for (size_t i = 0; i < *k; i++)
		if (strcmp(parse.longopts[i].name, o->name) == 0)
			return;
	parse.longopts[*k].name = o->name;
	parse.longopts[*k].has_arg = o->arg != NULL ? required_argument : no_argument;
	parse.longopts[*k].val = val_of(o);
	(*k)++;
}

static void
build_getopt(const struct opt_table *t, const char *cmd)
{
	const char *w = t->long_order != NULL ? t->long_order : "";
	const struct opt_def *o;
	size_t n = 0, k = 0;
	buf s = BUF_INIT;

	free(parse.longopts);
	free(parse.optstring);
	for (o = t->opts; o->letter != 0 || o->name != NULL; o++)
		n++;
	parse.longopts = ecalloc(n + 1, sizeof *parse.longopts);
	/* First the names long_order lists, in its order. */
	while (*(w += strspn(w, " ")) != '\0') {
		size_t len = strcspn(w, " ");

		for (o = t->opts; o->letter != 0 || o->name != NULL; o++)
			if (o->name != NULL && selected(o, cmd) && strlen(o->name) == len &&
			    strncmp(o->name, w, len) == 0)
				add_long(o, &k);
		w += len;
	}
	if (t->flags & OPT_STOP_AT_OPERAND)
		buf_addc(&s, '+');
	for (o = t->opts; o->letter != 0 || o->name != NULL; o++) {
		if (!selected(o, cmd))
			continue;
		if (o->letter != 0) {
			buf_addc(&s, (char)o->letter);
			if (o->arg != NULL)
				buf_addc(&s, ':');
		}
		if (o->name != NULL)
			add_long(o, &k);
	}
	parse.optstring = buf_detach(&s);
	parse.t = t;
	parse.cmd = cmd;
}

int
opt_next(const struct opt_table *t, const char *cmd, int argc, char *argv[])
{
	if (parse.t != t || parse.cmd != cmd)
		build_getopt(t, cmd);
	/* Without long options, "--x" is getopt()'s invalid option '-', as before. */
	if (parse.longopts[0].name == NULL)
		return getopt(argc, argv, parse.optstring);
	return getopt_long(argc, argv, parse.optstring, parse.longopts, NULL);
}

/* "-l, --name arg", "-l arg" or "--name arg". */
static void
add_head(buf *b, const struct opt_def *o)
{
	if (o->head != NULL) {
		buf_adds(b, o->head);
		return;
	}
	if (o->letter != 0)
		buf_addf(b, "-%c%s", o->letter, o->name != NULL ? ", " : "");
	if (o->name != NULL)
		buf_addf(b, "--%s", o->name);
	if (o->arg != NULL)
		buf_addf(b, " %s", o->arg);
}

const char *
opt_text(const struct opt_table *t)
{
	buf *b = &usage.text;

	if (usage.t == t)
		return b->s;
	buf_reset(b);
	buf_adds(b, t->synopsis);
	buf_adds(b, "\noptions:\n");
	for (const struct opt_def *o = t->opts; o->letter != 0 || o->name != NULL; o++) {
		size_t start;
		int pad;

		if (o->help == NULL)
			continue;
		buf_adds(b, "  ");
		start = b->len;
		add_head(b, o);
		pad = t->width - (int)(b->len - start);
		buf_addf(b, "%*s", pad > 2 ? pad : 2, "");
		for (const char *h = o->help; *h != '\0'; h++) {
			buf_addc(b, *h);
			if (*h == '\n')
				buf_addf(b, "%*s", t->width + 2, "");
		}
		buf_addc(b, '\n');
	}
	usage.t = t;
	return b->s;
}

void
opt_dump(const struct opt_table *t, FILE *f)
{
	for (const struct opt_def *o = t->opts; o->letter != 0 || o->name != NULL; o++) {
		fprintf(f, "%s %d", o->cmd != NULL ? o->cmd : "-", o->arg != NULL);
		if (o->letter != 0)
			fprintf(f, " -%c", o->letter);
		if (o->name != NULL)
			fprintf(f, " --%s", o->name);
		fputc('\n', f);
	}
}

void
opt_usage(const struct opt_table *t, int status)
{
	const char *dump = getenv("PERF_OPTIONS_TABLE");

	if (status == 0 && dump != NULL && *dump != '\0') {
		opt_dump(t, stdout);
		exit(fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_TROUBLE);
	}
	cli_usage(opt_text(t), status);
}
