package quota

import (
	"bytes"
	"hash/fnv"
	"os"
	"strconv"
	"sync"
	"time"
)

// The embedded limiter's clock guard asks a second clock: the kernel's
// time since boot, which a step of the wall clock (a bad NTP answer, an
// operator's date -s) does not move. While the boot stays the same, wall
// time minus time since boot is the wall time of the boot, a constant; a
// reading that moves it by more than Options.Guard is a step of the wall
// clock, not time passing.

// kernelUptime reads the boot id and the time since boot from /proc
// (Linux); ok is false elsewhere, and the guard is then off.
func kernelUptime() (boot string, since time.Duration, ok bool) {
	bootOnce.Do(func() {
		b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if err == nil {
			bootID = string(bytes.TrimSpace(b))
		}
	})
	if bootID == "" {
		return "", 0, false
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return "", 0, false
	}
	f, _, _ := bytes.Cut(b, []byte(" "))
	secs, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		return "", 0, false
	}
	return bootID, time.Duration(secs * float64(time.Second)), true
}

var (
	bootOnce sync.Once
	bootID   string
)

// bootHash keeps a boot id in an integer column.
func bootHash(boot string) int64 {
	h := fnv.New64a()
	h.Write([]byte(boot))
	return int64(h.Sum64() >> 2)
}
