/* SPDX-License-Identifier: MIT */
/*
 * erofs-manifest: print a canonical, diffable description of a directory tree.
 *
 * One line per entry, sorted by the raw path bytes (memcmp), the root first
 * and printed as ".":
 *
 *   <path> type=T mode=MMMM uid=N gid=N mtime=S.NNNNNNNNN [per-type fields]
 *          [link=<head>] [xattrs=name=hex;name=hex...]
 *
 *   reg:     size=N hash=<xxh3-128 of the contents, 32 hex digits>
 *   lnk:     target=<escaped target>
 *   chr/blk: rdev=MAJOR:MINOR
 *
 * Non-directories with st_nlink > 1 get link=<first path of their hard-link
 * group in sort order> (the head names itself); groups are st_dev/st_ino pairs
 * seen inside the scanned tree.  Bytes outside printable ASCII and the bytes
 * ' ', '\\', '%', '=' and ';' are written as %XX, so every field is a single
 * space-free token and the output is unambiguous.
 *
 * Symlinks are never followed and directories on another st_dev are listed
 * but not descended into.  The walk chdir()s into each directory and works on
 * single names, so path depth is not limited by PATH_MAX.  Any error is fatal:
 * a manifest is either complete or the tool exits with status 1.
 *
 * Self-contained on purpose (libc plus the header-only xxHash), so the QEMU
 * test guest can use a static build:
 *   gcc -static -O2 -o erofs-manifest tools/manifest.c
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define READ_BUF_SIZE (1u << 20)

struct entry {
	char *path;	/* relative to the root; "" is the root itself */
	size_t pathlen;
	struct stat st;
	char *extra;	/* preformatted per-type fields, may be NULL */
	char *xattrs;	/* preformatted "name=hex;..." or NULL */
	const struct entry *link_head;
};

static struct {
	struct entry *v;
	size_t n, cap;
} entries;

static int no_xattrs;
static char **exclude_prefixes;
static size_t nr_exclude_prefixes;
static unsigned char *readbuf;
static dev_t root_dev;
static const char *root_arg;

static void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "erofs-manifest: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* A growable byte string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_grow(struct sbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	while (b->len + more + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 64;
	b->s = xrealloc(b->s, b->cap);
}

static void sb_putc(struct sbuf *b, char c)
{
	sb_grow(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	sb_grow(b, n);
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void sb_escape(struct sbuf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '%' ||
		    c == '=' || c == ';') {
			sb_putc(b, '%');
			sb_putc(b, hex[c >> 4]);
			sb_putc(b, hex[c & 15]);
		} else {
			sb_putc(b, (char)c);
		}
	}
}

static void sb_hex(struct sbuf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	sb_grow(b, 2 * n);
	for (size_t i = 0; i < n; i++) {
		b->s[b->len++] = hex[p[i] >> 4];
		b->s[b->len++] = hex[p[i] & 15];
	}
	b->s[b->len] = '\0';
}

/* Full path for messages only (never used to access the file). */
static const char *shown(const char *rel)
{
	static struct sbuf b;

	b.len = 0;
	sb_puts(&b, root_arg);
	if (*rel) {
		sb_putc(&b, '/');
		sb_puts(&b, rel);
	}
	return b.s;
}

static void hash_file(const char *name, const char *rel, const struct stat *st,
		      struct sbuf *out)
{
	XXH3_state_t state;
	XXH128_canonical_t canon;
	unsigned long long total = 0;
	int fd;

	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s", shown(rel), strerror(errno));
	if (XXH3_128bits_reset(&state) != XXH_OK)
		die("hash init failed");
	for (;;) {
		ssize_t n = read(fd, readbuf, READ_BUF_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read error on %s: %s", shown(rel), strerror(errno));
		}
		if (n == 0)
			break;
		XXH3_128bits_update(&state, readbuf, (size_t)n);
		total += (unsigned long long)n;
	}
	close(fd);
	if (total != (unsigned long long)st->st_size)
		die("%s: read %llu bytes but st_size is %lld", shown(rel), total,
		    (long long)st->st_size);
	XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(&state));
	sb_printf(out, " size=%lld hash=", (long long)st->st_size);
	sb_hex(out, canon.digest, sizeof(canon.digest));
}

