#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/file_batch.h"

#if defined(__linux__) && __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* Opens of a batch, or its reads and closes, in the ring at once. */
#define RING_ENTRIES (2 * FILE_BATCH_MAX)

struct file_batch {
	int fd;
	void *sq_map, *cq_map;
	size_t sq_len, cq_len, sqe_len;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	char *bufs;
	size_t bufsize;
};

static int
ring_enter(int fd, unsigned submit, unsigned wait)
{
	return (int)syscall(SYS_io_uring_enter, fd, submit, wait, IORING_ENTER_GETEVENTS,
	    NULL, 0);
}

/* Whether the kernel knows the operations a batch uses. */
static bool
ring_supports(int fd)
{
	size_t len = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *p = ecalloc(1, len);
	static const int ops[] = { IORING_OP_OPENAT, IORING_OP_READ, IORING_OP_CLOSE };
	bool ok = syscall(SYS_io_uring_register, fd, IORING_REGISTER_PROBE, p, 256) == 0;

	for (size_t i = 0; ok && i < sizeof ops / sizeof *ops; i++)
		ok = ops[i] <= p->last_op && (p->ops[ops[i]].flags & IO_URING_OP_SUPPORTED);
	free(p);
	return ok;
}

struct file_batch *
file_batch_new(size_t bufsize)
{
	const char *env = getenv("PERF_FILE_BATCH");
	struct io_uring_params p;
	struct file_batch *b;
	char *sq, *cq;
	int fd;

	if (env != NULL && strcmp(env, "0") == 0)
		return NULL;
	memset(&p, 0, sizeof p);
	if ((fd = (int)syscall(SYS_io_uring_setup, RING_ENTRIES, &p)) < 0)
		return NULL;
	if (!ring_supports(fd) || p.sq_entries < RING_ENTRIES ||
	    p.cq_entries < RING_ENTRIES) {
		close(fd);
		return NULL;
	}
	b = ecalloc(1, sizeof *b);
	b->fd = fd;
	b->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	b->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	b->sqe_len = p.sq_entries * sizeof(struct io_uring_sqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		b->sq_len = b->cq_len = b->sq_len > b->cq_len ? b->sq_len : b->cq_len;
	b->sq_map = mmap(NULL, b->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
	    fd, IORING_OFF_SQ_RING);
	b->cq_map = (p.features & IORING_FEAT_SINGLE_MMAP) ? b->sq_map : mmap(NULL,
	    b->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
	    IORING_OFF_CQ_RING);
	b->sqes = mmap(NULL, b->sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
	    fd, IORING_OFF_SQES);
	if (b->sq_map == MAP_FAILED || b->cq_map == MAP_FAILED || b->sqes == MAP_FAILED) {
		if (b->sq_map != MAP_FAILED)
			munmap(b->sq_map, b->sq_len);
		if (b->cq_map != MAP_FAILED && b->cq_map != b->sq_map)
			munmap(b->cq_map, b->cq_len);
		if (b->sqes != MAP_FAILED)
			munmap(b->sqes, b->sqe_len);
		close(fd);
		free(b);
		return NULL;
	}
	sq = b->sq_map;
	cq = b->cq_map;
	b->sq_head = (unsigned *)(sq + p.sq_off.head);
	b->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	b->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	b->sq_array = (unsigned *)(sq + p.sq_off.array);
	b->cq_head = (unsigned *)(cq + p.cq_off.head);
	b->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	b->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	b->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	b->bufsize = bufsize;
	b->bufs = emalloc(FILE_BATCH_MAX * bufsize);
	return b;
}

void
file_batch_free(struct file_batch *b)
{
	if (b == NULL)
		return;
	munmap(b->sqes, b->sqe_len);
	if (b->cq_map != b->sq_map)
		munmap(b->cq_map, b->cq_len);
	munmap(b->sq_map, b->sq_len);
	close(b->fd);
	free(b->bufs);
	free(b);
}

/* The next submission entry, cleared; the ring has room (one batch at a time). */
static struct io_uring_sqe *
next_sqe(struct file_batch *b, unsigned char op, unsigned long long tag)
{
	unsigned tail = *b->sq_tail, i = tail & *b->sq_mask;
	struct io_uring_sqe *s = &b->sqes[i];

	memset(s, 0, sizeof *s);
	s->opcode = op;
	s->user_data = tag;
	b->sq_array[i] = i;
	__atomic_store_n(b->sq_tail, tail + 1, __ATOMIC_RELEASE);
	return s;
}

/*
 * Submits what is queued and waits for want completions, each handed to
 * done(ctx, tag, res). The kernel may take fewer entries than offered
 * (the rest stay queued) or be interrupted: both are tried again.
 */
static void
ring_run(struct file_batch *b, unsigned want, void (*done)(void *, unsigned long long, int),
    void *ctx)
{
	unsigned got = 0, head, queued;

	while (got < want) {
		queued = __atomic_load_n(b->sq_tail, __ATOMIC_RELAXED) -
		    __atomic_load_n(b->sq_head, __ATOMIC_ACQUIRE);
		if (ring_enter(b->fd, queued, want - got) < 0) {
			if (errno == EAGAIN || errno == EBUSY)
				sched_yield();
			else if (errno != EINTR)
				die_errno(
				    "cannot read the store's files (io_uring_enter)");
		}
		head = *b->cq_head;
		while (head != __atomic_load_n(b->cq_tail, __ATOMIC_ACQUIRE)) {
			const struct io_uring_cqe *c = &b->cqes[head & *b->cq_mask];

			done(ctx, c->user_data, c->res);
			head++;
			got++;
		}
		__atomic_store_n(b->cq_head, head, __ATOMIC_RELEASE);
	}
}

/* Tags: the file's index, and whether the entry is its read or its close. */
enum { TAG_READ = 1 << 16, TAG_CLOSE = 1 << 17 };

struct pass {
	int *fd;
	long *res;
};

static void
opened(void *ctx, unsigned long long tag, int res)
{
	struct pass *ps = ctx;

	ps->fd[tag] = res;
	ps->res[tag] = res < 0 ? res : 0;
}

static void
read_done(void *ctx, unsigned long long tag, int res)
{
	struct pass *ps = ctx;

	if (tag & TAG_READ)
		ps->res[tag & 0xffff] = res;
}

void
file_batch_read(struct file_batch *b, int dfd, const char *const *names, size_t n,
    char **text, long *res)
{
	int fd[FILE_BATCH_MAX];
	struct pass ps = { fd, res };
	struct io_uring_sqe *s;
	unsigned nopen = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		s = next_sqe(b, IORING_OP_OPENAT, i);
		s->fd = dfd;
		s->addr = (unsigned long long)(uintptr_t)names[i];
		s->open_flags = O_RDONLY | O_CLOEXEC;
	}
	ring_run(b, (unsigned)n, opened, &ps);
	for (i = 0; i < n; i++) {
		text[i] = b->bufs + i * b->bufsize;
		text[i][0] = '\0';
		if (fd[i] < 0)
			continue;
		/* The close is hard-linked: it runs whether the read fails or not. */
		s = next_sqe(b, IORING_OP_READ, TAG_READ | i);
		s->fd = fd[i];
		s->addr = (unsigned long long)(uintptr_t)text[i];
		s->len = (unsigned)(b->bufsize - 1);
		s->off = 0;
		s->flags = IOSQE_IO_HARDLINK;
		s = next_sqe(b, IORING_OP_CLOSE, TAG_CLOSE | i);
		s->fd = fd[i];
		nopen++;
	}
	ring_run(b, 2 * nopen, read_done, &ps);
	for (i = 0; i < n; i++) {
		if (fd[i] < 0 || res[i] < 0)
			continue;
		if ((size_t)res[i] >= b->bufsize - 1)
			res[i] = FILE_BATCH_LONG;
		else
			text[i][res[i]] = '\0';
	}
}

#else

struct file_batch *
file_batch_new(size_t bufsize)
{
	(void)bufsize;
	return NULL;
}

void
file_batch_free(struct file_batch *b)
{
	(void)b;
}

void
file_batch_read(struct file_batch *b, int dfd, const char *const *names, size_t n,
    char **text, long *res)
{
	(void)b, (void)dfd, (void)names, (void)n, (void)text, (void)res;
	die("file_batch_read without io_uring");
}

#endif
