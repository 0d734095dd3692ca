package web

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The charts are SVG the templates draw from these shapes: numbers only,
// computed here, so no upstream text ever reaches an SVG attribute.

// Bar is one bar of a bar chart, in its viewBox units.
type Bar struct {
	X, Y, W, H float64
	Value      int64
	Label      string // the bar's tooltip: when and how much
}

// BarChart is a series of bars, such as units an hour.
type BarChart struct {
	Name   string
	Bars   []Bar
	Peak   int64
	Total  int64
	Width  float64
	Height float64
	First  string // label under the first bar
	Last   string // label under the last bar
}

const chartW, chartH = 300.0, 80.0

// bars lays out values as bars, the tallest at full height; label names
// bar i.
func bars(name string, values []int64, label func(i int) string) BarChart {
	c := BarChart{Name: name, Width: chartW, Height: chartH}
	for _, v := range values {
		c.Peak, c.Total = max(c.Peak, v), c.Total+v
	}
	w := chartW / float64(max(1, len(values)))
	for i, v := range values {
		h := 0.0
		if c.Peak > 0 {
			h = chartH * float64(v) / float64(c.Peak)
		}
		c.Bars = append(c.Bars, Bar{X: float64(i) * w, Y: chartH - h, W: w * 0.85, H: h, Value: v,
			Label: fmt.Sprintf("%s: %s units", label(i), num(v))})
	}
	if len(values) > 0 {
		c.First, c.Last = label(0), label(len(values)-1)
	}
	return c
}

// Tick is a mark on an axis: where it is (x or y, in viewBox units) and
// what it says.
type Tick struct {
	Pos    float64
	Label  string
	Anchor string // how a time tick's label sits on it: start, middle or end
	Minor  bool   // a time tick a narrow screen leaves out
}

// Mark is one point of a line, with its hover title.
type Mark struct {
	X, Y  float64
	Title string
}

// Line is one series of a line chart: its polyline's points and marks.
// Class gives it a colour and a dash pattern of its own.
type Line struct {
	Name   string
	Class  string
	Points string
	Marks  []Mark
	Last   string // the last value, as shown beside the name
}

// LineChart is one or more series over a shared time axis, with labelled
// axes and ticks.
type LineChart struct {
	Lines                    []Line
	Width, Height            float64
	Left, Right, Top, Bottom float64 // the plot's edges
	XTicks, YTicks           []Tick
	XLabel, YLabel           string
	Summary                  string // the chart in words, for screen readers
	Inverted                 bool   // rank: 1 at the top
	Empty                    bool
	minT, maxT               time.Time
	lo, hi                   float64 // the y axis's range
}

type series struct {
	name string
	t    []time.Time
	v    []float64
}

// The line charts' viewBox and the room their axes take.
const (
	lineW, lineH           = 800.0, 280.0
	padLeft, padRight      = 96.0, 12.0
	padTop, padBottom      = 14.0, 58.0
	maxMarks               = 150 // hover marks per series, at most
	lineClasses, dashKinds = 8, 4
)

// lineChart lays out series against time. inverted puts the smallest
// value at the top and starts the axis at 1 (a rank); label prints a
// value, yLabel names the y axis.
func lineChart(ss []series, inverted bool, label func(float64) string, yLabel string) LineChart {
	c := LineChart{Width: lineW, Height: lineH, Left: padLeft, Right: lineW - padRight, Top: padTop, Bottom: lineH - padBottom,
		Inverted: inverted, Empty: true, XLabel: "time (UTC)", YLabel: yLabel}
	first := true
	var minV, maxV float64
	for _, s := range ss {
		for i, t := range s.t {
			if first {
				c.minT, c.maxT, minV, maxV, first = t, t, s.v[i], s.v[i], false
			}
			c.minT, c.maxT = minTime(c.minT, t), maxTime(c.maxT, t)
			minV, maxV = min(minV, s.v[i]), max(maxV, s.v[i])
		}
	}
	if first {
		return c
	}
	c.Empty = false
	if !c.maxT.After(c.minT) {
		c.minT, c.maxT = c.minT.Add(-time.Hour), c.maxT.Add(time.Hour)
	}
	c.yAxis(minV, maxV, inverted, label)
	c.xAxis()
	var words []string
	for i, s := range ss {
		if len(s.t) == 0 {
			continue
		}
		l := Line{Name: s.name, Class: fmt.Sprintf("s%d d%d", i%lineClasses, i%dashKinds), Last: label(s.v[len(s.v)-1])}
		var b strings.Builder
		step := max(1, (len(s.t)+maxMarks-1)/maxMarks)
		for k, t := range s.t {
			x, y := c.x(t), c.y(s.v[k])
			fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
			if k%step == 0 || k == len(s.t)-1 {
				l.Marks = append(l.Marks, Mark{X: x, Y: y, Title: fmt.Sprintf("%s: %s at %s", s.name, label(s.v[k]), t.UTC().Format("Jan 2 15:04 UTC"))})
			}
		}
		l.Points = strings.TrimSpace(b.String())
		c.Lines = append(c.Lines, l)
		words = append(words, fmt.Sprintf("%s from %s to %s", s.name, label(s.v[0]), l.Last))
	}
	c.Summary = fmt.Sprintf("%s from %s to %s: %s", yLabel, c.minT.UTC().Format("Jan 2 15:04"), c.maxT.UTC().Format("Jan 2 15:04 UTC"),
		strings.Join(words, "; "))
	return c
}