static void read_symlink(const char *name, const char *rel,
			 const struct stat *st, struct sbuf *out)
{
	size_t cap = st->st_size > 0 ? (size_t)st->st_size + 1 : 256;
	char *buf;
	ssize_t n;

	for (;;) {
		buf = xmalloc(cap);
		n = readlink(name, buf, cap);
		if (n < 0)
			die("cannot read symlink %s: %s", shown(rel),
			    strerror(errno));
		if ((size_t)n < cap)
			break;
		free(buf);
		cap *= 2;
	}
	sb_puts(out, " target=");
	sb_escape(out, (unsigned char *)buf, (size_t)n);
	free(buf);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int excluded_xattr(const char *name)
{
	for (size_t i = 0; i < nr_exclude_prefixes; i++)
		if (!strncmp(name, exclude_prefixes[i],
			     strlen(exclude_prefixes[i])))
			return 1;
	return 0;
}

/* Returns the formatted xattrs field value, or NULL when there are none. */
static char *read_xattrs(const char *name, const char *rel)
{
	struct sbuf out = { 0 };
	char *list = NULL, **names;
	ssize_t len;
	size_t nr = 0;

	for (;;) {
		len = llistxattr(name, NULL, 0);
		if (len < 0) {
			if (errno == ENOTSUP)
				return NULL;
			die("cannot list xattrs of %s: %s", shown(rel),
			    strerror(errno));
		}
		if (len == 0)
			return NULL;
		list = xrealloc(list, (size_t)len);
		len = llistxattr(name, list, (size_t)len);
		if (len >= 0)
			break;
		if (errno != ERANGE)	/* grew between the two calls */
			die("cannot list xattrs of %s: %s", shown(rel),
			    strerror(errno));
	}

	names = xmalloc(sizeof(*names) * (size_t)len);
	for (char *p = list; p < list + len; p += strlen(p) + 1)
		if (*p && !excluded_xattr(p))
			names[nr++] = p;
	qsort(names, nr, sizeof(*names), cmp_cstr);

	for (size_t i = 0; i < nr; i++) {
		unsigned char *val = NULL;
		ssize_t vlen;

		for (;;) {
			vlen = lgetxattr(name, names[i], NULL, 0);
			if (vlen < 0)
				die("cannot get xattr %s of %s: %s", names[i],
				    shown(rel), strerror(errno));
			val = xrealloc(val, (size_t)vlen);
			vlen = lgetxattr(name, names[i], val, (size_t)vlen);
			if (vlen >= 0)
				break;
			if (errno != ERANGE)
				die("cannot get xattr %s of %s: %s", names[i],
				    shown(rel), strerror(errno));
		}
		if (i)
			sb_putc(&out, ';');
		sb_escape(&out, (unsigned char *)names[i], strlen(names[i]));
		sb_putc(&out, '=');
		sb_hex(&out, val, (size_t)vlen);
		free(val);
	}
	free(names);
	free(list);
	return out.s;	/* NULL if every name was excluded */
}

static struct entry *add_entry(const char *rel, const struct stat *st)
{
	struct entry *e;

	if (entries.n == entries.cap) {
		entries.cap = entries.cap ? entries.cap * 2 : 1024;
		entries.v = xrealloc(entries.v, entries.cap * sizeof(*e));
	}
	e = &entries.v[entries.n++];
	memset(e, 0, sizeof(*e));
	e->pathlen = strlen(rel);
	e->path = xmalloc(e->pathlen + 1);
	memcpy(e->path, rel, e->pathlen + 1);
	e->st = *st;
	return e;
}

/*
 * Describe the entry "name" in the current directory; rel is its path from the
 * root.  Directories are then walked recursively.
 */
static void visit(const char *name, struct sbuf *rel)
{
	struct sbuf extra = { 0 };
	struct stat st;
	struct entry *e;

	if (lstat(name, &st) < 0)
		die("cannot lstat %s: %s", shown(rel->s), strerror(errno));

	if (S_ISREG(st.st_mode))
		hash_file(name, rel->s, &st, &extra);
	else if (S_ISLNK(st.st_mode))
		read_symlink(name, rel->s, &st, &extra);
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		sb_printf(&extra, " rdev=%u:%u", major(st.st_rdev),
			  minor(st.st_rdev));

	e = add_entry(rel->s, &st);
	e->extra = extra.s;
	if (!no_xattrs)
		e->xattrs = read_xattrs(name, rel->s);

	if (!S_ISDIR(st.st_mode))
		return;
	if (st.st_dev != root_dev) {
		fprintf(stderr,
			"erofs-manifest: warning: not descending into mount point %s\n",
			shown(rel->s));
		return;
	}

	/* Walk the directory: enter it, list names, visit each, come back. */
	int parent = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dfd;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, cap = 0, base = rel->len;

	if (parent < 0)
		die("cannot open current directory: %s", strerror(errno));
	dfd = open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		die("cannot open directory %s: %s", shown(rel->s),
		    strerror(errno));
	if (fchdir(dfd) < 0)
		die("cannot enter directory %s: %s", shown(rel->s),
		    strerror(errno));
	d = fdopendir(dfd);
	if (!d)
		die("cannot read directory %s: %s", shown(rel->s),
		    strerror(errno));
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				die("cannot read directory %s: %s",
				    shown(rel->s), strerror(errno));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[nr++] = strdup(de->d_name);
		if (!names[nr - 1])
			die("out of memory");
	}
	closedir(d);

	for (size_t i = 0; i < nr; i++) {
		rel->len = base;
		rel->s[base] = '\0';
		if (base)
			sb_putc(rel, '/');
		sb_puts(rel, names[i]);
		visit(names[i], rel);
		free(names[i]);
	}
	free(names);
	rel->len = base;
	rel->s[base] = '\0';

	if (fchdir(parent) < 0)
		die("cannot return to the parent of %s: %s", shown(rel->s),
		    strerror(errno));
	close(parent);
}

