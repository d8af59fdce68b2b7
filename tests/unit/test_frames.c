/* Unit tests for frames: the row checks in their order, boundaries, ranks, the sort. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames/frames.h"
#include "tap.h"

static const long long pops[4] = { 12, 36, 4, 1000 };

static void
start(struct frames_csv *c)
{
	frames_csv_init(c, 30000, true, 60000, 90000, true, pops);
	frames_csv_line(c, FRAMES_HEADER, strlen(FRAMES_HEADER));
}

static int
row(struct frames_csv *c, const char *s)
{
	return frames_csv_line(c, s, strlen(s));
}

/* The code of a recording that is a header and the one row s. */
static const char *
code_of(const char *s)
{
	static struct frames_csv c;

	frames_csv_free(&c);
	start(&c);
	row(&c, s);
	return c.code != NULL ? c.code : "";
}

/* Writes text to a temporary file and reads it; returns the code. */
static const char *
read_code(const char *text, size_t n)
{
	static struct frames_csv c;
	char path[] = "/tmp/test_frames.XXXXXX", hex[65];
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n)
		return "mkstemp";
	close(fd);
	frames_csv_free(&c);
	frames_csv_init(&c, 30000, true, 60000, 90000, true, pops);
	frames_csv_read(&c, path, hex);
	unlink(path);
	return c.code != NULL ? c.code : "";
}

