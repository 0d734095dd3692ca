// Package seedtest is the one way a test picks the seeds it draws its
// randomness from, so that make test decides the same on every run of a
// commit while a search for bugs still draws new ones.
//
// A test names a variable and its fixed seeds. Unset, the variable gives
// the fixed seeds: the ones kept in the repository, beside the test or in
// a seeds file with why each is there, and the only ones make test runs.
// Set to "random", it gives one seed drawn from the kernel (make sim, make
// sim-sweep, make partition); set to a whole number, that seed, to replay
// it. Every seed is logged with the line that replays it, and a red found
// by a random one joins the fixed seeds with its fix.
package seedtest

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Random is the value that asks for a seed drawn from the kernel.
const Random = "random"

// Seeds is the seeds of the test t from the variable env: its value when
// set, else fixed.
func Seeds(t testing.TB, env string, fixed ...uint64) []uint64 {
	t.Helper()
	return From(t, env+"=", os.Getenv(env), fixed...)
}

// Seed is the one seed of Seeds.
func Seed(t testing.TB, env string, fixed uint64) uint64 {
	t.Helper()
	return Seeds(t, env, fixed)[0]
}

// From is the seeds that value gives ("random", a whole number, or empty
// for fixed); replay is what goes before a seed to run it again
// ("INGEST_SIM_SEED=", "make partition SEED=").
func From(t testing.TB, replay, value string, fixed ...uint64) []uint64 {
	t.Helper()
	var seeds []uint64
	switch value {
	case "":
		if len(fixed) == 0 {
			t.Fatalf("seedtest: %s: no fixed seed given", t.Name())
		}
		seeds = fixed
	case Random:
		seeds = []uint64{Draw()}
	default:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			t.Fatalf("%s%q is not a seed: a whole number, or %q for a new one", replay, value, Random)
		}
		seeds = []uint64{n}
	}
	for _, s := range seeds {
		t.Logf("seed %d (%s%d replays it)", s, replay, s)
	}
	return seeds
}

// Draw is a seed from the kernel.
func Draw() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("seedtest: the kernel gave no random bytes: %v", err))
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Listed is the fixed seeds of test in file, a seeds file: a line a seed,
// "TestName SEED why it is there", '#' starting a comment. A test with no
// line is a test failure: a seed is added with its reason.
func Listed(t testing.TB, file, test string) []uint64 {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("seedtest: %v", err)
	}
	defer f.Close()
	var seeds []uint64
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			t.Fatalf("%s:%d: want a test, a seed and why it is there, got %q", file, n, line)
		}
		s, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: %q is not a seed", file, n, fields[1])
		}
		if fields[0] == test {
			seeds = append(seeds, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("seedtest: %s: %v", file, err)
	}
	if len(seeds) == 0 {
		t.Fatalf("%s: no seed for %s: add one, with why it is there", file, test)
	}
	return seeds
}
