/* SPDX-License-Identifier: MIT */
/*
 * fuzz-guest: the in-guest loop of the kernel fuzz campaign (fuzz.sh).
 * Started by guest-init.sh (forge.fuzz=1) as PID 1 once the modules are in.
 *
 *   fuzz-guest [-t WALK_S] [-k KILL_S] [-c CAP] [-s START] [-M MODULE.ko] DISK
 *
 * DISK is the batch written by fuzz-mutate: a header ("FORGE-FUZZ 1 COUNT
 * HEADER_BYTES", then "NUMBER OFFSET SIZE [BLOB_OFFSET BLOB_SIZE]" per
 * image) and the images; an image with a blob gets it as its extra device,
 * a second size-limited loop device passed as -o device=.  From
 * line START on, each image is attached to a read-only loop device limited
 * to its own bytes (guest-loop.c), mounted read-only with mount options
 * that vary with the image number (cache_strategy, acl, user_xattr), and
 * walked by `hostile-walk -q -f` in a child process: lstat, getdents,
 * readlink, xattrs, statfs, missing-name lookups, FIEMAP, sequential reads
 * of at most CAP bytes, random-offset reads and mmap.  The walker stops
 * itself after WALK_S seconds; if it is still there after KILL_S it is
 * killed, and if even that does not end it the kernel is stuck ("STUCK",
 * the host ends the boot as a hang).  Then umount, detach, and the kernel
 * messages of the image are read from /dev/kmsg.
 *
 * Console protocol (one line each, read by fuzz.sh):
 *   forge: FUZZ version=V count=N start=S
 *   forge: RUN K NUMBER                 before an image (K: line index)
 *   forge: END K NUMBER outcome=refused|ok|errors|killed|nowalk mount=ERRNO
 *          ms=N entries=N errors=N euclean=N eopnotsupp=N eio=N other=N
 *          cache_kb=N avail_kb=N kern=0|1 errnos=NAME:N,... up=S
 *          msg=FIRST-EROFS-ERROR
 * (errnos: the walk's errors other than EUCLEAN/EOPNOTSUPP/EIO as
 * ERRNO@OPERATION;
 * msg: the image's first error-level erofs message, else its first erofs
 * message; up: guest uptime)
 *   forge: STUCK K NUMBER               the walker survived SIGKILL
 *   forge: MODCYCLE rmmod=0|ERRNO insmod=0|ERRNO
 *   forge: BATCHDONE
 * kern=1: a kernel line of the image looked like an oops, WARNING or
 * lockup (normally the guest panics first: oops=panic, panic_on_warn).
 * After the batch the module is removed and loaded again (a leaked inode or
 * a refcount bug shows as a failed rmmod or a slab warning), then the
 * guest powers off.
 */
#define _GNU_SOURCE
#define GUEST_LOOP_NO_MAIN
#include "guest-loop.c"

#include <signal.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static int console = -1, kmsg = -1;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "forge: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(console, line, n) < 0)
		(void)0;
}

static void mark_kmsg(const char *what, unsigned long long number)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "<6>erofs-forge-test: %s %llu\n", what, number);
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, line, n) < 0)
			(void)0;
		close(fd);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double uptime(void)
{
	FILE *f = fopen("/proc/uptime", "r");
	double up = 0;

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return up;
}

static long meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	size_t n = strlen(key);
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Read the kernel messages logged since the last call: the first erofs
 * message (into MSG, spaces kept, odd bytes dropped) and whether any line
 * looks like an oops, WARNING or lockup.
 */
static int drain_kmsg(char *msg, size_t msglen)
{
	static const char *const bad[] = {
		"BUG:", "Oops", "WARNING:", "general protection", "kernel BUG",
		"Call Trace", "soft lockup", "blocked for more than", "list_add corruption",
		"list_del corruption", "Bad page state", "Out of memory", "stack-protector",
	};
	char rec[2048];
	int kern = 0, msg_err = 0;

	msg[0] = 0;
	for (;;) {
		ssize_t n = read(kmsg, rec, sizeof(rec) - 1);
		char *text;

		if (n < 0) {
			if (errno == EPIPE || errno == EINTR)
				continue;	/* overwritten records: go on */
			break;			/* EAGAIN: all read */
		}
		rec[n] = 0;
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		text[strcspn(text, "\n")] = 0;
		if (strstr(text, "erofs-forge-test:"))
			continue;
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(text, bad[i]))
				kern = 1;
		if ((!msg[0] || (!msg_err && atoi(rec) % 8 <= 3)) && !strncmp(text, "erofs", 5)) {
			size_t o = 0;

			msg_err = atoi(rec) % 8 <= 3;
			for (char *c = text; *c && o + 1 < msglen; c++)
				if (*c >= ' ' && *c < 127)
					msg[o++] = *c;
			msg[o] = 0;
		}
	}
	return kern;
}

