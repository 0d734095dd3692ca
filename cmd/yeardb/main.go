// Command yeardb builds a database that looks like a daemon's year (package
// internal/yeardb), for measuring commands at that scale:
//
//	go run ./cmd/yeardb -db /tmp/year.db -days 365
//
// The file must not exist. A year takes about an hour on two busy cores
// and more than a gigabyte; never commit what it writes. scripts/bench.sh
// builds one once and keeps it in its cache.
//
// More than 30 days is more than the standard standing under the upstream's
// terms allows (docs/terms.md): such a database is one an extended key
// keeps, and ingest reads and runs on it only when told so
// (INGEST_STANDING=extended INGEST_STATS_RETENTION=400d, say); under
// standard, run refuses it until prune --terms has deleted what is older.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ingestworks/ingest/internal/yeardb"
)

func main() {
	fs := flag.NewFlagSet("yeardb", flag.ContinueOnError)
	path := fs.String("db", "", "the database to create (must not exist)")
	days := fs.Int("days", 365, "days of hourly runs of every default chart, ending now")
	seed := fs.Uint64("seed", 1, "the moving charts' seed")
	regions := fs.String("regions", "", "comma-separated regions of the charts (default: every default region)")
	track := fs.Duration("track", 7*24*time.Hour, "tracking as the daemon's default writes it: the counts of the videos charts showed in this last span, hourly; 0 for none")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *path == "" || *days <= 0 {
		fmt.Fprintln(os.Stderr, "yeardb: -db is required and -days must be > 0")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	err := yeardb.BuildWith(ctx, *path, yeardb.Options{Days: *days, Seed: *seed, Track: *track, Regions: splitRegions(*regions), Progress: func(day, days int) {
		if day%10 == 0 || day == days {
			fmt.Fprintf(os.Stderr, "yeardb: day %d/%d after %s\n", day, days, time.Since(start).Round(time.Second))
		}
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fi, _ := os.Stat(*path)
	fmt.Printf("yeardb: %s: %d days in %s, %.1f MB\n", *path, *days, time.Since(start).Round(time.Second), float64(fi.Size())/1e6)
	if *days > 30 {
		fmt.Printf("yeardb: more than 30 days: use it under an extended standing, e.g. INGEST_STANDING=extended INGEST_STATS_RETENTION=%dd (docs/terms.md)\n", *days+35)
	}
}

// splitRegions is -regions as a list; nil (every default region) when empty.
func splitRegions(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
