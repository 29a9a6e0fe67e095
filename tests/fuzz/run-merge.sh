#!/bin/bash
# Fuzzes mkfs.erofs' merge path with hostile layer images: rebuild mode
# (metadata-only and --clean=data) and --incremental.  Seed layers of every
# layout our mkfs makes are mutated by qemu-tests/fuzz-mutate.c (structure-
# aware: superblock, inodes, xattrs, dirents, indexes; plus bit flips,
# splices, truncation), and each mutant is merged by a sanitizer build of
# mkfs.erofs under `timeout`, in one of seven modes (N mod 7): metadata-only
# merge with the mutant as bottom or as top layer, --clean=data, --clean=data
# -zlz4hc --ovlfs-strip=1, --incremental with a directory (plain, -zlz4hc)
# and with a tar whose hard links name files only the mutant has.  Each run is classified:
#   ok       exit 0, and fsck.erofs extracts the image (--device=LAYER per
#            layer for a metadata-only merge); when fsck.erofs also extracts
#            the mutant, the tree is what tests/overlay-apply.py makes of the
#            layers (needs BUILD/tools/erofs-manifest, or $MANIFEST)
#   refused  exit 1 with one clear error line naming the layer (the image,
#            for --incremental), no image left behind (--incremental: the
#            image byte for byte as it was); its kind is counted
#   kept-damage  (--incremental added in place only) exit 0 over a mutant
#            that fsck.erofs itself rejects, an image fsck still rejects but
#            for nothing it did not say of the mutant (its error lines, with
#            the path they start with, nids and the image's size left out, a
#            subset of the mutant's), and the new layer's files
#            read back right (dump.erofs --cat, its whiteouts still there; the
#            tar mode: its one new file).  In place does not read the image's
#            files the layer leaves alone, so their damage may stay (see
#            tests/merge-hostile.sh, "in place over a damaged file").  In
#            place means the superblock's root nid and meta_blkaddr stayed;
#            an image whose metadata was all rewritten gets no such leave
#   kept-past-end  the same, but fsck names new damage while the mutant
#            had something beyond its end: in place appends to the image, so
#            an untouched record or extent that reached past the old end now
#            reaches into the new blocks (with nothing new named, fsck may
#            even pass it: then the run counts as ok)
#   finding  anything else: sanitizer report, signal, timeout, other exit
#            status, an image fsck rejects (for --incremental: over a mutant
#            fsck accepts; with damage the mutant did not have, new-damage-*;
#            rewritten all anew, rewritten-all-keeps-damage; or with the new
#            layer's files wrong), a message not naming the layer, an image
#            left after a failure, a changed --incremental image
#
#   tests/fuzz/run-merge.sh -b ASAN_BUILD [-n RUNS] [-t SECONDS] [-s SEED] [-f FIRST] [-o OUTDIR]
#
#   -b DIR      build directory of a sanitizer build (DIR/mkfs/mkfs.erofs and
#               DIR/fsck/fsck.erofs); default $ASAN_BUILD
#   -n RUNS     mutants to run (default 10000)
#   -t SECONDS  stop after this long, whatever -n says
#   -s SEED     campaign number: mutant N of campaign S is always the same
#               image for the same seeds (default 1)
#   -f FIRST    number of the first mutant (default 0; to resume)
#   -m MODES    only the mutants of these modes, e.g. -m 4,5,6 (--incremental)
#   -o OUTDIR   work folder (default $FUZZ_OUT or /tmp/erofs-fuzz): bin/,
#               seeds-merge/ (remade each run), merge-findings/, merge.log
#   -x N        replay mutant N alone, verbosely (the seeds must be as they were)
# Exit status: 0 no finding, 1 findings (in OUTDIR/merge-findings), 2 setup failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${ASAN_BUILD:-}
runs=10000 secs=0 seed=1 first=0 only='' modes=0,1,2,3,4,5,6
out=${FUZZ_OUT:-/tmp/erofs-fuzz}
while getopts "b:n:t:s:f:o:x:m:" opt; do
	case $opt in
	b) build=$OPTARG ;;
	n) runs=$OPTARG ;;
	t) secs=$OPTARG ;;
	s) seed=$OPTARG ;;
	f) first=$OPTARG ;;
	o) out=$OPTARG ;;
	x) only=$OPTARG ;;
	m) modes=$OPTARG ;;
	*) sed -n '2,54p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$build" ] && [ -x "$build/mkfs/mkfs.erofs" ] && [ -x "$build/fsck/fsck.erofs" ] ||
	{ echo "run-merge.sh: give -b BUILD (a sanitizer build with mkfs/ and fsck/)" >&2; exit 2; }
