# Shared by the bench/ scripts (sourced): medians and ratios of measured
# values, where '-' stands for a failed run.

# median VALUE...: the median, ignoring '-' (failed runs); '-' when none is left
median() {
	printf '%s\n' "$@" | awk '$1 != "-"' | sort -g |
		awk '{ v[NR] = $1 } END {
			if (!NR) print "-"
			else if (NR % 2) print v[(NR + 1) / 2]
			else { m = (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf(m == int(m) ? "%.0f\n" : "%.4f\n", m) } }'
}

# ratio A B: A / B, '-' when either is missing
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.6f\n", a / b }'
}

# fmt FORMAT VALUE: printf a number, '-' stays '-'
# shellcheck disable=SC2059 # the format is the argument
fmt() {
	if [ "$2" = - ]; then echo -; else LC_ALL=C printf "$1" "$2"; fi
}
