package kept

import (
	"container/list"
	"sync"
)

// What the kept answers may hold, in bytes and in answers: a crawler's
// unique URLs can fill it, never grow it. web's Config.Kept changes them.
const (
	DefaultBytes   = 24 << 20
	DefaultAnswers = 2048
)

// Bound is how much the kept answers may hold: Bytes of answers (plain
// and gzip, with their keys) and Answers of them; an answer larger than an
// eighth of Bytes is served but never kept.
type Bound struct {
	Bytes, Answers int
}

// orDefault fills a zero field with its default.
func (b Bound) orDefault() Bound {
	if b.Bytes <= 0 {
		b.Bytes = DefaultBytes
	}
	if b.Answers <= 0 {
		b.Answers = DefaultAnswers
	}
	return b
}

// protectedShare is the part of the bound an answer asked for twice may
// hold: an answer asked for once goes in the rest, so a flood of URLs
// asked for once each pushes out only one another, never a page that
// readers keep asking for.
const protectedShare = 0.8

// Answer is what the set reads of an answer it keeps: its size in bytes
// (its keys aside), the mark of the data it was built under, and whether
// it was served since its build and can be built again (only such a one
// is worth building again when the mark moves).
type Answer interface {
	Size() int
	Mark() string
	Served() bool
}

// Set is the kept answers by key, in two segments (a segmented LRU):
// a new answer is on probation; asked for again, it is protected; the
// protected that overflow their share go back on probation, and what the
// bound drops comes from probation first, least recently asked first.
type Set[A Answer] struct {
	mu        sync.Mutex
	bound     Bound
	byKey     map[string]*list.Element // of *kept[A]
	probation list.List                // front: most recently asked
	protected list.List
	size      int // bytes of both segments
	protSize  int // bytes of the protected segment
}

// kept is one answer in the set.
type kept[A Answer] struct {
	key       string
	a         A
	size      int
	protected bool
}

// keptOverhead is what an entry costs beyond its bytes and key: the map
// slot, the list element, the answer and its header.
const keptOverhead = 512

// NewSet is an empty set within b; a zero field of b is its default.
func NewSet[A Answer](b Bound) *Set[A] {
	return &Set[A]{bound: b.orDefault(), byKey: map[string]*list.Element{}}
}

// Get is key's answer, the zero A (nil) when none is kept; being asked
// for moves it up (on probation, into the protected segment).
func (s *Set[A]) Get(key string) A {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byKey[key]
	if !ok {
		var none A
		return none
	}
	k := e.Value.(*kept[A])
	if k.protected {
		s.protected.MoveToFront(e)
		return k.a
	}
	s.probation.Remove(e)
	k.protected = true
	s.byKey[key] = s.protected.PushFront(k)
	s.protSize += k.size
	s.demote()
	return k.a
}

// Put keeps a as key's answer, in place of the one before (keeping its
// segment), and drops what the bound no longer holds.
func (s *Set[A]) Put(key string, a A) {
	n := a.Size() + len(key) + keptOverhead
	s.mu.Lock()
	defer s.mu.Unlock()
	e, was := s.byKey[key]
	protected := was && e.Value.(*kept[A]).protected
	s.remove(key)
	if n > s.bound.Bytes/8 {
		return
	}
	k := &kept[A]{key: key, a: a, size: n, protected: protected}
	s.size += n
	if protected { // a page readers keep asking for, built again
		s.byKey[key] = s.protected.PushFront(k)
		s.protSize += n
		s.demote()
		return
	}
	s.byKey[key] = s.probation.PushFront(k)
	s.trim()
}

// Drop forgets key's answer, when there is one.
func (s *Set[A]) Drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(key)
}

// remove drops key's answer, when there is one.
func (s *Set[A]) remove(key string) {
	e, ok := s.byKey[key]
	if !ok {
		return
	}
	k := e.Value.(*kept[A])
	if k.protected {
		s.protected.Remove(e)
		s.protSize -= k.size
	} else {
		s.probation.Remove(e)
	}
	s.size -= k.size
	delete(s.byKey, key)
}

// demote moves the least recently asked protected answers back on
// probation while the protected segment is over its share.
func (s *Set[A]) demote() {
	for s.protected.Len() > 1 && (float64(s.protSize) > protectedShare*float64(s.bound.Bytes) ||
		float64(s.protected.Len()) > protectedShare*float64(s.bound.Answers)) {
		e := s.protected.Back()
		k := e.Value.(*kept[A])
		s.protected.Remove(e)
		s.protSize -= k.size
		k.protected = false
		s.byKey[k.key] = s.probation.PushFront(k)
	}
	s.trim()
}

// trim drops answers, probation's least recently asked first, until the
// set is within its bound.
func (s *Set[A]) trim() {
	for s.size > s.bound.Bytes || len(s.byKey) > s.bound.Answers {
		e := s.probation.Back()
		if e == nil {
			e = s.protected.Back()
		}
		if e == nil {
			return
		}
		s.remove(e.Value.(*kept[A]).key)
	}
}

// Held is how many answers and bytes the set holds now.
func (s *Set[A]) Held() (answers, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey), s.size
}

// Keyed is a kept answer with its key.
type Keyed[A Answer] struct {
	Key    string
	Answer A
}

// staleOnce is how many answers asked for once the watcher builds again
// at a change of the mark, most recently asked first.
const staleOnce = 16

// Update hands f each answer built under mark and keeps what f returns
// in its place, where f says so: in place, as recently asked as it was,
// with no answer put between f's reading and the replacing.
func (s *Set[A]) Update(mark string, f func(A) (A, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range []*list.List{&s.protected, &s.probation} {
		for e := l.Front(); e != nil; e = e.Next() {
			k := e.Value.(*kept[A])
			if k.a.Mark() != mark {
				continue
			}
			if a, ok := f(k.a); ok {
				k.a = a
			}
		}
	}
}

// AnyServed reports whether any answer was served since its build and can
// be built again: one stale would return under a mark it was not built
// under.
func (s *Set[A]) AnyServed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range []*list.List{&s.protected, &s.probation} {
		for e := l.Front(); e != nil; e = e.Next() {
			if k := e.Value.(*kept[A]); k.a.Served() {
				return true
			}
		}
	}
	return false
}

// Stale are the answers built under another mark than mark that were
// served since their build, most recently asked first: what the watcher
// builds again. Every protected one (asked for twice or more), and of
// those asked for once only the staleOnce latest: a flood of URLs asked
// for once each (unique searches) never sets the watcher to rebuild them
// all; such a page is built again when a reader asks for it again.
func (s *Set[A]) Stale(mark string) []Keyed[A] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Keyed[A]
	for _, seg := range []struct {
		l   *list.List
		max int
	}{{&s.protected, s.protected.Len()}, {&s.probation, staleOnce}} {
		n := 0
		for e := seg.l.Front(); e != nil && n < seg.max; e = e.Next() {
			k := e.Value.(*kept[A])
			if k.a.Mark() != mark && k.a.Served() {
				out = append(out, Keyed[A]{k.key, k.a})
				n++
			}
		}
	}
	return out
}
