#!/usr/bin/awk -f
# The side-by-side table of BenchmarkStores (store/stores_bench_test.go):
# each case on SQLite and on PostgreSQL, and PostgreSQL's figure as a ratio
# of SQLite's (above 1 is faster for a rate, slower for a time).
/^BenchmarkStores\// {
  split($1, n, "/"); st = n[2]; c = n[3]; sub(/-[0-9]+$/, "", c)
  for (i = 1; i <= NF; i++) {
    if ($(i+1) == "videos/s")  { v[st, c] = $i; unit[c] = "videos/s" }
    if ($(i+1) == "ms/report") { v[st, c] = $i; unit[c] = "ms" }
    if ($(i+1) == "p50-ms")    { v[st, c] = $i; unit[c] = "p50 ms" }
    if ($(i+1) == "p99-ms")    { p99[st, c] = $i }
  }
  if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
}
END {
  printf "%-22s %-9s %12s %12s %10s\n", "case", "unit", "sqlite", "postgres", "pg/sqlite"
  for (k = 1; k <= nc; k++) {
    c = order[k]
    r = v["sqlite", c] > 0 ? sprintf("%.2f", v["postgres", c] / v["sqlite", c]) : "-"
    printf "%-22s %-9s %12.2f %12.2f %10s\n", c, unit[c], v["sqlite", c], v["postgres", c], r
    if (unit[c] == "p50 ms") {
      r = p99["sqlite", c] > 0 ? sprintf("%.2f", p99["postgres", c] / p99["sqlite", c]) : "-"
      printf "%-22s %-9s %12.2f %12.2f %10s\n", "", "p99 ms", p99["sqlite", c], p99["postgres", c], r
    }
  }
}