int
main(void)
{
	struct frames_csv c;
	double v[] = { 3, 0.0, 1, -0.0, 2, 0.0 }, big[1000];

	/* Each row check, in its order. */
	is_str(code_of("1,16.7,16.7,12,36,4,1000,0.5"), "", "a good row");
	is_str(code_of("1,16.7,16.7,12,36,4,1000"), "invalid_row", "seven fields");
	is_str(code_of("1,16.7,16.7,12,36,4,1000,0.5,"), "invalid_row", "nine fields");
	is_str(code_of("1,+16.7,16.7,12,36,4,1000,0.5"), "invalid_row", "a sign + is not the format");
	is_str(code_of("1,.5,.5,12,36,4,1000,0.5"), "invalid_row", ".5 is not the format");
	is_str(code_of("1,16.,16.7,12,36,4,1000,0.5"), "invalid_row", "16. is not the format");
	is_str(code_of("1,1e999,16.7,12,36,4,1000,0.5"), "invalid_row", "1e999 is not finite");
	is_str(code_of("1, 16.7,16.7,12,36,4,1000,0.5"), "invalid_row", "no spaces");
	is_str(code_of("1,16.7,16.7,-12,36,4,1000,0.5"), "invalid_row", "a negative population");
	is_str(code_of("1,16.7,16.7,12,36,4,1000,nan"), "invalid_row", "nan");
	is_str(code_of("2,16.7,16.7,12,36,4,1000,0.5"), "frame_index_gap", "frame_index 2 first");
	is_str(code_of("99999999999999999999999,16.7,16.7,12,36,4,1000,0.5"), "frame_index_gap",
	    "a frame_index beyond 64 bits");
	is_str(code_of("01,16.7,16.7,12,36,4,1000,0.5"), "", "a leading zero is a number");
	is_str(code_of("1,0,0.0001,12,36,4,1000,0.5"), "elapsed_not_increasing",
	    "elapsed 0 on row 1 (before frame_time_too_small)");
	is_str(code_of("1,0.0005,0.0005,12,36,4,1000,0.5"), "frame_time_too_small", "0.0005 ms");
	is_str(code_of("1,16.7,16.5,12,36,4,1000,0.5"), "frame_time_mismatch", "0.2 ms off");
	is_str(code_of("1,16.7,16.6,12,36,4,1000,0.5"), "", "0.1 ms off is allowed");
	is_str(code_of("1,16.7,16.7,12,37,4,1000,-0.5"), "population_mismatch",
	    "population before the negative AI time");
	is_str(code_of("1,16.7,16.7,12,36,4,1000,-0.5"), "negative_ai_simulation", "-0.5");
	is_str(code_of("1,16.7,16.7,12,36,4,1000,-0"), "", "-0 is not negative");
	is_str(code_of("1,16.7,16.7,12,36,4,1000,0.5\r"), "", "one \\r is removed");

	/* Cumulative drift: each row within 0.1, the sum not. */
	start(&c);
	row(&c, "1,10.0,10.0,12,36,4,1000,0");
	row(&c, "2,20.0,9.94,12,36,4,1000,0");
	row(&c, "3,30.0,9.94,12,36,4,1000,0");
	is_str(c.code ? c.code : "", "cumulative_time_mismatch", "the running sum drifts by 0.12");
	ok(c.err_line == 4, "on line 4 (the header is line 1)");
	frames_csv_free(&c);

	/* A row after the end, before its own format is looked at. */
	start(&c);
	row(&c, "1,90000.0,90000.0,12,36,4,1000,0");
	row(&c, "garbage");
	is_str(c.code ? c.code : "", "rows_after_boundary", "a row after the end");
	frames_csv_free(&c);

	/* One interval across both edges: its overlap is the integer D. */
	start(&c);
	row(&c, "1,29000.0,29000.0,12,36,4,1000,0");
	row(&c, "2,91000.0,62000.0,12,36,4,1000,0");
	ok(c.code == NULL && c.nbnd == 1 && c.bnd[0].edge == FRAMES_BOTH &&
	    c.bnd[0].overlap == 60000 && c.bnd[0].overlap_int && !c.bnd[0].start_int,
	    "warmup_and_end, overlap 60000 as an integer");
	ok(frames_csv_finish(&c) != 0 && strcmp(c.code, "insufficient_coverage") == 0 &&
	    c.err_line == 0, "nothing included: insufficient_coverage, no line");
	frames_csv_free(&c);

	/* Row 1 across the warm-up: start is the integer 0. */
	start(&c);
	row(&c, "1,30001.0,30001.0,12,36,4,1000,0");
	ok(c.nbnd == 1 && c.bnd[0].start_int && c.bnd[0].edge == FRAMES_WARMUP &&
	    c.bnd[0].overlap == 1 && !c.bnd[0].overlap_int, "row 1 across the warm-up");
	frames_csv_free(&c);

	/* The file: UTF-8 everywhere first, a final newline optional. */
	is_str(read_code("", 0), "invalid_header", "an empty file");
	is_str(read_code("\n", 1), "invalid_header", "an empty line");
	is_str(read_code("x\n1\n\xff\n", 7), "unreadable_sample",
	    "bad UTF-8 on line 3 wins over a bad header");
	is_str(read_code(FRAMES_HEADER "\n", strlen(FRAMES_HEADER) + 1), "recording_ended_early",
	    "a header only");
	is_str(read_code(FRAMES_HEADER "\n\n", strlen(FRAMES_HEADER) + 2), "invalid_row",
	    "a blank line is a row");

	/* Ranks and medians; the radix sort is stable over 0.0 and -0.0. */
	frames_sort(v, 6);
	ok(v[0] == 0 && !signbit(v[0]) && signbit(v[1]) && !signbit(v[2]) && v[3] == 1 &&
	    v[5] == 3, "sorted, equal keys in input order (0.0, -0.0, 0.0)");
	for (int i = 0; i < 1000; i++)
		big[i] = (double)((i * 7919) % 1000) / 8 + 0.001;
	frames_sort(big, 1000);
	{
		int sorted = 1;

		for (int i = 1; i < 1000; i++)
			sorted &= big[i - 1] <= big[i];
		ok(sorted, "1000 values sorted");
	}
	{
		double r[] = { 1, 2, 3, 4 };

		ok(frames_rank(r, 4, 95) == 4 && frames_rank(r, 4, 50) == 2 &&
		    frames_rank(r, 4, 1) == 1, "nearest rank: ceil(P*n/100)");
		ok(frames_median(r, 4) == 2.5 && frames_median(r, 3) == 2, "even and odd medians");
	}
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