build=$(cd "$build" && pwd)
MKFS=$build/mkfs/mkfs.erofs FSCK=$build/fsck/fsck.erofs DUMP=$build/dump/dump.erofs
[ -x "$DUMP" ] || { echo "run-merge.sh: no $DUMP" >&2; exit 2; }
MANIFEST=${MANIFEST:-$build/tools/erofs-manifest}
[ -x "$MANIFEST" ] || MANIFEST=
[ -n "$MANIFEST" ] || echo "run-merge.sh: no $MANIFEST (make tools/erofs-manifest): no tree oracle" >&2
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=exitcode=87:print_stacktrace=1:halt_on_error=1
gcc -O2 -Wall "-I$top/include" -o "$out/bin/fuzz-mutate" "$top/qemu-tests/fuzz-mutate.c" \
	"$top/qemu-tests/fuzz-mutate-util.c" "$top/qemu-tests/fuzz-mutate-parse.c" \
	"$top/qemu-tests/fuzz-mutate-edit.c" "$top/qemu-tests/fuzz-mutate-format.c" ||
	{ echo "run-merge.sh: cannot build fuzz-mutate" >&2; exit 2; }

# ---- seeds: one tree, every layout; a clean layer and a directory to merge with ----
seeds=$out/seeds-merge fixed=$out/merge-fixed tree=$out/merge-tree
if [ -z "$only" ] || [ ! -d "$seeds" ]; then
	rm -rf "$seeds" "$fixed" "$tree"
	mkdir -p "$seeds" "$fixed" "$tree/d/sub" "$tree/opq" "$tree/big"
	printf 'hello\n' >"$tree/small"
	head -c 5000 /dev/zero | tr '\0' x >"$tree/d/f5000"
	python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(7).randbytes(12000))' \
		>"$tree/d/rand"
	truncate -s 70000 "$tree/d/sparse" && printf end >>"$tree/d/sparse"
	ln "$tree/small" "$tree/d/hardlink"
	ln -s ../small "$tree/d/sub/link"
	ln -s "$(printf 'l%.0s' $(seq 150))" "$tree/longlink"
	for i in $(seq 120); do printf '%s' "$i" >"$tree/big/entry-with-a-longer-name-$i"; done
	mkfifo "$tree/fifo"
	mknod "$tree/chr" c 1 3
	mknod "$tree/d/gone" c 0 0		# a whiteout
	printf 'inside\n' >"$tree/opq/x"
	setfattr -n trusted.overlay.opaque -v y "$tree/opq"
	setfattr -n user.k -v v "$tree/small"
	setfattr -n user.long -v "$(printf 'v%.0s' $(seq 300))" "$tree/d/f5000"
	setfattr -n security.selinux -v "system_u:object_r:bin_t:s0" "$tree/d"
	find "$tree" -exec touch -h -d '2022-02-02 02:02:02' {} +
	n=0
	mk() {	# mk NAME OPTIONS...
		local name=$1
		shift
		if "$MKFS" --quiet -U 11111111-2222-3333-4444-555555555555 "$@" \
			"$seeds/$name.img" "$tree" 2>/dev/null; then
			n=$((n + 1))
		else
			rm -f "$seeds/$name.img"
			echo "run-merge.sh: (no seed $name: mkfs $* failed)" >&2
		fi
	}
	mk plain -Enoinline_data
	mk inline
	mk lz4hc -zlz4hc
	mk lz4hc-frag -zlz4hc -Eztailpacking,fragments
	mk lzma -zlzma
	mk chunk4k --chunksize=4096
	mk 48bit -E48bit
	mk xattr-shared -x 0 -Enoinline_data
	# the other layer: whiteouts over the seed tree, an opaque directory, new files
	mkdir -p "$fixed/other/d" "$fixed/other/opq" "$fixed/other/new"
	mknod "$fixed/other/small" c 0 0
	mknod "$fixed/other/d/rand" c 0 0
	printf 'upper\n' >"$fixed/other/d/f5000"
	printf 'n\n' >"$fixed/other/new/n" && ln "$fixed/other/new/n" "$fixed/other/new/n2"
	setfattr -n trusted.overlay.opaque -v y "$fixed/other/opq"
	find "$fixed/other" -exec touch -h -d '2023-03-03 03:03:03' {} +
	"$MKFS" --quiet -Enoinline_data "$fixed/other.img" "$fixed/other" ||
		{ echo "run-merge.sh: cannot make the other layer" >&2; exit 2; }
	# the layer --incremental adds: the same shapes
	cp -a "$fixed/other" "$fixed/inc"
	mkdir -p "$fixed/inc/d/sub" && printf 'more\n' >"$fixed/inc/d/sub/more"
	find "$fixed/inc" -exec touch -h -d '2024-04-04 04:04:04' {} +
	# a tar whose hard links name files only the base has (--incremental copies them up)
	python3 - "$fixed/links.tar" <<-'EOF' || { echo "run-merge.sh: cannot make links.tar" >&2; exit 2; }
	import io, sys, tarfile
	with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
	    def add(name, kind=tarfile.REGTYPE, link="", data=b""):
	        i = tarfile.TarInfo(name)
	        i.type, i.linkname, i.size, i.mtime = kind, link, len(data), 1700000000
	        t.addfile(i, io.BytesIO(data) if data else None)
	    add("d", tarfile.DIRTYPE)
	    add("d/new", data=b"new\n")
	    add("d/hl-sparse", tarfile.LNKTYPE, "d/sparse")
	    add("hl-entry", tarfile.LNKTYPE, "big/entry-with-a-longer-name-7")
	    add("hl-symlink", tarfile.LNKTYPE, "longlink")
	    add("hl-chr", tarfile.LNKTYPE, "chr")
	    add("d/hl-sublink", tarfile.LNKTYPE, "d/sub/link")
	    add("hl-rand", tarfile.LNKTYPE, "d/rand")
	EOF
