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
run='Conformance|Fault|Redis|SQLite'
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
repo=$scratch/repo
mkdir -p "$repo"
git ls-files -z | xargs -0 cp --parents -t "$repo"   # the tracked tree, no .git
cp -r "$root/quota/." "$repo/quota/"                 # with uncommitted test files

# name@file@sed script
mutations=(
  "log-expiry-set-once@quota/window.lua@s/(now - t.touched >= margin \/ 2 or p.newlog)/(p.newlog)/"
  "first-pool-window-for-all@quota/window.lua@s/window = c.window, days = /window = pool_conf(specs[1].conf).window, days = /"
  "memo-ignores-the-value@quota/window.lua@s/memo.state\[v\]/memo.state[KEYS[1]]/;s/remember('state', v, st)/remember('state', KEYS[1], st)/g"
  "free-at-oldest-plus-window@quota/window.lua@s/if sum >= target then/if true then/"
  "no-day-check@quota/window.lua@s/local day_full = p.day > 0 and p.used_day + p.units > p.capacity/local day_full = false/"
  "no-wait-check@quota/window.lua@s/if p.blocked > 0 or p.waiting > 0 or day_full/if p.blocked > 0 or day_full/"
  "no-seq-went-back-check@quota/window.lua@s/if seq < known_seq then return {-3, seq} end//"
  "no-account-without-log-check@quota/window.lua@s/if not p.had and redis.call('EXISTS', p.log) == 1 then lost = true end//"
  "settings-only-account-founded@quota/window.lua@s/local fresh = (a0 == nil or a0.touched == 0) and/local fresh = (a0 == nil) and/"
  "no-clock-guard@quota/window.lua@s/if last > 0 and now - last > guard and/if false and now - last > guard and/"
  "clock-may-go-back@quota/window.lua@s/return math.max(now, last), 0/return now, 0/"
  "wait-ends-on-any-refill@quota/window.lua@s/if redis.call('HEXISTS', KEYS\[3\], 'done:' .. w) == 0 then return end/if redis.call('HEXISTS', KEYS[3], 'done:' .. w) == 0 then break end/"
  "wait-ignores-the-day@quota/window.lua@s/local until_ms = math.max(now + window, de)/local until_ms = now + window/"
  "late-request-not-fenced@quota/window.lua@s/if fenced(vals\[2\], token) then return {-5, seq} end//"
  "no-receipt-written@quota/window.lua@s/  if id then receipt(ring, .*//"
  "refusal-kept-past-its-bound@quota/window.lua@s/ and now >= r.from and now < r.upto then/ and now >= r.from then/"
  "refusal-bound-ignores-the-log@quota/window.lua@s/if #first > 0 then upto = ms_of(first\[1\]\[1\]) + p.window end//"
  "refusal-kept-across-states@quota/window.lua@s/local r = memo.refused\[vals\[1\]\]/local r = memo.refused[KEYS[1]]/;s/remember('refused', v, {/remember('refused', KEYS[1], {/"
  "upgrade-not-migrated@quota/redis.go@s/if epoch, err = r.migrate(ctx); err == nil/if false \&\& err == nil/"
  "idle-log-expiry-taken-for-a-loss@quota/window.lua@s/  return t.head > 0 and now - t.touched >= math.max(p.window, DAY25) + margin and redis.call('EXISTS', p.log) == 0/  return false/"
  "wait-lost-with-the-state@quota/window.lua@s/  if u > d.last then d.wait = math.max(d.wait, u) end//"
  "migrate-skipped-after-apply@quota/window.lua@/^local function migrate()/,/^end/s/  if st and st.epoch ~= '' then return st.epoch end/  if st then return st.epoch end/"
  "migrate-drops-the-block@quota/window.lua@s/      a.block = math.max(a.block, tonumber(v\[2\] or '0'))//"
  "ring-at-last-slot-never-expires@quota/window.lua@s/  if n < RING \* RW or (slot == RING - 1 and redis.call('PTTL', ring) == -1) then/  if n < RING * RW then/"
  "rebuild-touched-behind-its-entries@quota/window.lua@s/    a.head, a.touched = entries\[1\].ms, math.max(now, newest)/    a.head, a.touched = entries[1].ms, now/"
  "migrate-revives-an-ended-wait@quota/window.lua@s/  local recovering = redis.call('EXISTS', KEYS\[3\]) == 1/  local recovering = true/"
  "migrate-wait-not-on-record@quota/window.lua@s/    redis.call('HSET', KEYS\[3\], 'until', fmt(d.wait))//"
  "hot-past-a-renewal@quota/window.lua@s/  local upto = t.touched + margin \/ 2/  local upto = math.huge/"
  "hot-past-the-days-end@quota/window.lua@/^local function hot_record/,/^end/s/  if p.day > 0 then upto = math.min(upto, p.de) end//"
  "hot-past-an-entry-leaving@quota/window.lua@s/  if now >= fw + c.window then return end//"
  "hot-skips-registration@quota/window.lua@s/ or ARGV\[4\] ~= '' or c.log/ or c.log/"
  "hot-room-for-this-call-only@quota/window.lua@s/if cum - c.wbase + units > c.capacity or/if cum - c.wbase > c.capacity or/"
  "hot-ignores-the-day@quota/window.lua@s/ or (c.day > 0 and cum - c.dbase + units > c.capacity) then return end/ then return end/"
  "hot-on-another-pools-record@quota/window.lua@s/ or c.log ~= KEYS\[2\] or / or /"
  "hot-ignores-the-settings@quota/window.lua@s/ or c.conf ~= q.conf then return end/ then return end/"
  "hot-wh-left-behind@quota/window.lua@s/  local wh = math.max(h.wh, now - c.window)/  local wh = h.wh/"
  "hot-record-kept-by-key-name@quota/window.lua@s/memo.hot\[vals\[1\]\]/memo.hot[KEYS[1]]/;s/remember('hot', v, {/remember('hot', KEYS[1], {/;s/memo.hot\[old\] = nil/memo.hot[KEYS[1]] = nil/;s/memo.hot\[v\] = h/memo.hot[KEYS[1]] = h/"
  "hot-record-left-on-the-old-state@quota/window.lua@s/  memo.hot\[old\] = nil//"
  "refusal-memo-ignores-the-profile@quota/window.lua@s/ and r.prof == ARGV\[2\] and now/ and now/"
  "profile-kept-across-generations@quota/redis.go@s/same := p != nil \&\& p.epoch == epoch/same := p != nil/"
  "profile-kept-across-days@quota/redis.go@s/same = p.days\[i\] == r.days.day(sc.cs\[i\].pool, now)/same = true/"
  "unknown-never-reconciled@quota/redis.go@s/^\tr.reconcile(ctx)\$//"
  "function-not-reloaded@quota/function.go@s/return errors.As(err, \&rerr) \&\& strings.Contains/return false \&\& errors.As(err, \&rerr) \&\& strings.Contains/"
  "fail-open-budget-ignored@quota/failopen.go@s/case f.spent\[c.pool.Name\]+c.units > fo.Budget:/case false:/"
  "error-reply-fails-open@quota/redis.go@s/return ingest.Decision{}, fmt.Errorf(\"limiter: answered with an error, so the call is not made: %w\", err)/return r.fail.open(op, sc.cs, err)/"
  "timeout-after-send-fails-open@quota/redis.go@s/return errors.Is(err, syscall.ECONNREFUSED) ||/return true || errors.Is(err, syscall.ECONNREFUSED) ||/"
  "no-socket-deadlines@quota/redis.go@s/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = true, -1, 1/o.ContextTimeoutEnabled, o.MaxRetries, o.DialerRetries = false, -1, 1/;s/o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout/o.DialTimeout = timeout/"
  "vouch-for-self-only@quota/redis.go@s/if ms >= cutoff && w != r.opts.Worker {/if false \&\& ms >= cutoff \&\& w != r.opts.Worker {/"
  "stale-register-copy-vouches@quota/redis.go@s/if r.k.copyAt.IsZero() || now.Sub(r.k.copyAt) > r.opts.Fresh {/if r.k.copyAt.IsZero() {/"
  "heartbeat-ignores-counter@quota/redis.go@s/if epoch != mine || seq < known || mine == \"\" {/if epoch != mine || false \&\& seq < known || mine == \"\" {/"
  "malformed-ledger-rows-kept@quota/ids.go@s/if _, _, err := logID(c.ID); err != nil {/if _, _, err := logID(c.ID); err != nil \&\& false {/"
  "embedded-clock-may-go-back@quota/sqlite.go@s/return max(now, last), seq, err/return now, seq, err/"
  "no-embedded-clock-guard@quota/sqlite.go@s/if refID == bootHash(boot) \&\& wall-last > g/if refID == bootHash(boot) \&\& false \&\& wall-last > g/"
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
  if (cd "$repo" && go test ./quota -run "$run" -count=1 >"$scratch/out" 2>&1); then
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
  elif (cd "$repo" && go test ./quota -run "$run" -count=1 -timeout 5m >"$scratch/out" 2>&1); then
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
