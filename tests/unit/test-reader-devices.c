// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): extra devices, named by
 * chunk indexes or mapped into the flat block space, read from a
 * temporary file beside an image crafted in memory (reader-img.h).  Every
 * rejection is checked for its return code and for the words of its
 * message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "reader-img.h"
#include "unit.h"

/* ------------------------------------------------------------------ */
/* extra devices: chunk indexes naming one, flat data in a mapped range */

static void test_devices(void)
{
	static uint8_t dev[4 * BLK], buf[2 * BLK];
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	struct img m;
	FILE *f = tmpfile();
	uint8_t *slot, *p;

	CHECK(f != NULL);
	if (!f)
		return;
	for (unsigned int i = 0; i < 4; i++)
		memset(dev + i * BLK, 'A' + i, BLK);
	CHECK(fwrite(dev, sizeof(dev), 1, f) == 1 && fflush(f) == 0);
	img_init(&m, 4);
	m.sb.feature_incompat = EROFS_INCOMPAT_DEVICE_TABLE | EROFS_INCOMPAT_CHUNKED_FILE;
	m.sb.extra_devices = 1;
	m.sb.devt_slotoff = 20;
	slot = m.b + 20 * EROFS_DEVT_SLOT_BYTES;
	put_le32(slot + EROFS_DEVT_SLOT_BLOCKS, 4);
	put_le32(slot + EROFS_DEVT_SLOT_MAPPED, 100);	/* blocks 100..103 of the flat space */
	CHECK(img_open(&m, &r) == 0);

	/* a file of one chunk on device 1, its block 2 */
	put_inode(&m, 60, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, BLK,
		  EROFS_CHUNK_FORMAT_INDEXES, false);
	p = m.b + 60 * 32 + 32;
	memset(p, 0, 8);
	put_le16(p + 2, 1);
	put_le32(p + 4, 2);
	CHECK(erofs_read_inode(&r, 60, &vi) == 0);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -ENXIO,
		   "data on extra device 1 (no tag, 4 blocks), which was not given", &r);
	EXPECT_ERR(erofs_reader_set_device(&r, 1, fileno(f), 3 * BLK), -EUCLEAN, "too short", &r);
	EXPECT_ERR(erofs_reader_set_device(&r, 2, fileno(f), 4 * BLK), -EINVAL,
		   "1 extra device", &r);
	CHECK(erofs_reader_set_device(&r, 1, fileno(f), 4 * BLK) == 0);
	CHECK(erofs_read_data(&r, &vi, buf, BLK, 0) == 0 && buf[0] == 'C' && buf[BLK - 1] == 'C');
	/* as in Linux, device ids count modulo the next power of two: 3 is 1, 2 the image */
	put_le16(p + 2, 3);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 1 && map.pa == 2 * BLK);
	put_le16(p + 2, 2);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 0 && map.pa == 2 * BLK);
	put_le16(p + 2, 1);
	put_le32(p + 4, 4);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -EUCLEAN, "beyond the end of device 1",
		   &r);

	/* flat data at block 101 of the flat space: blocks 1 and 2 of the device */
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 101, false);
	CHECK(erofs_read_inode(&r, 70, &vi) == 0);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 1 && map.pa == BLK);
	CHECK(erofs_read_data(&r, &vi, buf, 2 * BLK, 0) == 0 && buf[0] == 'B' &&
	      buf[2 * BLK - 1] == 'C');
	/* one reaching past the mapped range, one between the image and it */
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 103, false);
	EXPECT_ERR(erofs_read_inode(&r, 70, &vi), -EUCLEAN, "beyond the end", &r);
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 50, false);
	EXPECT_ERR(erofs_read_inode(&r, 70, &vi), -EUCLEAN, "beyond the end", &r);
	erofs_reader_close(&r);
	fclose(f);
	free(m.b);
}

int main(void)
{
	test_devices();
	return unit_summary("test-reader-devices");
}
