package web

import (
	"fmt"
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

// Line is one series of a line chart: its polyline's points.
type Line struct {
	Name   string
	Class  string
	Points string
	Last   string // the last value, as shown beside the name
}

// LineChart is one or more series over a shared time axis.
type LineChart struct {
	Lines         []Line
	Width, Height float64
	From, To      string
	Top, Bottom   string // the y axis's ends
	Inverted      bool   // rank: 1 at the top
	Empty         bool
	minT, maxT    time.Time
	minV, maxV    float64
}

type series struct {
	name string
	t    []time.Time
	v    []float64
}

// lineChart lays out series against time; inverted puts the smallest
// value at the top (a rank).
func lineChart(ss []series, inverted bool, label func(float64) string) LineChart {
	c := LineChart{Width: chartW, Height: chartH, Inverted: inverted, Empty: true}
	first := true
	for _, s := range ss {
		for i, t := range s.t {
			if first {
				c.minT, c.maxT, c.minV, c.maxV, first = t, t, s.v[i], s.v[i], false
			}
			c.minT, c.maxT = minTime(c.minT, t), maxTime(c.maxT, t)
			c.minV, c.maxV = min(c.minV, s.v[i]), max(c.maxV, s.v[i])
		}
	}
	if first {
		return c
	}
	c.Empty = false
	c.From, c.To = c.minT.UTC().Format("Jan 2 15:04"), c.maxT.UTC().Format("Jan 2 15:04")
	c.Top, c.Bottom = label(c.maxV), label(c.minV)
	if inverted {
		c.Top, c.Bottom = label(c.minV), label(c.maxV)
	}
	for i, s := range ss {
		c.Lines = append(c.Lines, Line{Name: s.name, Class: fmt.Sprintf("s%d", i%8), Points: c.points(s),
			Last: label(s.v[len(s.v)-1])})
	}
	return c
}

func (c LineChart) points(s series) string {
	span := c.maxT.Sub(c.minT).Seconds()
	rng := c.maxV - c.minV
	var b strings.Builder
	for i, t := range s.t {
		x := chartW / 2
		if span > 0 {
			x = chartW * t.Sub(c.minT).Seconds() / span
		}
		y := chartH / 2
		if rng > 0 {
			f := (s.v[i] - c.minV) / rng
			if !c.Inverted {
				f = 1 - f
			}
			y = 2 + (chartH-4)*f
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
	}
	return strings.TrimSpace(b.String())
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

// compact prints 1234567 as 1.2M.
func compact(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fB", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
