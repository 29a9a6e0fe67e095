// SPDX-License-Identifier: MIT
/* The tail store (see include/erofs/build/tails.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/build/tails.h"

int erofs_tails_open(struct erofs_tails *t, const char *image)
{
	int fd = erofs_scratch_open(image), err;

	memset(t, 0, sizeof(*t));
	t->out.fd = -1;
	if (fd < 0)
		return fd;
	if ((err = erofs_seq_init(&t->out, fd, "temporary tail store", 1u << 20))) {
		close(fd);
		return err;
	}
	return 0;
}

void erofs_tails_close(struct erofs_tails *t)
{
	if (t->map)
		munmap((void *)t->map, t->size);
	t->map = NULL;
	if (t->out.fd >= 0)
		close(t->out.fd);
	erofs_seq_release(&t->out);
	t->out.fd = -1;
}

int erofs_tails_add(struct erofs_tails *t, const void *data, size_t len, uint64_t *pos)
{
	*pos = t->size;
	erofs_seq_write(&t->out, t->size, data, len);
	t->size += len;
	return t->out.error;
}

int erofs_tails_seal(struct erofs_tails *t)
{
	void *map;
	int err;

	if ((err = erofs_seq_flush(&t->out)))
		return err;
	if (!t->size)
		return 0;
	map = mmap(NULL, t->size, PROT_READ, MAP_SHARED, t->out.fd, 0);
	if (map == MAP_FAILED)
		return 0;	/* reads will do */
	madvise(map, t->size, MADV_SEQUENTIAL);
	t->map = map;
	return 0;
}

int erofs_tails_read(struct erofs_tails *t, void *buf, size_t len, uint64_t pos)
{
	int err;

	if (t->map) {
		memcpy(buf, t->map + pos, len);
		return 0;
	}

	if (pos + len > t->out.buf_pos) {	/* still in the buffer, or not yet written out */
		if ((err = erofs_seq_flush(&t->out)))
			return err;
	}
	err = erofs_pread_all(t->out.fd, buf, len, pos);
	if (err)
		erofs_err("temporary tail store: read failed: %s", strerror(-err));
	return err;
}