struct walk {
	long entries, errors, euclean, eopnotsupp, eio, other;
	long cache_before, cache_after;
	int summary;
	struct { char name[64]; long n; } errnos[12];	/* other errnos, by op */
};

/* count one error named NAME (hostile-walk's errno names) in W */
static void tally(struct walk *w, const char *name)
{
	for (size_t i = 0; i < sizeof(w->errnos) / sizeof(w->errnos[0]); i++) {
		if (!w->errnos[i].n)
			snprintf(w->errnos[i].name, sizeof(w->errnos[i].name), "%s", name);
		if (!strcmp(w->errnos[i].name, name)) {
			w->errnos[i].n++;
			return;
		}
	}
}

static const char *errnos_text(const struct walk *w, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(w->errnos) / sizeof(w->errnos[0]) && w->errnos[i].n; i++)
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s:%ld", o ? "," : "",
			      w->errnos[i].name, w->errnos[i].n);
	return buf[0] ? buf : "-";
}

static void parse_walk(const char *path, struct walk *w)
{
	FILE *f = fopen(path, "r");
	char line[512];

	memset(w, 0, sizeof(*w));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char op[32], name[32];

		if (sscanf(line, "error %31s - %31s", op, name) == 2 && strcmp(name, "EUCLEAN") &&
		    strcmp(name, "EOPNOTSUPP") && strcmp(name, "EIO")) {
			char key[64];

			snprintf(key, sizeof(key), "%s@%s", name, op);
			tally(w, key);
		}
		if (sscanf(line, "summary entries=%ld errors=%ld EUCLEAN=%ld EOPNOTSUPP=%ld "
			   "EIO=%ld other=%ld bytes=%*d cached_kb=%ld->%ld", &w->entries,
			   &w->errors, &w->euclean, &w->eopnotsupp, &w->eio, &w->other,
			   &w->cache_before, &w->cache_after) == 8)
			w->summary = 1;
	}
	fclose(f);
}

/*
 * Run the walker on /mnt; returns 0 when it exited by itself, 1 when it had
 * to be killed.  Never returns when the kill does not work.
 */
static int run_walker(unsigned long long number, const char *walk_s, double kill_s,
		      const char *cap, unsigned long k)
{
	char seed[32];
	sigset_t set;
	pid_t pid;
	double t0 = now();
	int killed = 0;

	snprintf(seed, sizeof(seed), "%llu", number + 1);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open("/tmp/walk.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		sigprocmask(SIG_UNBLOCK, &set, NULL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl("/bin/hostile-walk", "hostile-walk", "-q", "-f", "-S", seed, "-t", walk_s,
		      "-c", cap, "/mnt", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return 1;
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		sigtimedwait(&set, NULL, &ts);
		if (!killed && now() - t0 > kill_s) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		if (killed && now() - t0 > kill_s + 30) {
			say("STUCK %lu %llu", k, number);
			for (;;)
				pause();	/* the host ends the boot */
		}
	}
	return killed;
}