// yAxis picks a range that starts and ends on ticks a step apart (1, 2 or
// 5 times a power of ten); a rank's axis starts at #1.
func (c *LineChart) yAxis(minV, maxV float64, inverted bool, label func(float64) string) {
	if inverted {
		minV = 1
		maxV = max(maxV, 2)
	} else if maxV == minV {
		minV, maxV = max(0, minV-max(1, minV/10)), maxV+max(1, maxV/10)
	}
	step := niceStep(maxV-minV, 4)
	c.lo, c.hi = math.Floor(minV/step)*step, math.Ceil(maxV/step)*step
	if inverted {
		c.lo = 1
	}
	if !inverted {
		short := true
		for v := c.lo; v <= c.hi+step/1e6; v += step {
			t := Tick{Pos: c.y(v), Label: label(v)}
			if n := len(c.YTicks); n > 0 && c.YTicks[n-1].Label == t.Label {
				short = false
			}
			c.YTicks = append(c.YTicks, t)
		}
		if !short { // steps finer than the short labels tell apart: whole numbers
			for i, v := 0, c.lo; i < len(c.YTicks); i, v = i+1, v+step {
				c.YTicks[i].Label = num(int64(math.Round(v)))
			}
		}
		return
	}
	c.YTicks = append(c.YTicks, Tick{Pos: c.y(1), Label: label(1)})
	for v := step; v <= c.hi+step/1e6; v += step {
		if v-1 >= step/2 { // 1, then the round steps not crowding it
			c.YTicks = append(c.YTicks, Tick{Pos: c.y(v), Label: label(v)})
		}
	}
}

// niceStep is the round step that cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return max(1, m*mag)
		}
	}
	return max(1, 10*mag)
}

// xAxis puts up to five ticks evenly over the time range, labelled as
// finely as their spacing needs, and drops a tick whose label would repeat
// the one before it (runs seconds apart, days an hour apart): an axis that
// names one time five times says nothing. Ticks 1 and 3 are minor, left
// out where five labels do not fit (a phone).
func (c *LineChart) xAxis() {
	span := c.maxT.Sub(c.minT)
	layout := tickLayout(span / 4)
	for i := range 5 {
		t := c.minT.Add(span * time.Duration(i) / 4)
		label := t.UTC().Format(layout)
		if n := len(c.XTicks); n > 0 && c.XTicks[n-1].Label == label {
			continue
		}
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, Tick{Pos: c.x(t), Label: label, Anchor: anchor, Minor: i%2 == 1})
	}
}

// tickLayout is the coarsest time format that tells ticks step apart.
func tickLayout(step time.Duration) string {
	switch {
	case step >= 24*time.Hour:
		return "Jan 2"
	case step >= time.Minute:
		return "Jan 2 15:04"
	}
	return "15:04:05"
}

func (c LineChart) x(t time.Time) float64 {
	return c.Left + (c.Right-c.Left)*t.Sub(c.minT).Seconds()/c.maxT.Sub(c.minT).Seconds()
}

func (c LineChart) y(v float64) float64 {
	f := (v - c.lo) / (c.hi - c.lo)
	if c.Inverted {
		return c.Top + (c.Bottom-c.Top)*f
	}
	return c.Bottom - (c.Bottom-c.Top)*f
}

// sparkline draws values evenly spaced in a small box.
func sparkline(values []int64) string {
	if len(values) < 2 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for i, v := range values {
		x := 60 * float64(i) / float64(len(values)-1)
		y := 9.0
		if hi > lo {
			y = 17 - 16*float64(v-lo)/float64(hi-lo)
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
	}
	return strings.TrimSpace(b.String())
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// num prints 1234567 as 1,234,567.
func num(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// compact prints 1234567 as 1.2M and 5000 as 5K.
func compact(v float64) string {
	unit := ""
	switch {
	case v >= 1e9:
		v, unit = v/1e9, "B"
	case v >= 1e6:
		v, unit = v/1e6, "M"
	case v >= 1e3:
		v, unit = v/1e3, "K"
	default:
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") + unit
}
