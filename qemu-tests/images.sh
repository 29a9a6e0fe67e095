# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with run.sh
# qemu-tests/images.sh: run.sh's matrix lines made into images (sourced by
# run.sh; bash): expected manifests, tar and layer sources, and
# build_images, which plans every line in order and has make_image build
# IMAGE_JOBS of them at a time; collect_image takes the results in matrix
# order, so a guest's image indexes do not depend on which finished first.

# expected manifest for TREE_DIR with EXPECT edits -> file $2; with
# "extract", the tree our fsck.erofs extracts from image $3 instead (for
# options that change owners, modes and labels on purpose)
expected_manifest() {
	local expect=$1 out=$2 image=${3:-} flags=() sed_prog=() tok key
	IFS=, read -ra toks <<< "$expect"
	for tok in "${toks[@]}"; do
		case $tok in
		noxattrs) flags+=(--no-xattrs) ;;
		esac
	done
	if [[ ,$expect, == *,extract,* ]]; then
		local dir=$SCRATCH/extract/$(basename "$image" .img)
		rm -rf "$dir"
		mkdir -p "$SCRATCH/extract"
		"$FSCK" --extract="$dir" --preserve \
			${BLOB[$(basename "$image" .img)]:+--device=${BLOB[$(basename "$image" .img)]}} \
			"$image" > "$dir.log" 2>&1 ||
			die "fsck.erofs --extract of $image failed (log: $dir.log)"
		"$MANIFEST" "${flags[@]}" "$dir" > "$out.full" || die "manifest of $dir failed"
		# an extracted symlink cannot keep the mode the image gives it (fs_config:
		# init* 0750), so symlink modes are not compared for these lines
		drop_symlink_modes < "$out.full" > "$out" && rm -f "$out.full"
		return
	fi
	key=$(echo "$TREE_DIR ${flags[*]}" | md5sum | cut -c1-12)
	if [ ! -f "$SCRATCH/manifests/$key" ]; then
		# written whole, then renamed: image jobs side by side may both make it
		local part=$SCRATCH/manifests/$key.$BASHPID
		mkdir -p "$SCRATCH/manifests"
		"$MANIFEST" "${flags[@]}" "$TREE_DIR" > "$part" || die "host manifest of $TREE_DIR failed"
		mv -f "$part" "$SCRATCH/manifests/$key"
	fi
	for tok in "${toks[@]}"; do
		case $tok in
		same|noxattrs|extract|overlay|fuse|refuse=*|corrupt=*|kernel=*|digest=*) ;;
		ours61) ;;
		uid=*) sed_prog+=(-e "s/ uid=[0-9]+ / uid=${tok#uid=} /") ;;
		gid=*) sed_prog+=(-e "s/ gid=[0-9]+ / gid=${tok#gid=} /") ;;
		mtime=*) sed_prog+=(-e "s/ mtime=-?[0-9]+\.[0-9]+/ mtime=${tok#mtime=}.000000000/") ;;
		*) die "matrix: unknown EXPECT token '$tok'" ;;
		esac
	done
	if [ ${#sed_prog[@]} -gt 0 ]; then
		sed -E "${sed_prog[@]}" "$SCRATCH/manifests/$key" > "$out"
	else
		cp "$SCRATCH/manifests/$key" "$out"
	fi
	for tok in "${toks[@]}"; do
		if [[ $tok == digest=* ]]; then
			add_digests "${tok#digest=}" "$out"
		fi
	done
}

# EXPECT digest=NAME (mkfs --xattr-inode-digest=NAME): every non-empty
# regular file of TREE_DIR shows NAME = "sha256:" + the SHA-256 of its bytes
add_digests() { # NAME MANIFEST
	python3 - "$1" "$2" "$TREE_DIR" <<'PY' || die "digest manifest edit failed"
import hashlib, os, re, sys
name, path, tree = sys.argv[1], sys.argv[2], sys.argv[3]
unesc = lambda t: re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), t)
esc = lambda b: "".join(chr(c) if 33 <= c < 127 and chr(c) not in "\\%=;" else "%%%02X" % c for c in b)
lines = []
for line in open(path, "rb").read().decode("latin-1").splitlines():
    toks = line.split(" ")
    if "type=reg" in toks and "size=0" not in toks:
        rel = unesc(toks[0].encode("latin-1"))
        with open(os.path.join(tree.encode(), rel), "rb") as f:
            value = b"sha256:" + hashlib.sha256(f.read()).digest()
        pairs = []
        for i, t in enumerate(toks):
            if t.startswith("xattrs="):
                pairs = t[len("xattrs="):].split(";")
                del toks[i]
                break
        pairs.append(esc(name.encode()) + "=" + value.hex())
        pairs.sort(key=lambda p: unesc(p.split("=")[0].encode("latin-1")))
        toks.append("xattrs=" + ";".join(pairs))
    lines.append(" ".join(toks))