static int insmod(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return errno;
	ret = (int)syscall(SYS_finit_module, fd, "", 0);
	ret = ret ? errno : 0;
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	const char *walk_s = "8", *cap = "4194304", *module = NULL, *disk;
	double kill_s = 20;
	unsigned long start = 0, count, hdrbytes, k;
	char head[4096], version[64] = "(none)", *hdr, *line;
	int opt, fd;

	while ((opt = getopt(argc, argv, "t:k:c:s:M:")) != -1) {
		switch (opt) {
		case 't': walk_s = optarg; break;
		case 'k': kill_s = atof(optarg); break;
		case 'c': cap = optarg; break;
		case 's': start = strtoul(optarg, NULL, 0); break;
		case 'M': module = optarg; break;
		default: return 2;
		}
	}
	console = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (optind + 1 != argc) {
		say("FATAL usage: fuzz-guest [-t S] [-k S] [-c CAP] [-s START] [-M KO] DISK");
		goto off;
	}
	disk = argv[optind];
	fd = open(disk, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, head, sizeof(head) - 1, 0) != (ssize_t)sizeof(head) - 1) {
		say("FATAL cannot read %s: %s", disk, strerror(errno));
		goto off;
	}
	head[sizeof(head) - 1] = 0;
	if (sscanf(head, "FORGE-FUZZ 1 %lu %lu", &count, &hdrbytes) != 2 || hdrbytes < 4096) {
		say("FATAL %s is not a fuzz batch", disk);
		goto off;
	}
	hdr = malloc(hdrbytes + 1);
	if (!hdr || pread(fd, hdr, hdrbytes, 0) != (ssize_t)hdrbytes) {
		say("FATAL cannot read the batch header");
		goto off;
	}
	hdr[hdrbytes] = 0;
	close(fd);
	{
		FILE *v = fopen("/sys/module/erofs/version", "r");

		if (v) {
			if (fscanf(v, "%63s", version) != 1)
				strcpy(version, "(none)");
			fclose(v);
		}
	}
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	lseek(kmsg, 0, SEEK_END);
	mkdir("/mnt", 0755);
	say("FUZZ version=%s count=%lu start=%lu up=%.1f", version, count, start, uptime());

	line = strchr(hdr, '\n');
	for (k = 0; line && k < count; k++) {
		static const char *const cache[] = { "readaround", "readahead", "disabled" };
		unsigned long long number, off, size, boff = 0, bsize = 0;
		char dev[32], bdev[32] = "", opts[160], msg[200], etext[400];
		const char *what;
		struct walk w = { 0 };
		int merr = 0, killed = 0, kern;
		double t0;

		line++;
		char one[128];
		size_t ll = strcspn(line, "\n");
		int nf;

		/* one line only: %llu would skip the newline into the next one */
		snprintf(one, sizeof(one), "%.*s", (int)(ll < sizeof(one) ? ll : sizeof(one) - 1), line);
		nf = sscanf(one, "%llu %llu %llu %llu %llu", &number, &off, &size, &boff, &bsize);

		if (nf < 3)
			break;
		line = strchr(line, '\n');
		if (k < start)
			continue;
		say("RUN %lu %llu", k, number);
		mark_kmsg("RUN", number);
		t0 = now();
		if (loop_attach(disk, off, size, dev, sizeof(dev), &what)) {
			say("FATAL %s: %s", what, strerror(errno));
			goto off;
		}
		/* an extra device (device table seeds): its own size-limited loop */
		bdev[0] = 0;
		if (nf == 5 && bsize && loop_attach(disk, boff, bsize, bdev, sizeof(bdev), &what)) {
			say("FATAL %s: %s", what, strerror(errno));
			goto off;
		}
		snprintf(opts, sizeof(opts), "cache_strategy=%s,%s,%s%s%s", cache[number % 3],
			 (number / 3) % 2 ? "noacl" : "acl",
			 (number / 6) % 2 ? "nouser_xattr" : "user_xattr",
			 bdev[0] ? ",device=" : "", bdev);
		if (mount(dev, "/mnt", "erofs", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0) {
			merr = errno;
		} else {
			killed = run_walker(number, walk_s, kill_s, cap, k);
			parse_walk("/tmp/walk.out", &w);
			if (umount("/mnt") < 0) {
				say("FATAL umount: %s", strerror(errno));
				goto off;
			}
		}
		if (loop_detach(dev, &what) || (bdev[0] && loop_detach(bdev, &what))) {
			say("FATAL %s: %s", what, strerror(errno));
			goto off;
		}
		mark_kmsg("DONE", number);
		kern = drain_kmsg(msg, sizeof(msg));
		say("END %lu %llu outcome=%s mount=%d ms=%ld entries=%ld errors=%ld euclean=%ld "
		    "eopnotsupp=%ld eio=%ld other=%ld cache_kb=%ld avail_kb=%ld kern=%d errnos=%s "
		    "up=%.1f msg=%s",
		    k, number, merr ? "refused" : killed ? "killed" : !w.summary ? "nowalk" :
		    w.errors ? "errors" : "ok", merr, (long)((now() - t0) * 1000), w.entries,
		    w.errors, w.euclean, w.eopnotsupp, w.eio, w.other,
		    w.summary ? w.cache_after - w.cache_before : 0, meminfo("MemAvailable"), kern,
		    errnos_text(&w, etext, sizeof(etext)), uptime(), msg);
	}
	if (module) {
		int r = syscall(SYS_delete_module, "erofs", O_NONBLOCK) ? errno : 0;
		int i = r ? -1 : insmod(module);

		say("MODCYCLE rmmod=%d insmod=%d", r, i);
		drain_kmsg(head, sizeof(head));
	}
	say("BATCHDONE up=%.1f", uptime());
off:
	sync();
	say("POWEROFF");
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
