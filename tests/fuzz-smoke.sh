#!/bin/bash
# The libFuzzer harnesses still build against today's library, and each one
# runs over the seed images of every layout our mkfs.erofs makes, plus a few
# hundred mutations, without a finding.  It is no campaign (tests/fuzz/run.sh
# is): it catches a harness that no longer links or whose contract checks
# (include/erofs/read/reader.h) trip on a valid image, before a campaign is due.
# Needs clang and its fuzzer runtime (libclang-rt-14-dev): skipped without.
# First, with no clang needed: 70 mutants of tests/fuzz/run-merge.sh (the
# merge path of rebuild mode and --incremental, ten of each of its modes).
. "$(dirname "$0")/lib.sh"
skip() { [ "$failures" = 0 ] || finish; echo "$test_name: $*; skipped"; exit 77; }

if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
	if bash "$top_srcdir/tests/fuzz/run-merge.sh" -b "$top_builddir" -o "$WORK/merge" -n 70 \
		>"$WORK/merge.log" 2>&1; then
		pass "run-merge.sh: $(grep -m1 'runs in' "$WORK/merge.log")"
	else
		grep -E 'FINDING|run-merge.sh:' "$WORK/merge.log" >&2 || tail -5 "$WORK/merge.log" >&2
		fail "run-merge.sh found something (kept in $WORK/merge/merge-findings)"
	fi
fi

command -v clang >/dev/null || skip "no clang (apt-get install clang libclang-rt-14-dev)"
rt=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
[ -f "$rt" ] || rt=$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)
[ -n "$rt" ] && [ -f "$rt" ] || skip "no libFuzzer runtime (apt-get install libclang-rt-14-dev)"

out=$WORK/fuzz
if ! bash "$top_srcdir/tests/fuzz/build.sh" "$out" >"$WORK/build.log" 2>&1; then
	tail -20 "$WORK/build.log" >&2
	fail "tests/fuzz/build.sh: the harnesses do not build"
	finish
fi
pass "the harnesses build"

# the seeds: run.sh -s makes them with our mkfs and drops any fsck refuses
if ! MKFS=$MKFS FSCK=$FSCK bash "$top_srcdir/tests/fuzz/run.sh" -s -o "$out" >"$WORK/seeds.log" 2>&1; then
	tail -20 "$WORK/seeds.log" >&2
	fail "tests/fuzz/run.sh -s: no seeds"
	finish
fi
nseeds=$(find "$out/seeds" -name '*.img' | wc -l)
[ "$nseeds" -ge 20 ] || fail "only $nseeds seed images (run.sh makes about 27)"
grep 'dropped' "$WORK/seeds.log" && fail "seeds were dropped: mkfs or fsck changed"

for h in reader fsck dump fsops extract api; do
	corpus=$WORK/corpus-$h
	mkdir -p "$corpus"
	if (cd "$WORK" && "$out/bin/fuzz-$h" -runs=300 -seed=1 -timeout=20 -rss_limit_mb=2048 \
		-close_fd_mask=1 -artifact_prefix="$WORK/$h-" "$corpus" "$out/seeds") \
		>"$WORK/$h.log" 2>&1; then
		pass "fuzz-$h: the seeds and 300 mutations"
	else
		grep -m5 -E 'ERROR|contract broken|SUMMARY' "$WORK/$h.log" >&2 || tail -5 "$WORK/$h.log" >&2
		fail "fuzz-$h found something (log: $WORK/$h.log)"
	fi
done
finish
