package ledger

// What pacing keeps beside the ledger it plans from: the schedule a
// daemon runs, and the plan it follows.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Schedule is the schedule a daemon or a cron run on this database
// follows.
type Schedule struct {
	Every   time.Duration
	Regions []string
	// Timetable is the whole schedule as the run recorded it (jobs'
	// Timetable, as JSON); empty in a record of an earlier version, which
	// holds only Every and Regions.
	Timetable []byte
	// Plan is the day's plan the run printed at start (report's plan
	// lines, as JSON), Costs the costs it runs with (costs.yaml's
	// canonical form); each empty in a record of an earlier version.
	Plan, Costs []byte
	Updated     time.Time
}

// SaveSchedule records the schedule a daemon or a cron run follows, for
// every view of the plan: its period, its charts (a region, or
// region/category) in the order their passes are staggered, and the whole
// timetable they are made of. Databases of earlier versions hold regions
// only, which read the same way.
func (l *Ledger) SaveSchedule(ctx context.Context, s Schedule) error {
	_, err := l.w.ExecContext(ctx, `INSERT INTO schedule (id, every_ms, regions, timetable, plan, costs, updated_ms) VALUES (1, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET every_ms = excluded.every_ms, regions = excluded.regions,
		timetable = excluded.timetable, plan = excluded.plan, costs = excluded.costs, updated_ms = excluded.updated_ms`,
		s.Every.Milliseconds(), strings.Join(s.Regions, ","), string(s.Timetable), string(s.Plan), string(s.Costs), msOf(s.Updated))
	if err != nil {
		return fmt.Errorf("save schedule: %w", err)
	}
	return nil
}

// Schedule returns the recorded schedule; ok is false when no daemon has
// recorded one.
func (l *Ledger) Schedule(ctx context.Context) (s Schedule, ok bool, err error) {
	var every, updated int64
	var regions, timetable, plan, costs string
	err = l.r.QueryRowContext(ctx, `SELECT every_ms, regions, timetable, plan, costs, updated_ms FROM schedule WHERE id = 1`).
		Scan(&every, &regions, &timetable, &plan, &costs, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("schedule: %w", err)
	}
	s.Every, s.Updated = time.Duration(every)*time.Millisecond, time.UnixMilli(updated).UTC()
	if regions != "" {
		s.Regions = strings.Split(regions, ",")
	}
	if timetable != "" {
		s.Timetable = []byte(timetable)
	}
	if plan != "" {
		s.Plan = []byte(plan)
	}
	if costs != "" {
		s.Costs = []byte(costs)
	}
	return s, true, nil
}

// SavePlan records the plan the pacing daemon follows for quotaKey (pace's
// JSON), made at at, in place of the one before.
func (l *Ledger) SavePlan(ctx context.Context, quotaKey string, at time.Time, plan []byte) error {
	_, err := l.w.ExecContext(ctx, `INSERT INTO pace_plans (quota_key, written_ms, plan) VALUES (?, ?, ?)
		ON CONFLICT (quota_key) DO UPDATE SET written_ms = excluded.written_ms, plan = excluded.plan`,
		quotaKey, msOf(at), string(plan))
	if err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	return nil
}

// Plan returns the plan a pacing daemon last recorded for quotaKey and
// when it was made; ok is false when none has.
func (l *Ledger) Plan(ctx context.Context, quotaKey string) (plan []byte, at time.Time, ok bool, err error) {
	var text string
	var ms int64
	err = l.r.QueryRowContext(ctx, `SELECT plan, written_ms FROM pace_plans WHERE quota_key = ?`, quotaKey).Scan(&text, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("plan: %w", err)
	}
	return []byte(text), time.UnixMilli(ms).UTC(), true, nil
}
