#!/usr/bin/env bash
# make mutants: the limiter's tests must be able to fail. Each mutant is a
# bug that a limiter could plausibly have, applied (sed) to a scratch copy
# of the repository; the tests of the promise it breaks (its -run pattern,
# kept on its line) must then go red. Mutants run MUTANTS_JOBS at a time
# (default 2), each in a scratch copy of its own. Prints a table (mutant,
# the tests that caught it, seconds) and exits non-zero when any mutant
# survives, does not apply or does not build, or when the tests of the
# patterns are not green without a mutant. Not part of `make test`.
#
#   scripts/mutants.sh [NAME...]   only the mutants named
#
# Adding a mutant is one line below: name@file@-run pattern@sed script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${MUTANTS_JOBS:-2}
# MUTANTS_SKIP: a -skip pattern for tests that fail without a mutant (a bug
# they document, not yet fixed), so that the others still judge.
skip=${MUTANTS_SKIP:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The tests of a promise, shared by the mutants that break it.
loss='Redis(RecallsAfterLosingData|FlushallRestore|Persistence)|Fault(CronFlushall|Rollback|KeyLost|StateAndLogGoBack|LostCallSameMillisecond|LogLostCopyBeforeB|HeartbeatFindsRollback|HeartbeatDuringSpends|RepeatedOutages|StaleLedgersCopy|CopyKeepsUnlistedLedger|VouchNearTheSpanEdge|ApplyAfterLoss|ApplyOnAKeyPartlyLost|CorruptKeys)'
quiet='FaultUnlistedLedger|FaultCopyKeepsUnlistedLedger|FaultHeartbeat|FaultCronFlushall'
clock='RedisConformance|RedisBlockFromTheLimitersClock|Fault(ClockBack|ClockStep|ClockBehindThenCorrected|UpstreamClock)Redis|FaultStateAndLogGoBack'
window='RedisConformance|RedisClusterConformance|FaultMixedWindowsRedis'
unknown='RedisFenceRefusesALateRequest|RedisReceiptWrittenOverNamesNoCall|FaultUnknown'
outage='RedisDown|FaultRepeatedOutages|FaultFirstCallAfterOutage|FaultFailOpen|FaultOOM|RedisScriptError|FaultReadiness'
required='RequiredArgumentsRefused|RequiredTablesRefused'
embedded='SQLiteConformance|PostgresConformance|Fault(ClockBack|ClockStep|ClockBehindThenCorrected)(SQLite|Postgres)'

# name@file@-run pattern@sed script
mutants=(
  # a loss is found (promise 9)
  "per-ledger-mark-ignored@quota/window.lua@$loss@s/  if (a.mark or '') ~= '' and (not mark/  if false and (not mark/"
  "state-older-than-ledgers-dropped@quota/window.lua@$loss@s/  if mark and ms_of(mark) > now - a.span and/  if false and/"
  "log-vs-state-check-dropped@quota/window.lua@$loss@s/    if p.top ~= want and not/    if false and not/"
  "trimmed-head-ignored@quota/window.lua@FaultTrimmedHead|$loss@s/    if first and ms_of(first) > horizon(p, now) then/    if false then/"
  "rebuild-forgets-a-lost-head@quota/window.lua@FaultTrimmedHead@s/  if lost then redis.call('HSET', S, p.name .. '.base', kept) end//"
  "unmetered-write-back-settles@quota/redis.go@FaultTrimmedHead|$loss@s/_, err = r.refill(ctx, \"\", rec)/_, err = r.refill(ctx, r.opts.ID, rec)/"
  "stale-ledgers-copy-vouches@quota/recovery.go@$loss@s/if now-c.At > span {/if false {/"
  "need-names-self-only@quota/recovery.go@$loss|$quiet@s/^\t\t\tneed = append(need, l.Ledger)$/\t\t\t_ = l/"
  # one clock (promise 4)
  "entry-ahead-leaves-early@quota/window.lua@FaultLedgerRowAhead|$clock@s/      newest = math.max(newest, ms)/      newest = newest/"
  "clock-may-go-back@quota/window.lua@$clock@s/  return math.max(now, last), guarded/  return now, guarded/"
  "guard-disabled@quota/window.lua@$clock@s/if (a.ref or 0) > 0 and last > 0/if false and last > 0/"
  # the window and the day (promises 1 to 3)
  "no-day-check@quota/window.lua@$window@s/if p.day and p.used_day + p.units > p.cap then/if false then/"
  "horizon-forgets-the-day@quota/window.lua@$window@s/  return day and math.min(edge(p, now), day\[1\] - 1) or edge(p, now)/  return edge(p, now)/"
  "free-at-oldest-plus-window@quota/window.lua@$window@s/    t = stamp(hi, now) + p.window/    t = ms_of(redis.call('XRANGE', p.key, fmt(now - p.window + 1), '+', 'COUNT', 1)[1][1]) + p.window/"
  # the recovery waits
  "no-wait-check@quota/window.lua@$loss@s/  p.block, p.wait = after(st\[p.name .. '.block'\], now), after(st\[p.name .. '.wait'\], now)/  p.block, p.wait = after(st[p.name .. '.block'], now), 0/"
  "lost-sets-no-wait@quota/window.lua@$loss@s/    redis.call('HSET', S, p.name .. '.wait', fmt(wait), p.name .. '.until', fmt(wait))//"
  "wait-ignores-the-day@quota/window.lua@$loss@s/    if day then wait = math.max(wait, day\[2\]) end//"
  "wait-ends-on-any-refill@quota/window.lua@$loss|$quiet@s/  for _, l in ipairs(need) do if not list_has(done, l) then return end end//"
  "refill-never-marks-done@quota/window.lua@$loss|$quiet@s/  if not list_has(done, a.ledger) then done\[#done + 1\] = a.ledger end//"
  # decisions of unknown outcome
  "fence-ignored@quota/window.lua@$unknown@s/  if redis.call('SISMEMBER', FENCE, fmt(a.token)) == 1 then return {code = 'fenced'} end//"
  "receipt-not-written@quota/window.lua@$unknown@s/    redis.call('HSET', RCPT, fmt(a.token % 32), fmt(a.token) .. ' ' .. r.id)//"
  # outages (promise 5)
  "budget-per-process@quota/failopen.go@$outage@s/^\t\tused = f.count(calls, now)$/\t\tused = f.count(nil, now)/"
  "fail-open-budget-ignored@quota/failopen.go@$outage@s/used\[c.pool.Name\]+c.units > b {/false \&\& used[c.pool.Name]+c.units > b {/"
  "unmetered-never-written-back@quota/redis.go@$outage@s/^\tif !r.fail.down.Load() {$/\tif true {/"
  "unknown-never-reconciled@quota/redis.go@$unknown@s/^\tr.reconcile(ctx)$//"
  "replicas-not-waited@quota/redis.go@FaultReplica@s/^\tcase r.opts.Replicas > 0:$/\tcase false:/"
  "error-reply-fails-open@quota/redis.go@$outage@s/return ingest.Decision{}, fmt.Errorf(\"limiter: answered with an error, so the call is not made: %w\", err)/return r.fail.open(ctx, by, op, cs, err)/"
  "no-socket-deadlines@quota/client.go@$outage|FaultUnknownSlowServer@s/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = false, -1, 1/;s/o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout/o.DialTimeout = timeout/"
  # the embedded limiter
  "embedded-clock-may-go-back@quota/clock.go@$embedded@s/return max(now, last), wall, seq, err/return now, wall, seq, err/"
  "postgres-hosts-do-not-take-turns@ledger/turns.go@PostgresManyProcessesOneKey|PostgresConformance@s/pg_advisory_xact_lock(?1, hashtext(?2))/pg_advisory_xact_lock(?1, hashtext(?2 || random()::text))/"
  "no-embedded-clock-guard@quota/clock.go@$embedded@s/if refID == bootHash(boot) \&\& wall-last > g/if refID == bootHash(boot) \&\& false \&\& wall-last > g/"
  # a loss stays a loss: the recovery's bugs a review could miss, the
  # quiet period, corruption
  "receipt-matched-by-slot@quota/fence.lua@$unknown@s/  ids\[i\] = (by == t and id)/  ids[i] = (by and id)/"
  "vouch-cutoff-a-beat-late@quota/recovery.go@$loss@s/if l.At > now-span \&\& !slices.Contains(need, l.Ledger)/if l.At > now-span+v.opts.Beat.Milliseconds() \&\& !slices.Contains(need, l.Ledger)/"
  "mark-check-off-by-one@quota/window.lua@$loss@s/  if (a.mark or '') ~= '' and (not mark or id_less(mark, a.mark))/  if (a.mark or '') ~= '' and (not mark or ms_of(mark) < ms_of(a.mark))/"
  "heartbeat-trusts-any-mark@quota/recovery.go@$loss@s/if l.Ledger == v.opts.ID \&\& laterID(l.Mark, mark) == l.Mark {/if l.Ledger == v.opts.ID {/"
  "copy-forgets-unlisted@quota/recovery.go@$loss|$quiet@s/^\t\t\tls = append(ls, o)$/\t\t\t_ = o/"
  "cadence-ignores-idle@quota/recovery.go@$quiet@s/^\treturn every, true$/\treturn every, false/"
  "cron-run-beats-its-cadence@quota/recovery.go@$quiet@s/if v.looked.Load() {/if v.beating.Load() {/"
  "quiet-takes-last-cadence@quota/window.lua@$quiet@s/  local every = math.max(num(st.every), cadence)/  local every = cadence/"
  "quiet-period-skipped@quota/window.lua@$quiet@s/  local quiet = num(st.since) + every/  local quiet = 0/"
  "corrupt-entries-believed@quota/window.lua@FaultCorruptKeys|$loss@s/  if not (whole(f.u, 1) and whole(f.c, f.u)) then/  if false then/"
  "clock-ahead-believed@quota/window.lua@FaultCorruptKeys|$clock@s/    if last - math.max(newest, marks) > a.guard then/    if false then/"
  "corruption-never-scrubbed@quota/window.lua@FaultCorruptKeys@s/  local dropped = scrub(state())/  local dropped = false/"
  "embedded-clock-row-believed@quota/clock.go@FaultClockRowAhead|FaultLedgerRowAhead@s/^\t\tlast, err = s.believed(ctx, tx, now, last)$/\t\t_ = last/"
  # a call decided while the clock read behind stays a whole window of
  # real time
  "hold-dropped@quota/window.lua@FaultClockBehind(ThenCorrected|RealTime)Redis@s/  return stamp(e, now) > e and hold.from - 1 or e/  return e/"
  "embedded-hold-dropped@quota/clock.go@FaultClockBehind(ThenCorrected|RealTime)(SQLite|Postgres)@s/^\t\te = h.from - 1$/\t\t_ = e/"
  # a decision clock that disagrees with the upstream's Date by more than
  # the guard decides nothing, on a new boot too
  "upstream-skew-ignored@quota/window.lua@UpstreamClock@s/  if (a.upstream or 0) > 0 and math.abs/  if false and math.abs/"
  "embedded-upstream-skew-ignored@quota/upstream.go@UpstreamClock@s/if upstream > 0 \&\& (now-upstream/if false \&\& (now-upstream/"
  "new-boot-skips-the-check@quota/upstream.go@UpstreamClock@s/if s, ok = c.ask(ctx); !ok {/if true {/"
  # apply cannot erase a loss; one fail-open budget
  "fail-open-ignores-own-grants@quota/failopen.go@FaultFailOpen@s/c.At.After(now.Add(-p.Window))/c.At.Before(now.Add(-time.Minute)) \&\& c.At.After(now.Add(-p.Window))/"
  "fail-open-check-apart-from-grant@ledger/failopen.go@FaultFailOpen@s/^\terr := l.tx(ctx, func(tx \*sql.Tx) error {$/\tseen0, err0 := calls(ctx, l.r, quotaKey, since)\n\terr := l.tx(ctx, func(tx *sql.Tx) error {/;s/seen, err := calls(ctx, tx, quotaKey, since)/seen, err := seen0, err0/"
  "fail-open-grant-unlocked-on-pg@ledger/turns.go@FaultFailOpen@s/pg_advisory_xact_lock(?, hashtext(?))/pg_advisory_xact_lock(?, hashtext(? || random()::text))/"
  "apply-ignores-the-key-s-past@quota/operator.go@FaultApply@s/^\tcase len(signs) > 0:$/\tcase false:/"
  "restore-writes-no-configuration@quota/seed.go@RedisFlushallRestore|FaultApply@s/^\tif err := r.adopt(ctx); err != nil {$/\tif err := error(nil); err != nil {/"
  # what safety needs is required: a constructor that takes a nil or
  # empty argument in its place, or a limiter that keeps no record of what
  # it admits, is caught by tests that build limiters as a library user does
  "ledger-id-optional@quota/ledger.go@$required@s/{\"ID\", l.ID != \"\"}/{\"ID\", true}/"
  "ledger-where-optional@quota/ledger.go@$required@s/{\"Where\", l.Where != \"\"}/{\"Where\", true}/"
  "ledger-record-optional@quota/ledger.go@$required@s/{\"Record\", l.Record != nil}/{\"Record\", true}/"
  "ledger-recall-optional@quota/ledger.go@$required@s/{\"Recall\", l.Recall != nil}/{\"Recall\", true}/"
  "ledger-grant-optional@quota/ledger.go@$required@s/{\"Grant\", l.Grant != nil}/{\"Grant\", true}/"
  "ledger-notes-optional@quota/ledger.go@$required@s/{\"Notes\", l.Notes != nil}/{\"Notes\", true}/"
  "ledger-unknowns-optional@quota/ledger.go@$required@s/{\"Unknowns\", l.Unknowns != nil}/{\"Unknowns\", true}/"
  "tables-turns-optional@quota/tables.go@$required@s/{\"Turns\", t.Turns != nil}/{\"Turns\", true}/"
  "tables-clocks-optional@quota/tables.go@$required@s/{\"Clocks\", t.Clocks != nil}/{\"Clocks\", true}/"
  "tables-log-optional@quota/tables.go@$required@s/{\"Log\", t.Log != nil}/{\"Log\", true}/"
  "tables-pools-optional@quota/tables.go@$required@s/{\"Pools\", t.Pools != nil}/{\"Pools\", true}/"
  "tables-leases-optional@quota/tables.go@$required@s/{\"Leases\", t.Leases != nil}/{\"Leases\", true}/"
  "upstream-clock-optional@quota/limiter.go@$required@s/^\tif up == nil {$/\tif false {/"
  "quota-key-optional@quota/limiter.go@$required@s/if quotaKey == \"\" || strings.ContainsAny/if strings.ContainsAny/"
  "costs-optional@quota/limiter.go@$required@s/if costs == nil || len(costs.Pools) == 0 {/if false {/"
  "redis-client-optional@quota/redis.go@$required@s/^\tif client == nil {$/\tif false {/"
  "limiter-records-no-call@quota/ledger.go@$required@s/s.Record.RecordCall(context.WithoutCancel(ctx), d.Call(s.QuotaKey, by))/func(context.Context, ingest.Call) error { return nil }(ctx, d.Call(s.QuotaKey, by))/"
)

# selected NAME [ASKED...]: whether NAME runs (every one when none asked).
selected() {
  [ $# -eq 1 ] && return 0
  local want=$1; shift
  for n in "$@"; do [ "$n" = "$want" ] && return 0; done
  return 1
}

# copy DIR: a scratch copy of the tracked tree (no .git), with uncommitted
# test files.
copy() {
  mkdir -p "$1"
  git ls-files -z | xargs -0 cp --parents -t "$1"
  cp -r "$root/quota/." "$1/quota/"
}

# judge DIR I NAME FILE RUN SCRIPT: applies mutant I in DIR, runs its tests
# and writes "NAME|result|seconds" to $scratch/result.I.
judge() {
  local dir=$1 i=$2 name=$3 file=$4 run=$5 script=$6 start result by
  start=$(date +%s)
  if [ ! -f "$dir/$file" ]; then
    echo "$name|NOT APPLIED (no file $file: update it)|0" >"$scratch/result.$i"
    return
  fi
  cp "$dir/$file" "$scratch/orig.$i"
  sed -i "$script" "$dir/$file"
  if cmp -s "$scratch/orig.$i" "$dir/$file"; then
    result="NOT APPLIED (the sed matched nothing: update it)"
  elif (cd "$dir" && go test ./quota -run "$run" ${skip:+-skip "$skip"} -count=1 -timeout 5m >"$scratch/out.$i" 2>&1); then
    result="SURVIVED"
  elif grep -q -- '\[build failed\]\|\[setup failed\]' "$scratch/out.$i"; then
    result="DOES NOT BUILD (fix the sed)"
  else
    # every top-level test that failed: one flaky test must not pass for the catch
    by=$(grep -o -- '^--- FAIL: [^ ]*' "$scratch/out.$i" | sed 's/--- FAIL: //' | sort -u | paste -sd, - || true)
    result="caught by ${by:-(no test named: see the output)}"
  fi
  cp "$scratch/orig.$i" "$dir/$file"
  echo "$name|$result|$(($(date +%s) - start))" >"$scratch/result.$i"
}

t0=$(date +%s)
picked=()
for i in "${!mutants[@]}"; do
  IFS='@' read -r name _ <<<"${mutants[$i]}"
  selected "$name" "$@" && picked+=("$i")
done
for w in $(seq 1 "$jobs"); do copy "$scratch/repo$w"; done

# Without a mutant, the tests of every picked pattern are green.
all=$(for i in "${picked[@]}"; do IFS='@' read -r _ _ run _ <<<"${mutants[$i]}"; echo "$run"; done | sort -u | paste -sd'|' -)
if ! (cd "$scratch/repo1" && go test ./quota -run "$all" ${skip:+-skip "$skip"} -count=1 -timeout 10m >"$scratch/out" 2>&1); then
  echo "RED WITHOUT A MUTANT: fix the tests first"
  tail -20 "$scratch/out"
  exit 1
fi
echo "without a mutant: green ($(($(date +%s) - t0)) s)"

# Worker w takes every jobs-th mutant, in its own copy.
for w in $(seq 1 "$jobs"); do
  (
    k=0
    for i in "${picked[@]}"; do
      k=$((k + 1))
      [ $(((k - 1) % jobs + 1)) -eq "$w" ] || continue
      IFS='@' read -r name file run script <<<"${mutants[$i]}"
      judge "$scratch/repo$w" "$i" "$name" "$file" "$run" "$script"
    done
  ) &
done
wait

fail=0
printf '%-34s %5s  %s\n' mutant s result
for i in "${picked[@]}"; do
  IFS='|' read -r name result secs <"$scratch/result.$i"
  case $result in "caught by"*) ;; *) fail=1 ;; esac
  printf '%-34s %5s  %s\n' "$name" "$secs" "$result"
done
echo "${#picked[@]} mutants, $jobs at a time, in $(($(date +%s) - t0)) s"
exit $fail
