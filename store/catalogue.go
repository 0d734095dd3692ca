package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// RegionCatalogue is the region catalogue db keeps: the regions
// i18nRegions.list named when it was last read, replaced whole by each
// read.
type RegionCatalogue struct{ db *DB }

// RegionCatalogue is db's stored region catalogue.
func (db *DB) RegionCatalogue() RegionCatalogue { return RegionCatalogue{db} }

// Load returns the stored regions by code and when they were read: none
// and the zero time before the first read.
func (c RegionCatalogue) Load(ctx context.Context) ([]ingest.Region, time.Time, error) {
	var latest sql.NullInt64
	rows, err := c.db.r.QueryContext(ctx, `SELECT code, name, fetched_ms FROM region_catalogue ORDER BY code`)
	out, err := scanEach(rows, err, func(rows *sql.Rows) (r ingest.Region, err error) {
		var ms int64
		err = rows.Scan(&r.Code, &r.Name, &ms)
		latest = sql.NullInt64{Int64: max(latest.Int64, ms), Valid: true}
		return r, err
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("region catalogue: %w", err)
	}
	return out, timeOf(latest), nil
}

// Save replaces the stored catalogue with regions, read at at.
func (c RegionCatalogue) Save(ctx context.Context, regions []ingest.Region, at time.Time) error {
	err := c.db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM region_catalogue`); err != nil {
			return err
		}
		for _, r := range regions {
			if _, err := tx.ExecContext(ctx, `INSERT INTO region_catalogue (code, name, fetched_ms) VALUES (?, ?, ?)`,
				r.Code, r.Name, msOf(at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save the region catalogue: %w", err)
	}
	return nil
}
