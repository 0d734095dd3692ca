package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ingestworks/ingest"
)

// pgConnector opens pgx connections that take the store's placeholders:
// every statement the store sends either database is written with SQLite's
// ? and ?NNN, which rebind numbers as PostgreSQL's $n on the way to the
// server. The text of a statement that differs is the dialect's
// (dialectSQL), never looked up here.
type pgConnector struct{ inner driver.Connector }

func openPG(cfg *pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn.(*stdlib.Conn)}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is a pgx connection whose statements are rebound, and whose
// replies count as answers to an ingest.BoundBySilence on their context.
type pgConn struct{ *stdlib.Conn }

// answered tells an ingest.BoundBySilence over ctx that the server replied: with a
// result or with an error of its own, not with the driver's giving up.
func answered(ctx context.Context, err error) {
	var pe *pgconn.PgError
	if err == nil || errors.As(err, &pe) {
		ingest.Answered(ctx)
	}
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.BeginTx(ctx, opts)
	answered(ctx, err)
	return tx, err
}

func (c *pgConn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(q))
}

func (c *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := c.Conn.PrepareContext(ctx, rebind(q))
	answered(ctx, err)
	return st, err
}

func (c *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.ExecContext(ctx, rebind(q), args)
	answered(ctx, err)
	return r, err
}

func (c *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.Conn.QueryContext(ctx, rebind(q), args)
	answered(ctx, err)
	return rows, err
}

// CheckNamedValue passes a bool as 0 or 1: SQLite has no boolean type, so
// the schema's flags are integers on both stores.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}

// rebind writes SQLite's placeholders as PostgreSQL's: ?NNN as $NNN, and
// each bare ? as the next number. Text inside quotes and -- comments is
// left alone.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n, quote := 0, byte(0)
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '-' && strings.HasPrefix(q[i:], "--"):
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			b.WriteString(q[i : i+end])
			i += end - 1
			continue
		case ch == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + q[i+1:j])
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
			i = j - 1
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