fi
mapfile -t SEEDS < <(ls "$seeds"/*.img)
[ "${#SEEDS[@]}" -gt 0 ] || { echo "run-merge.sh: no seeds" >&2; exit 2; }
OTHER=$fixed/other.img INC=$fixed/inc

find_dir=$out/merge-findings log=$out/merge.log
mkdir -p "$find_dir"
work=$(mktemp -d "${TMPDIR:-/tmp}/merge-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
MUT=$work/layer.img DEST=$work/out.img

# run_mode N: runs mutant N in the mode N picks; sets cmd, layer, devs, check
# and the oracle: the layers' trees, bottom first (L for the mutant), and --strip
run_mode() {
	local mode=$(($1 % 7))
	rm -rf "$DEST" "$work/x" "$work/keep.img"
	layer=$MUT devs=() check=fsck strip= also=
	case $mode in
	0) cmd=("$MKFS" --quiet "$DEST" "$MUT" "$OTHER")
	   devs=(--device="$MUT" --device="$OTHER") trees=(L "$fixed/other") ;;
	1) cmd=("$MKFS" --quiet "$DEST" "$OTHER" "$MUT")
	   devs=(--device="$OTHER" --device="$MUT") trees=("$fixed/other" L) ;;
	2) cmd=("$MKFS" --quiet --clean=data "$DEST" "$MUT" "$OTHER")
	   trees=(L "$fixed/other") ;;
	3) cmd=("$MKFS" --quiet --clean=data -zlz4hc --ovlfs-strip=1 "$DEST" "$OTHER" "$MUT")
	   trees=("$fixed/other" L) strip=--strip ;;
	4) cp "$MUT" "$DEST" && cp "$MUT" "$work/keep.img"
	   cmd=("$MKFS" --quiet --incremental "$DEST" "$INC"); layer=$DEST check=incremental
	   trees=(L "$INC") ;;
	5) cp "$MUT" "$DEST" && cp "$MUT" "$work/keep.img"
	   cmd=("$MKFS" --quiet --incremental -zlz4hc "$DEST" "$INC"); layer=$DEST check=incremental
	   trees=(L "$INC") ;;
	6) cp "$MUT" "$DEST" && cp "$MUT" "$work/keep.img"	# hard links copy up from the base
	   cmd=("$MKFS" --quiet --incremental --tar=f "$DEST" "$fixed/links.tar"); layer=$DEST
	   check=incremental trees=()
	   also="$fixed/links.tar: entry '"	# a target the mutant lost: the tar's entry is named
	   ;;
	esac
	rc=0
	nice -n 10 timeout -k 5 20 "${cmd[@]}" >"$work/out" 2>"$work/err" || rc=$?
}

# oracle: when fsck.erofs extracts the mutant, the merge must show what
# tests/overlay-apply.py makes of its tree and the other layers'
oracle() {
	local t dirs=()
	rm -rf "$work/lx" "$work/expect"
	[ "${#trees[@]}" -gt 0 ] || return 0
	nice -n 10 timeout 60 "$FSCK" --extract="$work/lx" "$MUT" >/dev/null 2>&1 || return 0
	for t in "${trees[@]}"; do
		if [ "$t" = L ]; then dirs+=("$work/lx"); else dirs+=("$t"); fi
	done
	python3 "$top/tests/overlay-apply.py" $strip "$work/expect" "${dirs[@]}" \
		>/dev/null 2>&1 || return 0
	"$MANIFEST" "$work/expect" >"$work/expect.manifest" 2>/dev/null || return 0
	"$MANIFEST" "$work/x" >"$work/x.manifest" 2>"$work/fsck" ||
		{ what=no-manifest-of-the-merge; return 1; }
	diff -u "$work/expect.manifest" "$work/x.manifest" >"$work/fsck" && return 0
	what=tree-differs-$check
	return 1
}

# in_place: the --incremental image kept the mutant's root nid and
# meta_blkaddr (superblock bytes 14-15, 40-43): its records stayed, the layer
# was added in place (rewriting all metadata moves them after its blocks)
in_place() {
	local f
	for f in "-j1038 -N2" "-j1064 -N4"; do
		# shellcheck disable=SC2086 # the two options of od
		[ "$(od -An -tx1 $f "$DEST")" = "$(od -An -tx1 $f "$work/keep.img")" ] || return 1
	done
}

# new_layer_reads_back N: the files of the layer mutant N added read back
# right from the image (whatever the mutant's own files are)
new_layer_reads_back() {
	local rel
	if [ $(($1 % 7)) = 6 ]; then
		[ "$("$DUMP" --path=/d/new --cat "$DEST" 2>/dev/null)" = new ]
		return
	fi
	# (dump.erofs may exit 1 after the answer: naming the inode walks the damage)
	while IFS= read -r rel; do
		{ "$DUMP" --path="/$rel" --cat "$DEST" 2>/dev/null || :; } | cmp -s - "$INC/$rel" ||
			return 1
	done < <(cd "$INC" && find . -type f | sed 's|^\./||')
	while IFS= read -r rel; do	# its whiteouts stay
		[[ "$("$DUMP" --path="/$rel" "$DEST" 2>/dev/null || :)" == *"char dev"* ]] || return 1
	done < <(cd "$INC" && find . -type c | sed 's|^\./||')
}

# errors IMAGE: fsck.erofs' error lines without the path they start with (a
# copy-up's new name may come first), nids and the image's size
errors() {
	{ nice -n 10 timeout 60 "$FSCK" "$1" 2>&1 || :; } |
		sed -n -e "s|$1|IMAGE|g" -e 's/^\(fsck\.erofs: error: \)\/[^:]*: /\1/' \
			-e 's/ (nid [0-9]*)//g' -e 's/ ([0-9]* blocks)$//' \
			-e 's/ (the image has [0-9]* inode slots)$//' \
			-e '/errors* found$/d' -e '/error:/p' | sort -u
}

# same_damage: fsck names nothing wrong with the image that it did not name
# in the mutant (kept in $work/fsck otherwise)
same_damage() {
	errors "$work/keep.img" >"$work/mutant.errors"
	errors "$DEST" >"$work/out.errors"
	comm -13 "$work/mutant.errors" "$work/out.errors" >"$work/new.errors"
	[ -s "$work/new.errors" ] || return 0
	cp "$work/new.errors" "$work/fsck"
	return 1
}

# classify N: sets verdict (ok | refused | kept-damage | kept-past-end | finding) and what
classify() {
	verdict=finding what=
	if grep -qE 'Sanitizer|runtime error:' "$work/err" || [ "$rc" = 86 ] || [ "$rc" = 87 ]; then
		what=sanitizer:$(grep -m1 -oE '(ERROR: [A-Za-z]+Sanitizer: [a-z-]+|runtime error: [a-z ]+)' \
			"$work/err" | tr ' ' _)
		return
	fi
	case $rc in
	124|137) what=timeout; return ;;
	0) ;;
	1) ;;
	*) what=exit-$rc; return ;;
	esac
	if [ "$rc" = 0 ]; then
		local frc=0
		[ "$check" = fsck ] || devs=()
		nice -n 10 timeout 60 "$FSCK" "${devs[@]}" --extract="$work/x" "$DEST" >"$work/fsck" 2>&1 ||
			frc=$?
		if [ "$frc" != 0 ]; then
			what=fsck-rejects-$check
			if grep -qE 'Sanitizer|runtime error:' "$work/fsck"; then
				what=fsck-sanitizer
			elif [ "$check" = incremental ] &&
			     ! nice -n 10 timeout 60 "$FSCK" "$work/keep.img" >/dev/null 2>&1; then
				# the mutant's damage may stay where the layer did not reach
				if ! same_damage; then
					what=new-damage-$(in_place && echo in-place || echo rewritten-all)
					# in place, what lay past the image's end lies in its new blocks
					if in_place && grep -q 'beyond the end of the image' "$work/mutant.errors" &&
					   new_layer_reads_back "$1"; then
						verdict=kept-past-end what=
					fi
				elif ! in_place; then
					what=rewritten-all-keeps-damage
				elif ! new_layer_reads_back "$1"; then
					what=new-layer-wrong-over-a-damaged-image
				else
					verdict=kept-damage what=
				fi
			fi
			return
		fi
		[ -z "$MANIFEST" ] || oracle || return 0
		verdict=ok
		return
	fi
	# exit 1: one clear message naming the layer, and nothing changed
	if [ "$check" = incremental ]; then
		cmp -s "$DEST" "$work/keep.img" || { what=incremental-image-changed; return; }
		[ "$(ls "$work" | grep -c '^out\.img.')" = 0 ] || { what=left-a-file; return; }
	elif [ -e "$DEST" ]; then
		what=image-left-after-failure
		return
	fi
	if ! grep -qF -- "$layer" "$work/err" && { [ -z "$also" ] || ! grep -qF -- "$also" "$work/err"; }; then
		what=message-not-naming-the-layer
		return
	fi
	verdict=refused
	# the kind: the first error, with the layer, the path and numbers made generic
	what=$(grep -m1 'error' "$work/err" | sed -e "s|$layer|LAYER|g" -e "s|$fixed/links.tar|TAR|" \
		-e 's|LAYER: /[^:]*:|LAYER: /PATH:|' -e 's/[0-9][0-9]*/N/g' | cut -c1-160)
	[ -n "$what" ] || what="(no error line) $(head -c 120 "$work/err")"
}

