package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// CategoriesFetched returns when region's categories were last stored, the
// zero time if never.
func (db *DB) CategoriesFetched(ctx context.Context, region string) (time.Time, error) {
	var ms sql.NullInt64
	err := db.r.QueryRowContext(ctx,
		`SELECT fetched_ms FROM category_fetches WHERE region = ?`, region).Scan(&ms)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("categories of %s: %w", region, err)
	}
	return timeOf(ms), nil
}

// SaveCategories replaces region's categories with cats.
func (db *DB) SaveCategories(ctx context.Context, region string, cats []ingest.Category, at time.Time) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM categories WHERE region = ?`, region); err != nil {
			return err
		}
		for _, c := range cats {
			if _, err := tx.ExecContext(ctx, db.q.saveCategory, region, c.ID, c.Title, c.Language, msOf(at)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, db.q.categoryFetched, region, msOf(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("save categories of %s: %w", region, err)
	}
	return nil
}

// Categories returns region's categories by id.
func (db *DB) Categories(ctx context.Context, region string) ([]ingest.Category, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT id, title, language FROM categories WHERE region = ? ORDER BY id`, region)
	if err != nil {
		return nil, fmt.Errorf("categories of %s: %w", region, err)
	}
	defer rows.Close()
	var cats []ingest.Category
	for rows.Next() {
		c := ingest.Category{Region: region}
		if err := rows.Scan(&c.ID, &c.Title, &c.Language); err != nil {
			return nil, fmt.Errorf("categories of %s: %w", region, err)
		}
		cats = append(cats, c)
	}
	return cats, rows.Err()
}

// categoryStmts store a region's category names, each database's text:
// PostgreSQL's upsert names its conflict target.
type categoryStmts struct{ saveCategory, categoryFetched string }

var (
	sqliteCategorySQL = categoryStmts{
		saveCategory: `
INSERT INTO categories (region, id, title, language, fetched_ms) VALUES (?, ?, ?, ?, ?)
ON CONFLICT DO UPDATE SET title = excluded.title, language = excluded.language`,
		categoryFetched: `
INSERT INTO category_fetches (region, fetched_ms) VALUES (?, ?)
ON CONFLICT DO UPDATE SET fetched_ms = excluded.fetched_ms`,
	}
	pgCategorySQL = categoryStmts{
		saveCategory: `
INSERT INTO categories (region, id, title, language, fetched_ms) VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (region, id) DO UPDATE SET title = excluded.title, language = excluded.language`,
		categoryFetched: `
INSERT INTO category_fetches (region, fetched_ms) VALUES (?1, ?2)
ON CONFLICT (region) DO UPDATE SET fetched_ms = excluded.fetched_ms`,
	}
)
