#!/usr/bin/env bash
# make mutants: the limiter's tests must be able to fail. Each mutation is a
# bug that a limiter could plausibly have; it is applied (sed) to a scratch
# copy of the repository, and the quota tests must then go red. Prints a
# table, mutation -> caught or SURVIVED, and exits non-zero when any
# mutation survives, does not apply, or does not build, or when the
# unmutated copy is not green. Not part of `make test`: it runs the quota
# tests once per mutation (about half a minute each).
#
#   scripts/mutants.sh [NAME...]   only the mutations named
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
run=${MUTANTS_RUN:-'Conformance|Fault|Redis|SQLite'} # MUTANTS_RUN: a narrower -run, for a quick pass
# MUTANTS_SKIP: a -skip pattern for tests that fail without a mutation (a
# bug they document, not yet fixed), so that the others still judge.
skip=${MUTANTS_SKIP:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
repo=$scratch/repo
mkdir -p "$repo"
git ls-files -z | xargs -0 cp --parents -t "$repo"   # the tracked tree, no .git
cp -r "$root/quota/." "$repo/quota/"                 # with uncommitted test files

# name@file@sed script
mutations=(
  "per-ledger-mark-ignored@quota/window.lua@s/  if (a.mark or '') ~= '' and (not mark/  if false and (not mark/"
  "state-older-than-ledgers-dropped@quota/window.lua@s/  if mark and ms_of(mark) > now - a.span and/  if false and/"
  "log-vs-state-check-dropped@quota/window.lua@s/    if p.top ~= want and not/    if false and not/"
  "stale-ledgers-copy-vouches@quota/recovery.go@s/if now-c.At > span {/if false {/"
  "need-names-self-only@quota/recovery.go@s/^\t\t\tneed = append(need, l.Ledger)$/\t\t\t_ = l/"
  "entry-ahead-leaves-early@quota/window.lua@s/      newest = math.max(newest, ms)/      newest = newest/"
  "clock-may-go-back@quota/window.lua@s/  return math.max(now, last), guarded/  return now, guarded/"
  "guard-disabled@quota/window.lua@s/if (a.ref or 0) > 0 and last > 0/if false and last > 0/"
  "no-day-check@quota/window.lua@s/if p.day and p.used_day + p.units > p.cap then/if false then/"
  "free-at-oldest-plus-window@quota/window.lua@s/    t = stamp(hi, now) + p.window/    t = ms_of(redis.call('XRANGE', p.key, fmt(now - p.window + 1), '+', 'COUNT', 1)[1][1]) + p.window/"
  "no-wait-check@quota/window.lua@s/  p.wait = num(st\[p.name .. '.wait'\])/  p.wait = 0/"
  "lost-sets-no-wait@quota/window.lua@s/    redis.call('HSET', S, p.name .. '.wait', fmt(wait), p.name .. '.until', fmt(wait))//"
  "wait-ignores-the-day@quota/window.lua@s/    if day then wait = math.max(wait, day\[2\]) end//"
  "wait-ends-on-any-refill@quota/window.lua@s/    if not list_has(done, l) then return end//"
  "refill-never-marks-done@quota/window.lua@s/  if not list_has(done, a.ledger) then done\[#done + 1\] = a.ledger end//"
  "fence-ignored@quota/window.lua@s/  if redis.call('SISMEMBER', FENCE, fmt(a.token)) == 1 then return {code = 'fenced'} end//"
  "receipt-not-written@quota/window.lua@s/    redis.call('HSET', RCPT, fmt(a.token % 32), fmt(a.token) .. ' ' .. r.id)//"
  "budget-per-process@quota/failopen.go@s/^\t\tcalls = rec.Calls$/\t\t_ = rec/"
  "fail-open-budget-ignored@quota/failopen.go@s/used\[c.pool.Name\]+c.units > b {/false \&\& used[c.pool.Name]+c.units > b {/"
  "unmetered-never-written-back@quota/redis.go@s/^\tif !r.fail.down.Load() {$/\tif true {/"
  "unknown-never-reconciled@quota/redis.go@s/^\tr.reconcile(ctx)$//"
  "replicas-not-waited@quota/redis.go@s/^\tcase r.opts.Replicas > 0:$/\tcase false:/"
  "error-reply-fails-open@quota/redis.go@s/return ingest.Decision{}, fmt.Errorf(\"limiter: answered with an error, so the call is not made: %w\", err)/return r.fail.open(ctx, op, cs, err)/"
  "no-socket-deadlines@quota/redis.go@s/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = false, -1, 1/;s/o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout/o.DialTimeout = timeout/"
  "embedded-clock-may-go-back@quota/embedded.go@s/return max(now, last), wall, seq, err/return now, wall, seq, err/"
  "postgres-hosts-do-not-take-turns@quota/postgres.go@s/pg_advisory_xact_lock(\$1, hashtext(\$2))/pg_advisory_xact_lock(\$1, hashtext(\$2 || random()::text))/"
  "no-embedded-clock-guard@quota/embedded.go@s/if refID == bootHash(boot) \&\& wall-last > g/if refID == bootHash(boot) \&\& false \&\& wall-last > g/"
  # issue 31 (a loss stays a loss): the recovery's bugs a review could miss,
  # and one mutant per promise added with it (quiet period; corruption)
  "receipt-matched-by-slot@quota/window.lua@s/    if t == fmt(tok) then/    if t then/"
  "vouch-cutoff-a-beat-late@quota/recovery.go@s/if l.At > now-span \&\& !slices.Contains(need, l.Ledger)/if l.At > now-span+v.opts.Beat.Milliseconds() \&\& !slices.Contains(need, l.Ledger)/"
  "mark-check-off-by-one@quota/window.lua@s/  if (a.mark or '') ~= '' and (not mark or id_less(mark, a.mark))/  if (a.mark or '') ~= '' and (not mark or ms_of(mark) < ms_of(a.mark))/"
  "heartbeat-trusts-any-mark@quota/recovery.go@s/if l.Ledger == v.opts.Ledger \&\& laterID(l.Mark, mark) == l.Mark {/if l.Ledger == v.opts.Ledger {/"
  "copy-forgets-unlisted@quota/recovery.go@s/^\t\t\tls = append(ls, o)$/\t\t\t_ = o/"
  "cadence-ignores-idle@quota/recovery.go@s/^\treturn every, true$/\treturn every, false/"
  "quiet-takes-last-cadence@quota/window.lua@s/  local every = math.max(num(st.every), cadence)/  local every = cadence/"
  "quiet-period-skipped@quota/window.lua@s/  local quiet = num(st.since) + every/  local quiet = 0/"
  "corrupt-entries-believed@quota/window.lua@s/  if not (whole(f.u, 1) and whole(f.c, f.u)) then/  if false then/"
  "clock-ahead-believed@quota/window.lua@s/  if last - now > a.guard and last - math.max(newest, newest_mark()) > a.guard then/  if false then/"
  "corruption-never-scrubbed@quota/window.lua@s/  local dropped = scrub(state(), pools())/  local dropped = false/"
  "embedded-clock-row-believed@quota/embedded.go@s/^\t\tlast, err = s.believed(ctx, q, now, last)$/\t\t_ = last/"

  # clocks (issue 31, item 4): a call decided while the clock read behind
  # stays a whole window of real time
  "hold-dropped@quota/window.lua@s/  if stamp(e, now) > e then e = hold.from - 1 end//"
  "embedded-hold-dropped@quota/hold.go@s/^\t\te = h.from - 1$/\t\t_ = e/"
  # a decision clock that disagrees with the upstream's Date by more than
  # the guard decides nothing, on a new boot too
  "upstream-skew-ignored@quota/window.lua@s/  if (a.upstream or 0) > 0 and math.abs/  if false and math.abs/"
  "embedded-upstream-skew-ignored@quota/upstream.go@s/if upstream > 0 \&\& (now-upstream/if false \&\& (now-upstream/"
  "new-boot-skips-the-check@quota/upstream.go@s/if s, ok = c.ask(ctx); !ok {/if true {/"

  # issue 31 items 2 and 3: apply cannot erase a loss; one fail-open budget
  "fail-open-ignores-own-grants@quota/failopen.go@s/^\tfor _, c := range f.granted {$/\tfor _, c := range map[string]ingest.Call{} {/"
  "fail-open-check-apart-from-grant@quota/failopen.go@s/^\tif f.opts.Grant != nil {$/\tif false \&\& f.opts.Grant != nil {/"
  "fail-open-grant-unlocked-on-pg@store/failopen.go@s/^\t\tif err := db.d.lockQuotaKey(ctx, tx, quotaKey); err != nil {$/\t\tif err := error(nil); err != nil {/"
  "apply-ignores-the-key-s-past@quota/apply.go@s/^\tcase len(signs) > 0:$/\tcase false:/"
  "restore-writes-no-configuration@quota/recovery.go@s/^\tif err := r.adopt(ctx); err != nil {$/\tif err := error(nil); err != nil {/"
)

# selected NAME [ASKED...]: whether NAME runs (every one when none asked).
selected() {
  [ $# -eq 1 ] && return 0
  local want=$1; shift
  for n in "$@"; do [ "$n" = "$want" ] && return 0; done
  return 1
}

fail=0
printf '%-32s %s\n' mutation result
printf '%-32s %s\n' -------- ------
if [ $# -eq 0 ]; then
  if (cd "$repo" && go test ./quota -run "$run" ${skip:+-skip "$skip"} -count=1 >"$scratch/out" 2>&1); then
    printf '%-32s %s\n' "(none)" "green, as it must be"
  else
    printf '%-32s %s\n' "(none)" "RED WITHOUT A MUTATION: fix the tests first"
    tail -20 "$scratch/out"
    exit 1
  fi
fi
for m in "${mutations[@]}"; do
  IFS='@' read -r name file script <<<"$m"
  selected "$name" "$@" || continue
  cp "$root/$file" "$repo/$file"
  sed -i "$script" "$repo/$file"
  if cmp -s "$root/$file" "$repo/$file"; then
    result="NOT APPLIED (the sed matched nothing: update it)"; fail=1
  elif ! (cd "$repo" && go vet ./quota >"$scratch/out" 2>&1); then
    result="DOES NOT BUILD (fix the sed)"; fail=1
  elif (cd "$repo" && go test ./quota -run "$run" ${skip:+-skip "$skip"} -count=1 -timeout 5m >"$scratch/out" 2>&1); then
    result="SURVIVED"; fail=1
  else
    # every top-level test that failed: one flaky test must not pass for the catch
    by=$(grep -o -- '^--- FAIL: [^ ]*' "$scratch/out" | sed 's/--- FAIL: //' | sort -u | paste -sd, - || true)
    result="caught${by:+ by $by}"
  fi
  cp "$root/$file" "$repo/$file"
  printf '%-32s %s\n' "$name" "$result"
done
exit $fail
