/* strvec: see strvec.h. */
#include <stdarg.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/strvec.h"

char *strvec_empty[1];

/* Appends s, which the vector then owns. */
static void
push_owned(struct strvec *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 16;

		sv->v = sv->cap ? erealloc(sv->v, cap * sizeof *sv->v) :
		    emalloc(cap * sizeof *sv->v);
		sv->cap = cap;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
strvec_push(struct strvec *sv, const char *s)
{
	push_owned(sv, estrdup(s));
}

void
strvec_pushv(struct strvec *sv, const char *const *v)
{
	for (; *v != NULL; v++)
		strvec_push(sv, *v);
}

void
strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push_owned(sv, evasprintf(fmt, ap));
	va_end(ap);
}

void
strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	if (sv->cap > 0)
		free(sv->v);
	sv->v = strvec_empty;
	sv->n = sv->cap = 0;
}
