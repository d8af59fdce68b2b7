#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "lane/store/hidden_dir.h"

static bool
has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return name[0] != '.' && n > k && strcmp(name + n - k, suffix) == 0;
}

size_t
hidden_dir_load(const char *dir, const char *sub, const char *suffix, const char *what,
    bool stop, hidden_dir_each *each, void *ctx)
{
	char *path = easprintf("%s/%s", dir, sub);
	DIR *d;
	struct dirent *de;
	buf text = BUF_INIT;
	size_t bad = 0;

	if ((d = opendir(path)) == NULL) {
		if (errno != ENOENT && errno != ENOTDIR) {
			warn("%s: cannot read the %s", path, what);
			bad++;
		}
		free(path);
		return bad;
	}
	while ((bad == 0 || !stop) && (de = readdir(d)) != NULL) {
		char *file, *rel;
		cJSON *o;
		json_error e;

		if (!has_suffix(de->d_name, suffix))
			continue;
		file = easprintf("%s/%s", path, de->d_name);
		if (buf_read_file(&text, file) != 0) {
			warn("%s", file);
			bad++;
		} else if ((o = json_parse(text.s, text.len, &e)) == NULL) {
			warnx("%s:%ld: %s", file, e.line, e.msg);
			bad++;
		} else {
			rel = easprintf("%s/%s", sub, de->d_name);
			if (each(ctx, file, rel, o) != 0)
				bad++;
			free(rel);
			cJSON_Delete(o);
		}
		free(file);
	}
	closedir(d);
	free(path);
	buf_free(&text);
	return bad;
}
