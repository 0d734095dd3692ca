package fakeyt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Charts that move. By default the fake's charts are the fixtures, the same
// at every fetch, so that tests can name what they will get. Move makes
// them behave like the real ones, as a function of a seed and a clock the
// caller controls: every hour of that clock after Move, each region gains
// fresh videos that climb into its chart and fall out of it again after
// freshHours; every count grows at its own rate, so ranks change; and
// videos.batchGetStats serves the grown counts of any video, on a chart or
// not. The same seed and clock give the same answers.

const (
	// freshPerHour is how many new videos each region publishes an hour.
	freshPerHour = 2
	// freshHours is how long a fresh video may stay in the chart.
	freshHours = 48
)

// motion is the seed and clock of moving charts; nil clock: still charts.
// start is the clock's time when Move was called: the world begins then,
// the fixtures' publication times shifted from Anchor to it.
type motion struct {
	seed  uint64
	clock func() time.Time
	start time.Time
}

// Move makes the charts and counts move with clock (seed picks the world),
// from the clock's time now. A nil clock stops them: the fixtures are
// served as they are again.
func (f *Fake) Move(seed uint64, clock func() time.Time) {
	m := motion{seed: seed, clock: clock}
	if clock != nil {
		m.start = clock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.motion, f.born = m, map[string]*video{}
}

// now returns the moving clock's time, and false when the charts are still.
func (f *Fake) now() (time.Time, bool) {
	m := f.motionNow()
	if m.clock == nil {
		return time.Time{}, false
	}
	return m.clock(), true
}

func (f *Fake) motionNow() motion {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.motion
}

// chartNow is region's chart as the clock has it, or ok false when the
// region has no chart.
func (f *Fake) chartNow(region string) (list []*video, ok bool) {
	list, ok = f.movingChart(region)
	return f.editedList(region, f.traded(region, f.without(list))), ok
}

// Swap serves region's chart with the videos at ranks a and b (from 1)
// in each other's place, from the next fetch on, as when one video moves
// past another; Swap(region, 0, 0) serves it as it was.
func (f *Fake) Swap(region string, a, b int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.swapped == nil {
		f.swapped = map[string][2]int{}
	}
	f.swapped[region] = [2]int{a, b}
}

// SwapBetweenPages serves region's chart as it is for its next first page,
// then with the videos at ranks a and b (from 1) in each other's place,
// as Swap does, for the pages after it: the chart moves while a run reads
// it. With a on the first page and b on a later one, the video of a is
// served twice (at a, then at b) and the video of b never.
func (f *Fake) SwapBetweenPages(region string, a, b int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.swapAfter == nil {
		f.swapAfter = map[string][2]int{}
	}
	f.swapAfter[region] = [2]int{a, b}
}

// servedFirstPage is called once region's chart has served a first page:
// a swap SwapBetweenPages holds for it is made from then on.
func (f *Fake) servedFirstPage(region string) {
	f.mu.Lock()
	s, ok := f.swapAfter[region]
	delete(f.swapAfter, region)
	f.mu.Unlock()
	if ok {
		f.Swap(region, s[0], s[1])
	}
}

// traded is list with Swap's ranks traded, when both are in it.
func (f *Fake) traded(region string, list []*video) []*video {
	f.mu.Lock()
	s := f.swapped[region]
	f.mu.Unlock()
	a, b := s[0]-1, s[1]-1
	if a < 0 || b < 0 || a >= len(list) || b >= len(list) || a == b {
		return list
	}
	out := slices.Clone(list)
	out[a], out[b] = out[b], out[a]
	return out
}

// movingChart is chartNow with every video, removed ones included.
func (f *Fake) movingChart(region string) (list []*video, ok bool) {
	base, ok := f.fx.chartOf(region)
	at, moving := f.now()
	if !ok || !moving {
		return base, ok
	}
	h := hoursSince(f.motionNow().start, at)
	all := make([]*video, 0, len(base)+freshHours*freshPerHour)
	for _, v := range base {
		all = append(all, f.grown(v, at))
	}
	for born := h - freshHours + 1; born <= h; born++ {
		for j := 0; j < freshPerHour; j++ {
			all = append(all, f.grown(f.fresh(region, born, j), at))
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Views > all[b].Views })
	return all[:len(base)], true
}

// lookup finds a video by id: a fixture, or a fresh video served before;
// with its counts as the clock has them.
func (f *Fake) lookup(id string) *video {
	if f.isRemoved(id) {
		return nil
	}
	// A fresh video is looked for first: a miss in the fixtures makes
	// every generated chart (fixtures.video).
	f.mu.Lock()
	v := f.born[id]
	f.mu.Unlock()
	if v == nil {
		v = f.fx.video(id)
	}
	if v == nil {
		return nil
	}
	if at, moving := f.now(); moving {
		v = f.grown(v, at)
	}
	return f.edited(v)
}

// fresh returns the j-th video region published in hour born (hours since
// Move), made once and then remembered so that its id can be looked up.
func (f *Fake) fresh(region string, born, j int) *video {
	m := f.motionNow()
	scope := fmt.Sprintf("%s/fresh/%d/%d", region, m.seed, born)
	id := videoID(scope, j)
	f.mu.Lock()
	defer f.mu.Unlock()
	if v := f.born[id]; v != nil {
		return v
	}
	published := m.start.Add(time.Duration(born) * time.Hour)
	v := makeVideo(scope, pickLang(region, j), j, newRand(scope, j), published)
	v.ID, v.fresh = id, true
	v.Views, v.Likes, v.Comments = 20_000, 1_000, 100
	f.born[id] = v
	return v
}

// grown is v with its counts at time at: a fixture grows slowly from the
// start (published as long before it as before Anchor), a fresh video fast
// from its publication, each at a rate its id and the seed pick.
func (f *Fake) grown(v *video, at time.Time) *video {
	m := f.motionNow()
	g := *v
	from := m.start
	if v.fresh {
		from = v.PublishedAt
	} else {
		g.PublishedAt = v.PublishedAt.Add(m.start.Sub(Anchor))
	}
	hours := max(0, at.Sub(from).Hours())
	r := rand.New(rand.NewPCG(m.seed, idHash(v.ID)))
	perHour := float64(v.Views)/2000*(0.5+r.Float64()) + 500
	if v.fresh {
		perHour = 150_000 + 450_000*r.Float64()
	}
	add := uint64(perHour * hours)
	g.Views += add
	g.Likes += add / 40
	g.Comments += add / 400
	return &g
}

// hoursSince counts whole hours from start to at, rounding down.
func hoursSince(start, at time.Time) int {
	d := at.Sub(start)
	h := int(d / time.Hour)
	if d < 0 && d%time.Hour != 0 {
		h--
	}
	return h
}

func idHash(id string) uint64 {
	var h uint64 = 1469598103934665603
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h
}
