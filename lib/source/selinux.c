// SPDX-License-Identifier: MIT
/* SELinux labels through libselinux (see include/erofs/source/selinux.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_LIBSELINUX
#include <selinux/label.h>
#include <selinux/selinux.h>
#endif

#include "erofs/common/diag.h"
#include "erofs/source/selinux.h"

#ifdef HAVE_LIBSELINUX

struct erofs_selabel {
	struct selabel_handle *handle;
};

int erofs_selabel_open(const char *file, struct erofs_selabel **out)
{
	/* only this file: no .local or .homedirs companions of the host */
	struct selinux_opt opts[] = {
		{ SELABEL_OPT_PATH, file },
		{ SELABEL_OPT_BASEONLY, (const char *)1 },
	};
	struct erofs_selabel *h;
	struct stat st;
	int err;

	*out = NULL;
	if (stat(file, &st)) {
		err = errno;
		erofs_err("%s: cannot open the file contexts: %s", file, strerror(err));
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		erofs_err("%s: the file contexts must be a regular file", file);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	errno = 0;
	h->handle = selabel_open(SELABEL_CTX_FILE, opts, sizeof(opts) / sizeof(opts[0]));
	if (!h->handle) {
		err = errno ? errno : EINVAL;
		erofs_err("%s: libselinux cannot load these file contexts: %s", file,
			  strerror(err));
		free(h);
		return -err;
	}
	*out = h;
	return 0;
}

int erofs_selabel_lookup(struct erofs_selabel *h, const char *key, mode_t mode,
			 const char *display_path, char **label)
{
	char *con = NULL;
	int err;

	*label = NULL;
	errno = 0;
	if (selabel_lookup(h->handle, &con, key, (int)mode)) {
		err = errno ? errno : EINVAL;
		if (err == ENOENT)
			return 0;	/* <<none>> or no match: unlabelled */
		erofs_err("%s: SELinux label lookup of '%s' failed: %s", display_path, key,
			  strerror(err));
		return -err;
	}
	*label = strdup(con);
	freecon(con);
	return *label ? 0 : -ENOMEM;
}

void erofs_selabel_close(struct erofs_selabel *h)
{
	if (!h)
		return;
	selabel_close(h->handle);
	free(h);
}

#else /* !HAVE_LIBSELINUX */

struct erofs_selabel {
	int unused;
};

int erofs_selabel_open(const char *file, struct erofs_selabel **out)
{
	*out = NULL;
	erofs_err("--file-contexts %s: this mkfs.erofs was built without libselinux, so it "
		  "cannot label files (install libselinux1-dev and configure again)", file);
	return -EOPNOTSUPP;
}

int erofs_selabel_lookup(struct erofs_selabel *h, const char *key, mode_t mode,
			 const char *display_path, char **label)
{
	*label = NULL;
	return -EOPNOTSUPP;
}

void erofs_selabel_close(struct erofs_selabel *h)
{
}

#endif
