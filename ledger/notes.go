package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LedgerID is the database's stable id, made when it was created: to the
// shared limiter, every process writing to this database is one worker.
func (l *Ledger) LedgerID(ctx context.Context) (string, error) {
	id, err := l.Noted(ctx, "ledger_id")
	if err == nil && id == "" {
		err = errors.New("the database has no ledger id")
	}
	return id, err
}

// Note keeps a small value under name.
func (l *Ledger) Note(ctx context.Context, name, value string) error {
	_, err := l.w.ExecContext(ctx, `INSERT INTO ledger_notes (name, value) VALUES (?, ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("note %s: %w", name, err)
	}
	return nil
}

// Noted returns the value kept under name, "" when there is none.
func (l *Ledger) Noted(ctx context.Context, name string) (string, error) {
	var v string
	err := l.r.QueryRowContext(ctx, `SELECT value FROM ledger_notes WHERE name = ?`, name).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read note %s: %w", name, err)
	}
	return v, nil
}

// NotedUnder returns the notes whose names begin with prefix, keyed by the
// rest of their names.
func (l *Ledger) NotedUnder(ctx context.Context, prefix string) (map[string]string, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT name, value FROM ledger_notes WHERE substr(name, 1, ?) = ?`, len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("read notes %s: %w", prefix, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, v string
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("read notes %s: %w", prefix, err)
		}
		out[name[len(prefix):]] = v
	}
	return out, rows.Err()
}
