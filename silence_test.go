package ingest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A bound answered more often than its length runs as long as the
// answers come, however long that is.
func TestAnswersKeepTheBoundOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := BoundBySilence(context.Background(), time.Second)
		defer stop()
		for range 30 {
			time.Sleep(900 * time.Millisecond)
			if ctx.Err() != nil {
				t.Fatalf("ended with an answer every 900ms: %v", context.Cause(ctx))
			}
			Answered(ctx)
		}
	})
}

// A bound with no answer ends once its length has passed, naming why.
func TestSilenceEndsTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := BoundBySilence(context.Background(), time.Second)
		defer stop()
		Answered(ctx)
		time.Sleep(999 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("ended before its second: %v", context.Cause(ctx))
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if !errors.Is(context.Cause(ctx), ErrSilent) {
			t.Fatalf("after a silent second: cause %v, want ErrSilent", context.Cause(ctx))
		}
		// Ended is ended: a late answer does not open it again.
		Answered(ctx)
		if ctx.Err() == nil {
			t.Fatal("a late answer opened an ended bound")
		}
	})
}

// An answer on a context derived from the bound's counts; one outside any
// bound, or on a bound stopped, does nothing.
func TestAnswersReachTheirBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		Answered(context.Background())
		ctx, stop := BoundBySilence(context.Background(), time.Second)
		inner, cancel := context.WithCancel(ctx)
		defer cancel()
		time.Sleep(800 * time.Millisecond)
		Answered(inner)
		time.Sleep(800 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatalf("an answer on a derived context did not count: %v", context.Cause(ctx))
		}
		stop()
		Answered(ctx)
		if !errors.Is(ctx.Err(), context.Canceled) || errors.Is(context.Cause(ctx), ErrSilent) {
			t.Fatalf("stopped: %v (cause %v), want canceled, not silent", ctx.Err(), context.Cause(ctx))
		}
	})
}