open(path, "w", encoding="latin-1").write("\n".join(lines) + "\n")
PY
}

# --tar=f lines: TAR_SOURCE is what mkfs images instead of the tree, and
# TREE_DIR becomes what the guest must show: what tar -x makes of a pax tar
# of the tree; for the layer tree, its layer, and (EXPECT overlay) the tree
# a container runtime shows, the layer mounted over the lower tree's image
tar_source() { # TREE EXPECT
	if [ "$1" = layer ]; then
		TAR_SOURCE=$SCRATCH/trees/layer/upper.tar
		TREE_DIR=$SCRATCH/trees/layer/merged
		return
	fi
	TAR_SOURCE=$SCRATCH/trees/$1.tar
	[ -f "$TAR_SOURCE" ] || tar --format=pax --xattrs --xattrs-include='*' -cf "$TAR_SOURCE" \
		-C "$TREE_DIR" . 2>/dev/null || die "cannot make a tar of $TREE_DIR"
	TREE_DIR=$SCRATCH/trees/$1-tar-x
	[ -d "$TREE_DIR" ] || { mkdir -p "$TREE_DIR" && tar --xattrs --xattrs-include='*' \
		--numeric-owner -xpf "$TAR_SOURCE" -C "$TREE_DIR" 2>/dev/null; } ||
		die "cannot extract $TAR_SOURCE"
}

# EXPECT overlay: the lower layer's image, NAME-lower, made and checked on its own too
add_lower_image() { # NAME
	local lower=$1-lower
	prepare_tree layer
	"$MKFS" "$SCRATCH/img/$lower.img" "$TREE_DIR" > "$OUT/mkfs-$lower.log" 2>&1 ||
		die "mkfs of the lower layer failed (log: $OUT/mkfs-$lower.log)"
	expected_manifest same "$OUT/expected/$lower"
	NAMES+=("$lower")
	KIND[$lower]=mount
	IMG[$lower]=$SCRATCH/img/$lower.img
	# it boots wherever its layer does: the guest mounts it under the overlay
	KMIN[$lower]=${KMIN[$1]}
	KMAX[$lower]=${KMAX[$1]}
	ALGS[$lower]=0
	GUEST_KIND[$1]=overlay=$lower
}

# rebuild mode (@layers@, @zlayers@): the layer tree's lower directory and
# upper tar as two EROFS layer images, made by the mkfs under test
# (@layers@: uncompressed without inline tails, which a metadata-only merge
# can point into; @zlayers@: compressed with tails and fragments, for
# --clean=data).  plan_layer_images NAME: LAYER_IMAGES lists them bottom
# first, and TREE_DIR becomes what a container runtime shows of the two
plan_layer_images() {
	prepare_tree layer
	LAYER_IMAGES="$SCRATCH/img/$1.l1 $SCRATCH/img/$1.l2"
	TREE_DIR=$SCRATCH/trees/layer/merged
}