keep_finding() {	# keep_finding N LOGLINE
	local sig dir count
	sig=$(printf '%s' "$what" | tr -c 'A-Za-z0-9_.-' _ | cut -c1-60)
	count=$(find "$find_dir" -maxdepth 1 -name "$sig-*" | wc -l)
	[ "$count" -lt 3 ] || return 0
	dir=$find_dir/$sig-$1
	mkdir -p "$dir"
	cp "$MUT" "$dir/layer.img"
	[ -f "$work/keep.img" ] && cp "$work/keep.img" "$dir/layer.img"
	cp "$work/err" "$dir/stderr"
	[ -f "$work/fsck" ] && cp "$work/fsck" "$dir/fsck.txt"
	{
		echo "mutant $1 of campaign $seed: $2"
		echo "rc $rc: ${cmd[*]}"
		echo "verdict: $what"
	} >"$dir/README"
}

one() {	# one N: make and run mutant N
	local n=$1
	rm -f "$work/fsck"
	mlog=$("$out/bin/fuzz-mutate" -s "$seed" -x "$n" -o "$MUT" "${SEEDS[@]}" 2>&1) ||
		{ echo "run-merge.sh: fuzz-mutate failed: $mlog" >&2; exit 2; }
	run_mode "$n"
	classify "$n"
}

