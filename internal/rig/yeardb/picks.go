package yeardb

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Picks are what the benchmarks measure a built database with, found in
// it rather than assumed, so that they hold for any build.
type Picks struct {
	// Busiest is the video with the most chart entries: the heaviest
	// video page and history.
	Busiest string
	// Chart is the newest US chart, best first: today's video pages.
	Chart []string
	// Old is the top video of the US chart at Mid, half way through.
	Old string
	// Mid is the start of the US run half way between the first and the
	// newest; End is the newest run's start.
	Mid, End time.Time
	// Rare is a word of the index found in two videos; Words is how many
	// distinct words the index holds.
	Rare  string
	Words int
}

// Pick reads the picks of the database at path, read-only.
func Pick(ctx context.Context, path string) (Picks, error) {
	var p Picks
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return p, err
	}
	defer db.Close()
	for _, f := range []func(context.Context, *sql.DB, *Picks) error{pickBusiest, pickCharts, pickWords} {
		if err := f(ctx, db, &p); err != nil {
			return p, fmt.Errorf("picks of %s: %w", path, err)
		}
	}
	return p, nil
}

func pickBusiest(ctx context.Context, db *sql.DB, p *Picks) error {
	return db.QueryRowContext(ctx, `SELECT v.id FROM video_days AS d JOIN videos AS v ON v.vid = d.vid
		GROUP BY d.vid ORDER BY sum(d.entries) DESC, d.vid LIMIT 1`).Scan(&p.Busiest)
}

func pickCharts(ctx context.Context, db *sql.DB, p *Picks) error {
	var first, last, newest int64
	err := db.QueryRowContext(ctx, `SELECT min(started_ms), max(started_ms), (SELECT max(id) FROM runs
		WHERE region = 'US' AND kind = 'trending' AND status = 'completed') FROM runs WHERE kind = 'trending'`).
		Scan(&first, &last, &newest)
	if err != nil {
		return err
	}
	p.End = time.UnixMilli(last).UTC()
	if p.Chart, err = runVideos(ctx, db, newest); err != nil {
		return err
	}
	var mid, midRun int64
	if err := db.QueryRowContext(ctx, `SELECT started_ms, id FROM runs WHERE kind = 'trending' AND region = 'US'
		AND started_ms <= ? ORDER BY kind, started_ms DESC LIMIT 1`, (first+last)/2).Scan(&mid, &midRun); err != nil {
		return err
	}
	p.Mid = time.UnixMilli(mid).UTC()
	old, err := runVideos(ctx, db, midRun)
	if err == nil && len(old) > 0 {
		p.Old = old[0]
	}
	return err
}

func runVideos(ctx context.Context, db *sql.DB, run int64) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT v.id FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
		WHERE e.run_id = ? ORDER BY e.rank`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func pickWords(ctx context.Context, db *sql.DB, p *Picks) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.words USING fts5vocab(main, 'videos_fts', 'row')`); err != nil {
		return err
	}
	return conn.QueryRowContext(ctx, `SELECT count(*), coalesce(min(term) FILTER (WHERE doc = 2 AND length(term) > 4), '') FROM temp.words`).
		Scan(&p.Words, &p.Rare)
}
