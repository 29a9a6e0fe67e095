// SPDX-License-Identifier: MIT
/* mkfs.erofs --vmdk-desc: a VMDK descriptor of the image and its extra device (mkfs/vmdk.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "erofs/common/diag.h"
#include "vmdk.h"

#define VMDK_SECTOR_BITS	9
#define VMDK_HEADS		16	/* the legacy IDE geometry every descriptor states */
#define VMDK_SECTORS		63

int mkfs_write_vmdk(const char *path, const struct erofs_build_options *opts,
		    const struct erofs_plan *plan)
{
	const unsigned int shift = plan->blkszbits - VMDK_SECTOR_BITS;
	uint64_t image = (uint64_t)plan->nr_blocks << shift;
	uint64_t device = plan->extra_devices ? (uint64_t)plan->blob_blocks << shift : 0;
	uint64_t per_cylinder = VMDK_HEADS * VMDK_SECTORS;
	/* the blob by its path; a tar by its path (the decoded copy of
	 * --ungzip=FILE), or unnamed from standard input, as erofs-utils */
	const char *device_name = opts->blobdev ? opts->blobdev :
				  opts->tar_dump_file ? opts->tar_dump_file :
				  opts->source ? opts->source : "";
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		err = errno;
		erofs_err("--vmdk-desc=%s: cannot create: %s", path, strerror(err));
		return -err;
	}
	fprintf(f, "# Disk DescriptorFile\nversion=1\nCID=0\nparentCID=ffffffff\n"
		   "createType=\"twoGbMaxExtentFlat\"\n\n# Extent description\n");
	fprintf(f, "RW %" PRIu64 " FLAT \"%s\" 0\n", image, opts->image);
	if (plan->extra_devices)
		fprintf(f, "RW %" PRIu64 " FLAT \"%s\" 0\n", device, device_name);
	fprintf(f, "\n# The Disk Data Base\n#DDB\n\nddb.virtualHWVersion = \"4\"\n"
		   "ddb.geometry.cylinders = \"%" PRIu64 "\"\nddb.geometry.heads = \"%u\"\n"
		   "ddb.geometry.sectors = \"%u\"\nddb.adapterType = \"ide\"\n",
		(image + device + per_cylinder - 1) / per_cylinder, VMDK_HEADS, VMDK_SECTORS);
	if (ferror(f))
		err = EIO;
	if (fclose(f) && !err)
		err = errno;
	if (err)
		erofs_err("--vmdk-desc=%s: write failed: %s", path, strerror(err));
	return -err;
}
