#include "core/xml.h"

void
xml_escape(buf *b, const char *s)
{
	const char *run = s;	/* what needs no escape is copied a run at a time */

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 0x20 || c == '\n' || c == '\t') && c != '&' && c != '<' && c != '>' &&
		    c != '"' && c != '\'')
			continue;
		buf_add(b, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default: buf_addc(b, ' ');	/* XML 1.0 has no other controls */
		}
	}
	buf_add(b, run, (size_t)(s - run));
}

void
xml_md_text(buf *b, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '\n': case '\r': buf_addc(b, ' '); break;
		case '|': buf_addc(b, '/'); break;
		case '<': buf_adds(b, "&lt;"); break;
		default: buf_addc(b, *s);
		}
}
