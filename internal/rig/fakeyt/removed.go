package fakeyt

// The upstream stops returning a video its owner deletes or makes
// private: videos.list by id leaves it out, as do the charts and
// videos.batchGetStats. A client that keeps it must delete it
// (docs/explanation/terms.md).

// Delete makes the upstream forget ids, as when their owner deletes them.
func (f *Fake) Delete(ids ...string) { f.remove(ids) }

// MakePrivate hides ids from the API, as when their owner makes them
// private: to an API key it is the same as a deletion.
func (f *Fake) MakePrivate(ids ...string) { f.remove(ids) }

func (f *Fake) remove(ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed == nil {
		f.removed = map[string]bool{}
	}
	for _, id := range ids {
		f.removed[id] = true
	}
}

// isRemoved says whether id was deleted or made private.
func (f *Fake) isRemoved(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.removed[id]
}

// without is list less the removed videos.
func (f *Fake) without(list []*video) []*video {
	f.mu.Lock()
	n := len(f.removed)
	f.mu.Unlock()
	if n == 0 {
		return list
	}
	out := make([]*video, 0, len(list))
	for _, v := range list {
		if !f.isRemoved(v.ID) {
			out = append(out, v)
		}
	}
	return out
}
