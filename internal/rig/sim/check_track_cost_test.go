package sim

import (
	"strings"
	"testing"
	"time"
)

// trackCostHistory is ten hours of tracking, each pass three calls of a
// unit, a restart at ten hours, and the operator's look five minutes into
// the new life at a plan made a minute into it that plans tracking at
// cost units a pass.
func trackCostHistory(cost float64) *History {
	h := history(nil, nil, 1)
	life := t0.Add(10 * time.Hour)
	h.Starts = append(h.Starts, life)
	var stats int64
	for hr := range 10 {
		for i := range 3 {
			stats++
			h.Calls = append(h.Calls, Call{At: t0.Add(time.Duration(hr)*time.Hour + time.Duration(i)*time.Second), Worker: WorkerDaemon,
				Path: "/youtube/v3/videos:batchGetStats", Status: 200, Charged: map[string]int64{"stats": stats}})
		}
	}
	at, reset := life.Add(time.Minute), t0.Add(20*time.Hour)
	fixed := int64(cost*reset.Sub(at).Hours() + 0.5)
	h.Operator = []OperatorRead{{At: life.Add(5 * time.Minute), Answered: life.Add(5 * time.Minute),
		Plan: &PlanSaid{At: at, Fixed: map[string]int64{"stats": fixed}, Reset: map[string]time.Time{"stats": reset},
			Floor: map[string]time.Duration{trackEntry: time.Hour}}}}
	return h
}

func TestCheckFindsARestartThatForgotTrackingsCost(t *testing.T) {
	if f := checkTrackCostKept(trackCostHistory(3)); len(f) != 0 {
		t.Fatalf("the plan kept tracking's cost: %q", f)
	}
	f := checkTrackCostKept(trackCostHistory(1))
	if len(f) != 1 || !strings.Contains(f[0], "the plan published at 2026-10-25T10:01:00Z, 1m0s into a life of the process, planned tracking at 1.0 units a pass, where each of its 10 passes of the day before cost 3 or more") {
		t.Errorf("the plan forgot tracking's cost: %q", f)
	}
	for name, excuse := range map[string]func(*History){
		"no restart": func(h *History) { h.Starts = h.Starts[:1] },
		"tracking passed before the look": func(h *History) {
			c := h.Calls[len(h.Calls)-1]
			c.At, c.Charged = h.Starts[1].Add(2*time.Minute), map[string]int64{"stats": c.Charged["stats"] + 1}
			h.Calls = append(h.Calls, c)
		},
		"a plan of the life before": func(h *History) { h.Operator[0].Plan.At = h.Starts[1].Add(-time.Minute) },
		"the reset near":            func(h *History) { h.Operator[0].Plan.Reset["stats"] = h.Starts[1].Add(30 * time.Minute) },
		"a wrong Date in the day":   func(h *History) { h.Skews = []Interval{{t0.Add(5 * time.Hour), t0.Add(5*time.Hour + 20*time.Minute)}} },
		"the disk full in the day":  func(h *History) { h.Fulls = []Interval{{t0.Add(3 * time.Hour), t0.Add(3*time.Hour + time.Minute)}} },
		"the process down":          func(h *History) { h.Operator[0].Down = true },
	} {
		h := trackCostHistory(1)
		excuse(h)
		if f := checkTrackCostKept(h); len(f) != 0 {
			t.Errorf("%s: %q", name, f)
		}
	}
}
