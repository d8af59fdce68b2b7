#include <stdbool.h>
#include <stdlib.h>

#include "core/err.h"
#include "lane/store/store_opts.h"

bool
store_opts_take(struct store_opts *so, int c, char *arg)
{
	switch (c) {
	case 's': so->spec = arg; break;
	case STORE_OPT_CACHE: so->cache = arg; break;
	case 'H':
		so->histories = erealloc(so->histories,
		    (size_t)(so->nhistories + 1) * sizeof *so->histories);
		so->histories[so->nhistories++] = arg;
		break;
	default: return false;
	}
	return true;
}

void
store_opts_free(struct store_opts *so)
{
	free(so->histories);
	so->histories = NULL;
	so->nhistories = 0;
}
