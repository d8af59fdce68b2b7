#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/host.h"

bool
host_cpu_model(char *out, size_t n)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[512], *v;

	if (n > 0)
		out[0] = '\0';
	while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
		if (strncmp(line, "model name", 10) == 0 && (v = strchr(line, ':')) != NULL) {
			v += strspn(v + 1, " \t") + 1;
			v[strcspn(v, "\n")] = '\0';
			if (n > 0)
				snprintf(out, n, "%s", v);
			break;
		}
	if (fp != NULL)
		fclose(fp);
	return n > 0 && out[0] != '\0';
}
