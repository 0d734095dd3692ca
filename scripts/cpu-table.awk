#!/usr/bin/awk -f
# make test's CPU-seconds: the first file is `times` of make test's shell
# (its second line: the user and sys time of every process it waited for,
# as 1m2.345s), the second the lines scripts/cputime.sh added, one per test
# binary (seconds, package directory, the run it was in). It prints each
# package's, the most first, then what the go commands spent around them
# (compiling, linking, vetting) and the whole run's, with wall (seconds).
FNR == NR {
  if (FNR == 2) for (i = 1; i <= 2; i++) { split($i, p, "m"); all += p[1] * 60 + p[2] }
  next
}
{ pkg = $2 (NF > 2 ? " (" $3 ")" : ""); cpu[pkg] += $1; tests += $1 }
END {
  print "CPU-seconds (user + sys), by package's test binary:"
  for (k in cpu) printf "%9.1f  %s\n", cpu[k], k | "sort -rn"
  close("sort -rn")
  printf "%9.1f  compiling, linking and vetting (the go commands)\n", all - tests
  printf "%9.1f  make test in all, in %dm%02ds of wall time\n", all, wall / 60, wall % 60
}