static int cmp_path(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = x->pathlen < y->pathlen ? x->pathlen : y->pathlen;
	int r = memcmp(x->path, y->path, n);

	if (r)
		return r;
	return (x->pathlen > y->pathlen) - (x->pathlen < y->pathlen);
}

/* Sort key for hard-link grouping: inode identity, then manifest order. */
static int cmp_inode(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a;
	const struct entry *y = *(struct entry *const *)b;

	if (x->st.st_dev != y->st.st_dev)
		return x->st.st_dev < y->st.st_dev ? -1 : 1;
	if (x->st.st_ino != y->st.st_ino)
		return x->st.st_ino < y->st.st_ino ? -1 : 1;
	return (x > y) - (x < y);
}

static void assign_link_heads(void)
{
	struct entry **v = xmalloc(entries.n * sizeof(*v));
	size_t nr = 0;

	for (size_t i = 0; i < entries.n; i++)
		if (!S_ISDIR(entries.v[i].st.st_mode) &&
		    entries.v[i].st.st_nlink > 1)
			v[nr++] = &entries.v[i];
	qsort(v, nr, sizeof(*v), cmp_inode);
	for (size_t i = 0; i < nr; i++) {
		if (i && v[i - 1]->st.st_dev == v[i]->st.st_dev &&
		    v[i - 1]->st.st_ino == v[i]->st.st_ino)
			v[i]->link_head = v[i - 1]->link_head;
		else
			v[i]->link_head = v[i];
	}
	free(v);
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "reg";
	case S_IFDIR: return "dir";
	case S_IFLNK: return "lnk";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "sock";
	}
	return "unknown";
}

static void put_path(struct sbuf *b, const struct entry *e)
{
	if (!e->pathlen)
		sb_putc(b, '.');
	else
		sb_escape(b, (const unsigned char *)e->path, e->pathlen);
}

static void print_all(void)
{
	struct sbuf line = { 0 };

	for (size_t i = 0; i < entries.n; i++) {
		const struct entry *e = &entries.v[i];

		line.len = 0;
		put_path(&line, e);
		sb_printf(&line, " type=%s mode=%04o uid=%u gid=%u mtime=%lld.%09ld",
			  type_name(e->st.st_mode),
			  (unsigned)(e->st.st_mode & 07777),
			  (unsigned)e->st.st_uid, (unsigned)e->st.st_gid,
			  (long long)e->st.st_mtim.tv_sec,
			  (long)e->st.st_mtim.tv_nsec);
		if (e->extra)
			sb_puts(&line, e->extra);
		if (e->link_head) {
			sb_puts(&line, " link=");
			put_path(&line, e->link_head);
		}
		if (e->xattrs) {
			sb_puts(&line, " xattrs=");
			sb_puts(&line, e->xattrs);
		}
		sb_putc(&line, '\n');
		if (fwrite(line.s, 1, line.len, stdout) != line.len)
			die("write error: %s", strerror(errno));
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		die("write error: %s", strerror(errno));
	free(line.s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: erofs-manifest [--no-xattrs] [--exclude-xattr-prefix=P]... DIR\n"
		"Print one sorted, escaped line per entry of DIR (never follows symlinks).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-xattrs", no_argument, NULL, 'n' },
		{ "exclude-xattr-prefix", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sbuf rel = { 0 };
	struct stat st;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			no_xattrs = 1;
			break;
		case 'x':
			exclude_prefixes = xrealloc(exclude_prefixes,
				(nr_exclude_prefixes + 1) * sizeof(char *));
			exclude_prefixes[nr_exclude_prefixes++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	root_arg = argv[optind];
	if (lstat(root_arg, &st) < 0)
		die("cannot lstat %s: %s", root_arg, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s is not a directory", root_arg);
	if (chdir(root_arg) < 0)
		die("cannot enter %s: %s", root_arg, strerror(errno));
	root_dev = st.st_dev;
	readbuf = xmalloc(READ_BUF_SIZE);

	sb_puts(&rel, "");
	visit(".", &rel);
	free(rel.s);	/* (LeakSanitizer saw it lost once main's frame was gone) */

	qsort(entries.v, entries.n, sizeof(*entries.v), cmp_path);
	assign_link_heads();
	print_all();
	return 0;
}