# make_layer_images NAME ARGS LOG: makes them (in make_image's job)
make_layer_images() {
	local base=$SCRATCH/img/$1 z=(-Enoinline_data) zu=(-Enoinline_data)
	[[ $2 != *@zlayers@* ]] || { z=(-zlz4hc); zu=(-zlz4hc -Eztailpacking,fragments); }
	"$MKFS" --quiet "${z[@]}" "$base.l1" "$SCRATCH/trees/layer/lower" > "$3" 2>&1 &&
		"$MKFS" --quiet "${zu[@]}" --tar=f --aufs "$base.l2" "$SCRATCH/trees/layer/upper.tar" >> "$3" 2>&1
}

drop_symlink_modes() { sed -E '/^[^ ]* type=lnk /s/ mode=[0-7]+//'; }

# last non-empty line of a log, without progress-bar escapes, shortened
last_line() {
	tr '\r' '\n' < "$1" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e '/^[[:space:]]*$/d' |
		tail -n 1 | cut -c1-120
}

# --tar=i,MAPFILE: copies the tar's bytes the map file names into the
# image's blocks (what a device-mapper table over the tar would show)
apply_mapfile() {
	local img=$1 map=$2 tar=$3 blksz blk n off zeroed
	blksz=$((1 << $(od -An -tu1 -j 1036 -N 1 "$img")))
	while read -r blk n off zeroed; do
		dd if="$tar" of="$img" bs=1M iflag=skip_bytes,count_bytes oflag=seek_bytes \
			skip=$((16#$off)) seek=$((16#$blk * blksz)) \
			count=$((16#$n * blksz - 10#${zeroed:-0})) conv=notrunc status=none || return 1
	done < "$map"
}

# Builds every matrix image.  Fills NAMES[], KIND[] (mount|refuse|corrupt),
# IMG[]; prints SKIP lines and counts mkfs failures as FAILs up front.
# The lines are read and planned here, in order (trees, tars of trees and
# every array are made in this shell); each image's own work (its mkfs
# runs, craft, expected manifest) is make_image's, IMAGE_JOBS at a time;
# collect_image then takes the results in matrix order.
build_images() {
	local line name tree expect args lacking kind t0=$SECONDS planned=() running=0
	NAMES=()
	mkdir -p "$SCRATCH/img" "$OUT/expected" "$SCRATCH/status"
	declare -gA J_KIND J_EXPECT
	while read -r line; do
		line=${line%%#*}
		[ -n "${line//[[:space:]]/}" ] || continue
		read -r name tree expect args <<< "$line"
		[ -n "$expect" ] || die "matrix: line for '$name' has no EXPECT"
		[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "matrix: bad name '$name'"
		[ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || continue
		split_kernel_token "$name" "$expect"
		expect=$EXPECT_REST
		# files the matrix names live beside it
		args=${args//@srcdir@/$top_srcdir/qemu-tests}
		# shellcheck disable=SC2086 # ARGS are words by design
		set -- $args
		if lacking=$(mkfs_lacks_option "$@"); then
			report_skip "$name" "mkfs does not offer $lacking"
			continue
		fi
		case $expect in
		refuse=*) kind=refuse
			REFUSE[$name]=${expect#refuse=}
			REFUSE[$name]=${REFUSE[$name]%%:*}
			[ -n "${REFUSE_RE[${REFUSE[$name]}]:-}" ] || die "matrix: unknown refusal '$expect'" ;;
		corrupt=*) kind=corrupt ;;
		hostile=*) kind=hostile
			hostile_plan "$name" "$expect" ;;
		*) kind=mount ;;
		esac
		if [[ ,$expect, == *,fuse,* ]]; then
			# mounted by erofsfuse in the guest instead of the kernel's erofs
			if [ ! -x "$EROFSFUSE" ]; then
				report_skip "$name" "no erofsfuse at $EROFSFUSE (not built: configure found no libfuse3, or EROFSFUSE unset)"
				continue
			fi
			GUEST_KIND[$name]=fuse
		fi
		prepare_tree "$tree"
		# @tree@ stands for the tree's own folder (rule files inside it)
		args=${args//@tree@/$TREE_DIR}
		# @blob@: a second device (--blobdev), attached beside the image
		[[ $args != *@blob@* ]] || BLOB[$name]=$SCRATCH/img/$name.blob
		args=${args//@blob@/$SCRATCH/img/$name.blob}
		local source=$TREE_DIR map= base_args=() layers=
		LAYER_IMAGES=
		if [[ $args =~ @[a-z]*incremental@ ]]; then
			# --incremental: the image starts as the layer tree's lower
			# directory (@zincremental@: LZ4HC in 64 KiB pclusters, which
			# stay in place; @fincremental@: with tails and fragments, which
			# are read back), the tar layer is added
			base_args=(--quiet)
			[[ $args != *@zincremental@* ]] || base_args+=(-zlz4hc -C65536)
			[[ $args != *@fincremental@* ]] || base_args+=(-zlz4hc -Eztailpacking,fragments)
			[[ $args != *@lzmaincremental@* ]] || base_args+=(-zlzma -C65536)
			args=${args//@incremental@/}
			args=${args//@zincremental@/}
			args=${args//@fincremental@/}
			args=${args//@lzmaincremental@/}
		fi
		if [[ $args == *@layers@* || $args == *@zlayers@* ]]; then
			# rebuild mode: the layer tree's two layers as EROFS images
			layers=$args
			plan_layer_images "$name"
			[[ $args == *--clean* ]] || BLOB[$name]=$LAYER_IMAGES	# metadata only
			args=${args//@layers@/}
			args=${args//@zlayers@/}
			source=$LAYER_IMAGES
		fi
		local tar_of=
		if [[ $args == *@tar@* ]]; then	# the source: a tar of the tree
			tar_of=$TREE_DIR
			source=$SCRATCH/img/$name.tar
			args=${args//@tar@/}
			[[ " $args " != *" --tar=i "* ]] || BLOB[$name]=$source	# its extra device
			[[ " $args " != *" --tar=headerball "* ]] || source=$source.hb	# its headers only
			[[ $args != *@map@* ]] || map=$SCRATCH/img/$name.map
			args=${args//@map@/$map}
		fi
		if [[ " $args " == *" --tar=f "* ]]; then
			tar_source "$tree" "$expect"
			source=$TAR_SOURCE
		fi
		local sources=("$source")
		# shellcheck disable=SC2206 # two layer files, words by design
		[ "$source" != "${LAYER_IMAGES:-}" ] || sources=($source)
		J_KIND[$name]=$kind J_EXPECT[$name]=$expect
		planned+=("$name")
		# (wait -n returns at once for a job that has already ended)
		while [ "$running" -ge "$IMAGE_JOBS" ]; do
			wait -n || true
			running=$((running - 1))
		done
		make_image "$name" "$expect" "${base_args[*]}" "$layers" "$tar_of" "$map" "$args" "${sources[@]}" < /dev/null &
		running=$((running + 1))
	done < <(cat "$MATRIX" ${HOSTILE_LIST:+"$HOSTILE_LIST"})
	wait || true
	for name in "${planned[@]}"; do
		collect_image "$name"
	done
	msg "${#NAMES[@]} image(s) built in $((SECONDS - t0)) s with $MKFS ($IMAGE_JOBS at a time)"
	add_findings
}

# make_image NAME EXPECT BASE-ARGS LAYERS TAR-OF MAP ARGS SOURCE...: one
# image's work, in a background job: the --incremental base (made with
# BASE-ARGS, when given), the rebuild layers (LAYERS: the line's ARGS, when
# they name @layers@ or @zlayers@), the tar of folder TAR-OF, the mkfs, the
# map file, the craft and the expected manifest.  Ends by writing
# $SCRATCH/status/NAME: "ok", or "fail" with the reason and the log on
# the next two lines, for collect_image.
make_image() {
	local name=$1 expect=$2 base_args=$3 layers=$4 tar_of=$5 map=$6 args=$7
	shift 7
	local sources=("$@") img=$SCRATCH/img/$name.img log=$OUT/mkfs-$name.log status=$SCRATCH/status/$name
	image_fail() { printf 'fail\n%s\n%s\n' "$1" "$2" > "$status"; exit 0; }
	# shellcheck disable=SC2086 # BASE-ARGS are words by design
	if [ -n "$base_args" ] &&
	   ! "$MKFS" $base_args "$img" "$SCRATCH/trees/layer/lower" > "$log" 2>&1; then
		image_fail "mkfs of the base failed: $(last_line "$log")" "$log"
	fi
	if [ -n "$layers" ] && ! make_layer_images "$name" "$layers" "$log"; then
		image_fail "mkfs of a layer failed: $(last_line "$log")" "$log"
	fi
	if [ -n "$tar_of" ]; then
		local tarball=$SCRATCH/img/$name.tar
		tar --format=pax --xattrs --xattrs-include='*' -C "$tar_of" -cf "$tarball" . ||
			image_fail "cannot make $tarball" "$log"
		if [ "${sources[0]}" = "$tarball.hb" ]; then
			python3 "$top_srcdir/tests/tar-headerball.py" "$tarball" "$tarball.hb" ||
				image_fail "cannot make the headerball of $tarball" "$log"
		fi
	fi
	# shellcheck disable=SC2086 # ARGS are words by design
	set -- $args
	if ! "$MKFS" "$@" "$img" "${sources[@]}" > "$log" 2>&1 ||
	   { [ -n "$map" ] && ! apply_mapfile "$img" "$map" "${sources[0]}" >> "$log" 2>&1; }; then
		image_fail "mkfs failed: $(last_line "$log")" "$log"
	fi
	local craft=()
	case $expect in
	refuse=incompat:*) craft=(incompat "$img" "${expect#refuse=incompat:}") ;;
	refuse=unread) ;;
	refuse=*) craft=("${expect#refuse=}" "$img") ;;
	corrupt=flip) craft=(flip "$img" "$CANARY_MARKER") ;;
	hostile=*) craft=(hostile "$expect" "$img") ;;
	esac
	if [ ${#craft[@]} -gt 0 ] &&
	   ! run_craft "${craft[@]}" > "$OUT/craft-$name.log" 2>&1; then
		image_fail "cannot craft the image: $(last_line "$OUT/craft-$name.log")" "$OUT/craft-$name.log"
	fi
	rm -f "$OUT/craft-$name.log"
	case $expect in
	refuse=*|hostile=*) ;;
	*) expected_manifest "$expect" "$OUT/expected/$name" "$img" ;;
	esac
	echo ok > "$status"
}

# collect_image NAME: a finished make_image, in matrix order: its failure
# reported for every mode, or the image listed (NAMES[] and the rest)
collect_image() {
	local name=$1 status=$SCRATCH/status/$1 result why log mode
	[ -f "$status" ] || die "building image $name stopped (see the messages above)"
	{ read -r result; IFS= read -r why; IFS= read -r log; } < "$status" || true	# "ok" is one line
	if [ "$result" != ok ]; then
		for mode in $MODES; do
			report_fail "$mode/$name" "$why" "$log"
		done
		return
	fi
	check_line_kernel "$name" "$OUT/mkfs-$name.log"
	rm -f "$OUT/mkfs-$name.log"
	[ "${J_EXPECT[$name]}" != overlay ] || add_lower_image "$name"
	NAMES+=("$name")
	KIND[$name]=${J_KIND[$name]}
	ALGS[$name]=$(image_algs "$SCRATCH/img/$name.img")
	[[ ,${J_EXPECT[$name]}, != *,extract,* ]] || NO_SYMLINK_MODE[$name]=1
	[[ ,${J_EXPECT[$name]}, != *,ours61,* ]] || OURS61[$name]=1
	IMG[$name]=$SCRATCH/img/$name.img
}
