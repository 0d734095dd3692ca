package ratelimit

import (
	"context"
	"sync"
	"time"
)

// sweepEvery is how often Memory forgets idle clients: a client whose tat
// has passed is as good as absent.
const sweepEvery = time.Minute

// Memory keeps the counts in this process: exact for it, shared with no
// other. Its clock is the process's monotonic clock, which no wall-clock
// step moves.
type Memory struct {
	mu    sync.Mutex
	tats  map[string]int64
	start time.Time
	swept int64
}

// NewMemory returns a limiter that keeps its counts in this process.
func NewMemory() *Memory {
	return &Memory{tats: map[string]int64{}, start: time.Now()}
}

// Backend is "memory".
func (m *Memory) Backend() string { return "memory" }

// Allow decides one request of client on plan.
func (m *Memory) Allow(_ context.Context, plan APIPlan, client string, cost int64) (Result, error) {
	r, err := ruleOf(plan, cost)
	if err != nil {
		return Result{}, err
	}
	k := key(plan, client)
	m.mu.Lock()
	now := time.Since(m.start).Microseconds()
	m.sweep(now)
	ok, tat := r.decide(m.tats[k], now, cost)
	m.tats[k] = tat
	m.mu.Unlock()
	res := r.result(ok, now, tat, cost)
	res.At = m.start.Add(time.Duration(now) * time.Microsecond)
	return res, nil
}

// sweep drops the clients whose tat has passed, at most once per
// sweepEvery; m.mu is held.
func (m *Memory) sweep(now int64) {
	if now-m.swept < sweepEvery.Microseconds() {
		return
	}
	m.swept = now
	for k, tat := range m.tats {
		if tat <= now {
			delete(m.tats, k)
		}
	}
}
