package fakeyt

// The upstream's videos change while they chart: an owner renames a video,
// and a region's chart drops a video that others still hold. Retitle and
// Leave make the fake do so from the next fetch on.

// Retitle serves id under title from the next fetch on, in every chart,
// videos.list and search, as when its owner renames it; "" serves it
// under its own title again.
func (f *Fake) Retitle(id, title string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.titles == nil {
		f.titles = map[string]string{}
	}
	if title == "" {
		delete(f.titles, id)
		return
	}
	f.titles[id] = title
}

// Leave serves region's chart without ids from the next fetch on, the
// videos below them each a rank higher, as when they fall out of that
// chart and stay in others'. Leave(region) serves it whole again.
func (f *Fake) Leave(region string, ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == nil {
		f.left = map[string]map[string]bool{}
	}
	if len(ids) == 0 {
		delete(f.left, region)
		return
	}
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	f.left[region] = out
}

// edited is v as Retitle has it: v itself when it kept its title, else a
// copy under its new title.
func (f *Fake) edited(v *video) *video {
	f.mu.Lock()
	title, ok := f.titles[v.ID]
	f.mu.Unlock()
	if !ok {
		return v
	}
	c := *v
	c.Title = title
	return &c
}

// editedList is list as Retitle has it, less the videos Leave took out of
// region's chart.
func (f *Fake) editedList(region string, list []*video) []*video {
	f.mu.Lock()
	n, left := len(f.titles), f.left[region]
	f.mu.Unlock()
	if n == 0 && len(left) == 0 {
		return list
	}
	out := make([]*video, 0, len(list))
	for _, v := range list {
		if !left[v.ID] {
			out = append(out, f.edited(v))
		}
	}
	return out
}