if [ -n "$only" ]; then
	one "$only"
	echo "mutant: $mlog"
	echo "command (rc $rc): ${cmd[*]}"
	cat "$work/err"
	[ -f "$work/fsck" ] && cat "$work/fsck"
	echo "verdict: $verdict $what"
	[ "$verdict" != finding ]
	exit $?
fi

report() {
	local el=$(($(date +%s) - start))
	echo "campaign $seed: mutants $first..$last (modes $modes): $done_runs runs in $el s" \
		"($(awk -v r="$done_runs" -v s="$el" 'BEGIN { printf "%.1f", s ? r / s : r }') runs/s):" \
		"$ok ok, $refused refused, $kept kept-damage, $past kept-past-end, $found findings"
	echo "per mode (N mod 7): $(for k in "${!per_mode[@]}"; do echo "$k=${per_mode[$k]}"; done |
		sort -n | tr '\n' ' ')"
	echo "message kinds (count, first error with layer/path/numbers made generic):"
	for k in "${!kinds[@]}"; do printf '%7d  %s\n' "${kinds[$k]}" "$k"; done | sort -rn
}

declare -A kinds=()
ok=0 refused=0 kept=0 past=0 found=0 done_runs=0 last=$first
declare -A per_mode=()	# "MODE VERDICT" -> runs
start=$(date +%s)
trap 'report | tee -a "$log"; rm -rf "$work"; exit 1' INT TERM
echo "campaign $seed, mutants $first.. (modes $modes), ${#SEEDS[@]} seeds, $(date -u +%FT%TZ)" >>"$log"
for ((n = first; done_runs < runs; n++)); do
	[[ ",$modes," == *",$((n % 7)),"* ]] || continue
	one "$n"
	last=$n
	done_runs=$((done_runs + 1))
	per_mode["$((n % 7)) $verdict"]=$((${per_mode["$((n % 7)) $verdict"]:-0} + 1))
	case $verdict in
	ok) ok=$((ok + 1)) ;;
	kept-damage) kept=$((kept + 1)) ;;
	kept-past-end) past=$((past + 1)) ;;
	refused) refused=$((refused + 1)); kinds[$what]=$((${kinds[$what]:-0} + 1)) ;;
	finding) found=$((found + 1)); echo "FINDING $n: $what" | tee -a "$log"
		 keep_finding "$n" "$mlog" ;;
	esac
	if [ $((done_runs % 500)) = 0 ]; then
		echo "$n: $done_runs runs, $ok ok, $refused refused, $kept kept-damage, $past kept-past-end," \
			"$found findings," \
			"$(($(date +%s) - start)) s" >>"$log"
	fi
	[ "$secs" = 0 ] || [ $(($(date +%s) - start)) -lt "$secs" ] || break
done
report | tee -a "$log"
[ "$found" = 0 ]
