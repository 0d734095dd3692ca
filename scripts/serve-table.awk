#!/usr/bin/awk -f
# The serving table of make bench: BenchmarkServeFromMemory's lines as one
# row per route and clients, ours beside the bytes-from-memory server.
BEGIN {
  printf "%-34s %7s %9s %8s %8s %9s %8s %8s %7s\n", "route", "clients", "req/s", "p50 ms", "p99 ms", "mem req/s", "p50 ms", "p99 ms", "ratio"
}
/^BenchmarkServeFromMemory\// {
  name = $1; sub(/^BenchmarkServeFromMemory\//, "", name); sub(/-[0-9]+$/, "", name)
  split(name, parts, "/clients="); what = parts[1]; clients = parts[2]
  sub(/^route=/, "", what); sub(/^metered=/, "metered ", what)
  for (i = 1; i <= NF; i++) v[$(i+1)] = $i
  goal = (what ~ /^metered/) ? 0.9 : 0.5
  base = (what ~ /^metered/) ? "unmetered" : "memory"
  printf "%-34s %7s %9.0f %8.2f %8.2f %9.0f %8.2f %8.2f %6.2fx  goal >= %.1fx vs %s %s\n", what, clients, v["req/s"], v["p50-ms"], v["p99-ms"], v["base-req/s"], v["base-p50-ms"], v["base-p99-ms"], v["ratio"], goal, base, (v["ratio"] >= goal ? "met" : "MISSED")
}
