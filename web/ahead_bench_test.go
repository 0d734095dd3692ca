package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// BenchmarkLandingsWithoutACache compares the two things a server with no
// cache in front could do when a run lands: build again, ahead of the
// readers, each kept page read since its build (ahead: the watcher's
// work, run after each landing), or build a page only when a reader asks
// for it (asked: no watcher). A run of one of eight regions lands at each
// step, and readers then ask for each of the ten pages (the eight charts,
// the front page, the worldwide page) with even odds. It reports the
// builds, the CPU time and the bytes allocated per landing; -benchmem
// adds the allocations.
func BenchmarkLandingsWithoutACache(b *testing.B) {
	codes := []string{"US", "GB", "JP", "IN", "BR", "DE", "FR", "KR"}
	pages := []string{"/", "/worldwide"}
	for _, c := range codes {
		pages = append(pages, "/charts/"+c)
	}
	for _, ahead := range []bool{true, false} {
		name := map[bool]string{true: "ahead", false: "asked"}[ahead]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
			db := storetest.Open(b)
			var now atomic.Int64
			now.Store(t0.UnixNano())
			s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return time.Unix(0, now.Load()).UTC() })})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.answers.noWatcher = true
			videos := func(c string, n int) []string {
				ids := make([]string, 10)
				for i := range ids {
					ids[i] = fmt.Sprintf("%s%d-%d", c, n%3, i)
				}
				return ids
			}
			for _, c := range codes {
				if err := landRun(ctx, db, c, worldVideos(t0, videos(c, 0)...)); err != nil {
					b.Fatal(err)
				}
			}
			draw := rand.New(rand.NewPCG(1, 2))
			read := func() {
				for _, p := range pages {
					if draw.IntN(2) == 0 {
						continue
					}
					w := httptest.NewRecorder()
					s.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
					if w.Code != 200 {
						b.Fatalf("%s: %d", p, w.Code)
					}
				}
			}
			read()
			builds, cpu := s.answers.builds.Load(), cpuTime(b)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				c := codes[n%len(codes)]
				n++
				if err := landRun(ctx, db, c, worldVideos(t0, videos(c, n)...)); err != nil {
					b.Fatal(err)
				}
				// Past the mark's second: the requests read it again.
				now.Add(int64(2 * markEvery))
				if ahead {
					s.refreshKept()
				}
				read()
			}
			b.ReportMetric(float64(s.answers.builds.Load()-builds)/float64(n), "builds/landing")
			b.ReportMetric((cpuTime(b)-cpu).Seconds()*1000/float64(n), "cpu-ms/landing")
		})
	}
}

// cpuTime is the user and system time this process has taken.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
