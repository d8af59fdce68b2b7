/*
 * xml: text for the SVG figures and the HTML dashboard, and for the
 * Markdown of build annotations (which Buildkite renders as HTML).
 */
#ifndef PERF_CORE_XML_H
#define PERF_CORE_XML_H

#include "core/buf.h"

/*
 * Appends s escaped for XML and HTML text and attributes (& < > " '),
 * with control bytes XML 1.0 cannot hold (all but tab and newline) as spaces.
 */
void xml_escape(buf *b, const char *s);

/*
 * Appends s as text of a Markdown table cell: line breaks as spaces, "|"
 * as "/", "<" as "&lt;", so that no value becomes markup or a column.
 */
void xml_md_text(buf *b, const char *s);

#endif
