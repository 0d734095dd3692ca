package a

import (
	"time"
	t2 "time"
)

func reads() {
	_ = time.Now()               // want `time.Now reads the host's clock`
	_ = time.Since(time.Time{})  // want `time.Since reads the host's clock`
	_ = t2.Until(time.Time{})    // want `time.Until reads the host's clock`
	<-time.After(time.Second)    // want `time.After reads the host's clock`
	time.AfterFunc(0, func() {}) // want `time.AfterFunc reads the host's clock`
	_ = time.NewTimer(0)         // want `time.NewTimer reads the host's clock`
	_ = time.NewTicker(1)        // want `time.NewTicker reads the host's clock`
	_ = time.Tick(1)             // want `time.Tick reads the host's clock`
	time.Sleep(0)                // want `time.Sleep reads the host's clock`
	now := time.Now              // want `time.Now reads the host's clock`
	_ = now
	// what only computes with times is let be
	_ = time.Unix(0, 0).Add(time.Second).Sub(time.Time{}).Round(time.Second)
	_, _ = time.ParseDuration("1s")
}
