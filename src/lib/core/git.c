#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/git.h"
#include "core/proc.h"

/* Set in the environment of git, so that this program knows it is the helper. */
#define ASKPASS_MARK "PERFKITE_GIT_ASKPASS"

/* The user name given with the token; Hugging Face's own helper uses it. */
#define TOKEN_USER "hf_user"

const char *
git_token(void)
{
	static const char *const names[] = { "HF_API_KEY", "HUGGINGFACE_HUB_TOKEN",
	    "HF_TOKEN" };
	const char *v;

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if ((v = getenv(names[i])) != NULL && *v != '\0')
			return v;
	return NULL;
}

void
git_askpass_main(int argc, char *argv[])
{
	const char *tok;

	if (getenv(ASKPASS_MARK) == NULL)
		return;
	tok = git_token();
	if (argc < 2 || tok == NULL)
		exit(1);
	if (strncmp(argv[1], "Username", 8) == 0)
		printf("%s\n", TOKEN_USER);
	else
		printf("%s\n", tok);
	exit(fflush(stdout) == 0 ? 0 : 1);
}

char *
git_redact(const char *text)
{
	const char *tok = git_token(), *p, *at, *end;
	buf b = BUF_INIT;
	size_t tn = tok != NULL ? strlen(tok) : 0;

	for (p = text; *p != '\0';) {
		if (tn > 0 && strncmp(p, tok, tn) == 0) {
			buf_adds(&b, "***");
			p += tn;
			continue;
		}
		if (strncmp(p, "://", 3) == 0) {
			/* scheme://user:password@host: keep the user, drop the password */
			buf_adds(&b, "://");
			p += 3;
			end = p + strcspn(p, "/ \t\n'\"");
			at = memchr(p, '@', (size_t)(end - p));
			if (at != NULL) {
				const char *colon = memchr(p, ':', (size_t)(at - p));

				if (colon != NULL) {
					buf_add(&b, p, (size_t)(colon - p));
					buf_adds(&b, ":***");
					p = at;
				}
			}
			continue;
		}
		buf_addc(&b, *p++);
	}
	return buf_detach(&b);
}

/*
 * git's own account of a failure: its first "fatal:" line, else its last
 * "error:" line, else its last line that is not a hint.
 */
char *
git_last_error(const buf *err)
{
	const char *s = err->s, *p = s, *pick = NULL, *last = NULL;
	size_t pn = 0, ln = 0, rank = 0;
	char *copy, *red;

	while (*p != '\0') {
		const char *e = strchr(p, '\n');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p), k = len;

		while (k > 0 && (p[k - 1] == '\r' || p[k - 1] == ' '))
			k--;
		if (k > 0 && strncmp(p, "hint:", 5) != 0) {
			last = p;
			ln = k;
			if (strncmp(p, "fatal:", 6) == 0 && rank < 2) {
				pick = p;
				pn = k;
				rank = 2;
			} else if (strncmp(p, "error:", 6) == 0 && rank < 2) {
				pick = p;
				pn = k;
				rank = 1;
			}
		}
		p += len + (e != NULL);
	}
	if (pick == NULL) {
		pick = last;
		pn = ln;
	}
	copy = pick != NULL ? estrndup(pick, pn) : estrdup("git failed");
	red = git_redact(copy);
	free(copy);
	return red;
}

/* The text after "remote: " and the other prefixes git puts on a line. */
static bool
is_error_line(const char *p, size_t n)
{
	if (n >= 8 && strncmp(p, "remote: ", 8) == 0) {
		p += 8;
		n -= 8;
	}
	return (n >= 6 && strncmp(p, "error:", 6) == 0) ||
	    (n >= 6 && strncmp(p, "fatal:", 6) == 0);
}

char *
git_errors(const buf *err)
{
	const char *p = err->s;
	buf b = BUF_INIT;
	char *red;

	while (*p != '\0') {
		const char *e = strchr(p, '\n');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p), k = len;

		while (k > 0 && (p[k - 1] == '\r' || p[k - 1] == ' '))
			k--;
		if (is_error_line(p, k)) {
			if (b.len > 0)
				buf_adds(&b, "; ");
			buf_add(&b, p, k);
		}
		p += len + (e != NULL);
	}
	if (b.len == 0)
		return git_last_error(err);
	red = git_redact(b.s);
	buf_free(&b);
	return red;
}

