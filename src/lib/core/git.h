/*
 * git: running git, for the git store and every program that reaches a
 * remote. git is started with an argument vector (never a shell), in a
 * clean environment of its own: no terminal prompts, the C locale, none
 * of the GIT_DIR family a git hook would leave behind, and, when a
 * Hugging Face token is set, the token handed over through GIT_ASKPASS
 * (this very program answering git's prompt), so that it never appears
 * on a command line, in a file or in a message.
 */
#ifndef PERF_CORE_GIT_H
#define PERF_CORE_GIT_H

#include <stddef.h>

#include "core/buf.h"

/*
 * To be called first in main() by every program that may run git: when
 * git started this program as its GIT_ASKPASS helper, answers the prompt
 * in argv[1] on stdout and exits.
 */
void git_askpass_main(int argc, char *argv[]);

/*
 * The token for the remote: the first non-empty of HF_API_KEY,
 * HUGGINGFACE_HUB_TOKEN and HF_TOKEN (the reference's order), or NULL.
 */
const char *git_token(void);

/*
 * A copy of text that can be shown: the token replaced by "***" and the
 * password of any "scheme://user:password@host" removed.
 */
char *git_redact(const char *text);

/*
 * Runs git args[0..] ("git" is implied) in dir, stdin from in (n bytes,
 * or nothing when in is NULL). Its stdout goes to out and its stderr to
 * err when given (else they are discarded). Returns its exit status, or -1
 * when it could not be run or was killed (reported in err).
 */
int git_run(const char *dir, const char *const *args, const char *in, size_t n,
    buf *out, buf *err);

/* git_run with NAME=VALUE entries added to git's environment. */
int git_run_env(const char *dir, char *const *extra, const char *const *args,
    const char *in, size_t n, buf *out, buf *err);

/* git's main complaint on its stderr (a "fatal:" line first), redacted. */
char *git_last_error(const buf *err);

/*
 * Every error line of git's stderr ("error:", "fatal:", the remote's
 * "remote: error:" and "remote: fatal:"), joined with "; ", redacted; the
 * main complaint (git_last_error) when there is none.
 */
char *git_errors(const buf *err);

/*
 * The lock file a git command found already there ("Unable to create
 * '<path>.lock': File exists", a "/./" removed), a new string, or NULL.
 */
char *git_lock_conflict(const buf *err);

#endif
