#!/usr/bin/env bash
# The -exec of make test's go test runs: runs a test binary with its
# arguments and, when INGEST_CPU_LOG names a file, adds to it a line with the
# CPU-seconds (user + sys) the binary and the processes it waited for took,
# and its package's directory (go test runs a test binary there) below
# INGEST_CPU_ROOT, then INGEST_CPU_TAG, so that make test can print what each
# package costs. It exits as the binary did.
"$@"
rc=$?
if [ -n "${INGEST_CPU_LOG:-}" ]; then
	# times' second line is this shell's children's user and sys time,
	# as 1m2.345s; in a pipe it would be a subshell's, without children.
	t=$(mktemp)
	times >"$t"
	secs=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } printf "%.1f", s }' "$t")
	rm -f "$t"
	dir=${PWD#"${INGEST_CPU_ROOT:-}"}
	dir=${dir#/}
	echo "$secs ${dir:-.}${INGEST_CPU_TAG:+ $INGEST_CPU_TAG}" >>"$INGEST_CPU_LOG"
fi
exit $rc