char *
git_lock_conflict(const buf *err)
{
	static const char open_[] = "Unable to create '", close_[] = ".lock': File exists";
	const char *s = err->s, *a, *z;
	char *path, *dot;

	if (s == NULL || (a = strstr(s, open_)) == NULL)
		return NULL;
	a += sizeof open_ - 1;
	if ((z = strstr(a, close_)) == NULL || memchr(a, '\n', (size_t)(z - a)) != NULL)
		return NULL;
	path = estrndup(a, (size_t)(z - a) + 5);
	while ((dot = strstr(path, "/./")) != NULL)
		memmove(dot, dot + 2, strlen(dot + 2) + 1);
	return path;
}

/* What git's environment loses: the GIT_DIR family a hook leaves, prompts, locales. */
static const char *const git_unset[] = { "GIT_DIR", "GIT_WORK_TREE",
    "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH",
    "GIT_ASKPASS", "SSH_ASKPASS", "GIT_TERMINAL_PROMPT", "LC_ALL",
    "LANGUAGE", "GIT_CONFIG_COUNT", ASKPASS_MARK, NULL };

/* What git's environment gets: no prompts, the C locale, extra, the token's helper. */
static char **
git_env(char *const *extra)
{
	static char noprompt[] = "GIT_TERMINAL_PROMPT=0", lc[] = "LC_ALL=C",
	    lang[] = "LANGUAGE=C", mark[] = ASKPASS_MARK "=1",
	    count[] = "GIT_CONFIG_COUNT=1", key[] = "GIT_CONFIG_KEY_0=credential.helper",
	    value[] = "GIT_CONFIG_VALUE_0=";
	static char self[4096];
	size_t j = 0, k;
	char **env;
	ssize_t len;

	for (k = 0; extra != NULL && extra[k] != NULL; k++)
		;
	env = ecalloc(k + 10, sizeof *env);
	env[j++] = noprompt;
	env[j++] = lc;
	env[j++] = lang;
	for (k = 0; extra != NULL && extra[k] != NULL; k++)
		env[j++] = extra[k];
	if (git_token() != NULL) {
		if (self[0] == '\0' &&
		    (len = readlink("/proc/self/exe", self, sizeof self - 1)) > 0)
			self[len] = '\0';
		if (self[0] != '\0') {
			static char askpass[sizeof self + 16];

			snprintf(askpass, sizeof askpass, "GIT_ASKPASS=%s", self);
			env[j++] = askpass;
			env[j++] = mark;
			/* Only the token: no helper of the user's stores it anywhere. */
			env[j++] = count;
			env[j++] = key;
			env[j++] = value;
		}
	}
	env[j] = NULL;
	return env;
}

int
git_run(const char *dir, const char *const *args, const char *in, size_t n,
    buf *out, buf *err)
{
	return git_run_env(dir, NULL, args, in, n, out, err);
}

int
git_run_env(const char *dir, char *const *extra, const char *const *args,
    const char *in, size_t n, buf *out, buf *err)
{
	static char git[] = "git";
	struct proc_spec spec = { 0 };
	struct proc_result res;
	size_t na;
	char **argv, **env;
	int rc, e;

	for (na = 0; args[na] != NULL; na++)
		;
	argv = ecalloc(na + 2, sizeof *argv);
	argv[0] = git;
	for (size_t i = 0; i < na; i++)
		argv[i + 1] = (char *)args[i];
	env = git_env(extra);
	spec.argv = argv;
	spec.dir = dir;
	spec.unset = git_unset;
	spec.env = env;
	spec.exec_error = "cannot run ";
	spec.same_group = true;
	spec.finish_on_stop = true;	/* a push or a clean-up is not cut short */
	spec.input = in;
	spec.input_len = n;
	spec.capture[0] = out;
	spec.capture[1] = err;
	rc = proc_run(&spec, &res);
	e = errno;
	free(argv);
	free(env);
	if (rc != 0) {
		if (err != NULL)
			buf_addf(err, "cannot run git: %s\n", strerror(e));
		return -1;
	}
	if (WIFEXITED(res.status))
		return WEXITSTATUS(res.status) == 127 && err != NULL && err->s != NULL &&
		    strstr(err->s, "cannot run git") != NULL ? -1 : WEXITSTATUS(res.status);
	if (err != NULL)
		buf_addf(err, "git was killed by signal %d\n",
		    WIFSIGNALED(res.status) ? WTERMSIG(res.status) : 0);
	return -1;
}
