#include "core/xml.h"

void
xml_escape(buf *b, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				buf_addc(b, ' ');	/* XML 1.0 has no other controls */
			else
				buf_addc(b, *s);
		}
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
