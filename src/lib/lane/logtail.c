#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/utf8.h"
#include "lane/logtail.h"

struct ring {
	buf line[LOGTAIL_LINES];
	long total;
};

static void
ring_push(struct ring *r, buf *cur)
{
	buf *slot = &r->line[r->total % LOGTAIL_LINES];

	buf_reset(slot);
	buf_add(slot, cur->s, cur->len);
	buf_reset(cur);
	r->total++;
}

/* Appends the bytes of b to cur, replacing invalid UTF-8 with U+FFFD. */
static void
add_text(buf *cur, const char *p, size_t n)
{
	size_t i = 0;
	uint32_t cp;
	int len;

	while (i < n) {
		if ((unsigned char)p[i] < 0x80) {
			buf_addc(cur, p[i++]);
			continue;
		}
		len = utf8_decode((const unsigned char *)p + i, n - i, &cp, false);
		if (len == 0) {
			buf_adds(cur, "\xef\xbf\xbd");
			i++;
		} else {
			buf_add(cur, p + i, (size_t)len);
			i += (size_t)len;
		}
	}
}

/* Reads one file's lines into the ring. */
static void
read_lines(struct ring *r, const char *path)
{
	FILE *fp = fopen(path, "rb");
	buf cur = BUF_INIT;
	char *line = NULL;
	size_t cap = 0, start, i, len;
	ssize_t got;
	bool nl;

	if (fp == NULL)
		return;
	while ((got = getline(&line, &cap, fp)) > 0) {
		len = (size_t)got;
		nl = line[len - 1] == '\n';
		if (nl)
			len--;
		if (nl && len > 0 && line[len - 1] == '\r')
			len--;
		/* A lone \r ends a line too (universal newlines). */
		for (start = 0, i = 0; i < len; i++)
			if (line[i] == '\r') {
				add_text(&cur, line + start, i - start);
				ring_push(r, &cur);
				start = i + 1;
			}
		if (start < len || nl) {
			add_text(&cur, line + start, len - start);
			ring_push(r, &cur);
		}
	}
	free(line);
	buf_free(&cur);
	fclose(fp);
}

static const char delim[] =
    "==============================================================================";

void
logtail_block(buf *out, const char *id, const char *path)
{
	bool have = path != NULL && *path != '\0';

	logtail_block_as(out, id, path, have ? path : "no log file recorded");
}

void
logtail_block_as(buf *out, const char *id, const char *path, const char *shown)
{
	struct ring r;
	char *rotated;
	long first, i;
	bool have = path != NULL && *path != '\0';

	memset(&r, 0, sizeof r);
	if (have) {
		rotated = easprintf("%s.1", path);
		read_lines(&r, rotated);
		read_lines(&r, path);
		free(rotated);
	}
	buf_addf(out, "%s\nWorker log tail for %s (%s)\n%s\n", delim, id, shown, delim);
	if (r.total == 0) {
		buf_addf(out, "<worker log unavailable: file missing or unreadable>\n%s",
		    delim);
		return;
	}
	if (r.total > LOGTAIL_LINES)
		buf_addf(out, "... truncated, showing last %d of %ld lines ...\n",
		    LOGTAIL_LINES, r.total);
	first = r.total > LOGTAIL_LINES ? r.total - LOGTAIL_LINES : 0;
	for (i = first; i < r.total; i++) {
		buf *l = &r.line[i % LOGTAIL_LINES];
		buf_add(out, l->s, l->len);
		buf_addc(out, '\n');
	}
	buf_adds(out, delim);
	for (i = 0; i < LOGTAIL_LINES; i++)
		buf_free(&r.line[i]);
}
