#!/bin/bash
# The man pages say what the programs do: every extended option that
# mkfs.erofs --help lists is accepted, and man/mkfs.erofs.8's COMPATIBILITY
# section does not call it refused (it once said fragments, all-fragments
# and dedupe were, long after they worked).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "$test_name: needs python3; skipped"; exit 77; }

mkdir -p "$WORK/tree/d"
head -c 20000 < <(yes 'some text for the man page test') >"$WORK/tree/d/text"

# the -E options of the help text, without their values and explanations
opts=$("$MKFS" --help 2>&1 | python3 -c '
import re, sys
text = sys.stdin.read()
m = re.search(r"extended options:(.*?)\n -", text, re.S)
body = re.sub(r"\([^)]*\)", "", m.group(1)) if m else ""
print(" ".join(o.strip().split("[")[0] for o in body.split(",") if o.strip()))')
[ -n "$opts" ] || { fail "no extended options found in mkfs.erofs --help"; finish; }

# the sentences of the COMPATIBILITY section, roff markup removed
python3 - "$top_srcdir/man/mkfs.erofs.8" >"$WORK/compat.txt" <<'EOF'
import re, sys
src = open(sys.argv[1]).read().split("\n")
out, on = [], False
for line in src:
	if line.startswith(".SH"):
		on = line.split(None, 1)[1:] == ["COMPATIBILITY"]
		continue
	if not on:
		continue
	if line.startswith("."):
		line = " ".join(line.split()[1:]).replace('"', "")
	line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\ ", " ")
	out.append(line)
text = re.sub(r"\s+", " ", " ".join(out))
for sentence in re.split(r"(?<=\.) ", text):
	print(sentence)
EOF

for opt in $opts; do
	extra=()
	case $opt in
	force-inode-*|noinline_data|inline_data) ;;
	*) extra=(-z lz4) ;;
	esac
	if "$MKFS" --quiet "${extra[@]}" -E "$opt" "$WORK/o.img" "$WORK/tree" >"$WORK/mkfs.log" 2>&1; then
		pass "-E $opt: accepted"
	else
		fail "-E $opt: listed by --help but refused: $(head -1 "$WORK/mkfs.log")"
	fi
	if grep -i 'refused' "$WORK/compat.txt" | grep -P "(?<![\\w-])\\Q$opt\\E(?![\\w-])" >"$WORK/said"; then
		fail "-E $opt: man/mkfs.erofs.8 COMPATIBILITY calls it refused: $(head -1 "$WORK/said")"
	else
		pass "-E $opt: not called refused in man/mkfs.erofs.8"
	fi
done
finish
