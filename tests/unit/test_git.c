/* Unit tests for git: redaction, git's complaint, running git. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/git.h"
#include "tap.h"

static void
redacts(const char *in, const char *want, const char *what)
{
	char *got = git_redact(in);

	is_str(got, want, "%s", what);
	free(got);
}

static void
complaint(const char *err, const char *want, const char *what)
{
	buf b = BUF_INIT;
	char *got;

	buf_adds(&b, err);
	got = git_last_error(&b);
	is_str(got, want, "%s", what);
	free(got);
	buf_free(&b);
}

int
main(void)
{
	buf out = BUF_INIT, err = BUF_INIT;

	unsetenv("HF_API_KEY");
	unsetenv("HUGGINGFACE_HUB_TOKEN");
	unsetenv("HF_TOKEN");
	ok(git_token() == NULL, "no token");
	setenv("HF_TOKEN", "hf_abc", 1);
	setenv("HUGGINGFACE_HUB_TOKEN", "", 1);
	is_str(git_token(), "hf_abc", "HF_TOKEN when the others are unset or empty");
	setenv("HUGGINGFACE_HUB_TOKEN", "hf_hub", 1);
	is_str(git_token(), "hf_hub", "HUGGINGFACE_HUB_TOKEN before HF_TOKEN");
	setenv("HF_API_KEY", "hf_key", 1);
	is_str(git_token(), "hf_key", "HF_API_KEY first");

	redacts("fatal: token hf_key rejected", "fatal: token *** rejected", "the token");
	redacts("https://user:pw@host/x.git", "https://user:***@host/x.git",
	    "a password in a URL");
	redacts("'https://hf_user:hf_key@huggingface.co/datasets/o/n/'",
	    "'https://hf_user:***@huggingface.co/datasets/o/n/'", "both at once");
	redacts("https://host/a@b", "https://host/a@b", "an @ in the path is kept");
	redacts("file:///srv/perf.git", "file:///srv/perf.git", "nothing to hide");
	redacts("", "", "empty");

	complaint("Cloning...\nfatal: repository 'x' not found\nmore\n",
	    "fatal: repository 'x' not found", "the first fatal line");
	complaint("error: one\nerror: two\nhint: do this\n", "error: two", "the last error line");
	complaint("something\nlast words  \nhint: x\n", "last words", "else the last line");
	complaint("", "git failed", "nothing said");

	ok(git_run(NULL, (const char *const[]){ "--version", NULL }, NULL, 0, &out, &err) == 0 &&
	    out.s != NULL && strncmp(out.s, "git version ", 12) == 0, "runs git");
	buf_reset(&out);
	ok(git_run(NULL, (const char *const[]){ "hash-object", "--stdin", NULL }, "x\n", 2,
	    &out, &err) == 0 && out.s != NULL &&
	    strncmp(out.s, "587be6b4c3f93f93c489c0111bba5596147a26cb", 40) == 0,
	    "feeds stdin");
	buf_reset(&err);
	ok(git_run("/nonexistent-dir", (const char *const[]){ "status", NULL }, NULL, 0,
	    NULL, &err) != 0 && err.s != NULL && strstr(err.s, "/nonexistent-dir") != NULL,
	    "a missing directory is reported");
	setenv("GIT_DIR", "/nonexistent/.git", 1);
	ok(git_run("/", (const char *const[]){ "rev-parse", "--git-dir", NULL }, NULL, 0,
	    NULL, NULL) != 0, "GIT_DIR of a hook does not leak into git");
	buf_free(&out);
	buf_free(&err);
	return done_testing();
}
