// Command yeardb builds a database that looks like a daemon's year (package
// internal/rig/yeardb), for measuring commands at that scale:
//
//	go run ./cmd/yeardb -db /tmp/year.db -days 365
//	go run ./cmd/yeardb -db /tmp/all.db -days 30 -regions 'all:tier=3:depth=50,default:tier=1:depth=200'
//
// The file must not exist. A year takes about an hour on two busy cores
// and more than a gigabyte; never commit what it writes. scripts/bench.sh
// builds one once and keeps it in its cache.
//
// More than 30 days is more than the standard standing under the upstream's
// terms allows (docs/explanation/terms.md): such a database is one an extended key
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
	"time"

	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/regions"
)

func main() {
	fs := flag.NewFlagSet("yeardb", flag.ContinueOnError)
	path := fs.String("db", "", "the database to create (must not exist)")
	days := fs.Int("days", 365, "days of hourly runs of every default chart, ending now")
	seed := fs.Uint64("seed", 1, "the moving charts' seed")
	selection := fs.String("regions", "", "the charts as ingest's --regions selects them: "+regions.Syntax+" (default: every default region, hourly and whole)")
	end := fs.String("end", "", "the hour the last runs start in, RFC 3339 (default: the hour before the current one)")
	track := fs.Duration("track", 7*24*time.Hour, "tracking as the daemon's default writes it: the counts of the videos charts showed in this last span, hourly; 0 for none")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *path == "" || *days <= 0 {
		fmt.Fprintln(os.Stderr, "yeardb: -db is required and -days must be > 0")
		os.Exit(2)
	}
	charts, err := regions.Parse(*selection, regions.Builtin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "yeardb: -regions: %v\n", err)
		os.Exit(2)
	}
	var last time.Time
	if *end != "" {
		if last, err = time.Parse(time.RFC3339, *end); err != nil {
			fmt.Fprintf(os.Stderr, "yeardb: -end: %v\n", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	err = yeardb.BuildWith(ctx, *path, yeardb.Options{Days: *days, End: last.UTC(), Seed: *seed, Track: *track, Charts: charts, Progress: func(day, days int) {
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
		fmt.Printf("yeardb: more than 30 days: use it under an extended standing, e.g. INGEST_STANDING=extended INGEST_STATS_RETENTION=%dd (docs/explanation/terms.md)\n", *days+35)
	}
}
