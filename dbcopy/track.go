package dbcopy

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
)

// A copy in two steps: the bulk while a worker still writes the source,
// then, once it has stopped, the rows that changed since. Track makes the
// source note the key of each row written or deleted in a carried table
// (changesTable, by triggers of its own) from before the bulk's snapshot;
// Carry reads those keys, writes each such row as the source now holds it
// into the target (or deletes it there when the source no longer has it),
// and forgets the keys it carried. Its work grows with what changed, not
// with the database.

// changesTable is where a tracked source notes the keys that changed.
const changesTable = "copy_changes"

// trackPrefix names the triggers that note them.
const trackPrefix = "copy_track_"

// Track makes db note, from now on, the key of every row written or
// deleted in the tables a copy carries. Tracking a tracked database again
// changes nothing. The tracking is installed whole in one transaction or
// not at all; on PostgreSQL it takes every carried table's lock first,
// briefly (lockCarried: the worker writes them in orders of its own), and
// a refusal is tried again, each said to retried.
func Track(ctx context.Context, db *store.DB, retried func(error)) error {
	var stmts []string
	if db.Postgres() {
		stmts = append(lockCarried("SHARE ROW EXCLUSIVE"),
			`CREATE TABLE IF NOT EXISTS `+changesTable+` (tbl TEXT NOT NULL, k TEXT NOT NULL, PRIMARY KEY (tbl, k))`,
			`CREATE OR REPLACE FUNCTION `+trackPrefix+`row() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE r jsonb; k jsonb; i int;
BEGIN
  FOREACH r IN ARRAY (CASE TG_OP WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)] WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)]
    ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END) LOOP
    k := '[]'::jsonb;
    FOR i IN 0 .. TG_NARGS - 1 LOOP k := k || jsonb_build_array(r -> TG_ARGV[i]); END LOOP;
    INSERT INTO `+changesTable+` (tbl, k) VALUES (TG_TABLE_NAME, k::text) ON CONFLICT DO NOTHING;
  END LOOP;
  RETURN NULL;
END $f$`)
		for _, t := range copyTables {
			args := make([]string, 0, 3)
			for _, k := range strings.Split(t.key, ", ") {
				args = append(args, `''`+k+`''`)
			}
			// created where absent: dropping one first would want a
			// lock that waits for the site's reads as well
			stmts = append(stmts, `DO $d$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '`+trackPrefix+t.name+
				`' AND tgrelid = '`+t.name+`'::regclass) THEN EXECUTE 'CREATE TRIGGER `+trackPrefix+t.name+
				` AFTER INSERT OR UPDATE OR DELETE ON `+t.name+` FOR EACH ROW EXECUTE FUNCTION `+trackPrefix+`row(`+
				strings.Join(args, ", ")+`)'; END IF; END $d$`)
		}
	} else {
		stmts = append(stmts, `CREATE TABLE IF NOT EXISTS `+changesTable+` (tbl TEXT NOT NULL, k TEXT NOT NULL, PRIMARY KEY (tbl, k)) WITHOUT ROWID`)
		for _, t := range copyTables {
			key := func(row string) string {
				ks := strings.Split(t.key, ", ")
				for i, k := range ks {
					ks[i] = row + `."` + k + `"`
				}
				// no OR IGNORE: the statement that fires the trigger
				// would put its own conflict clause in its place
				k := `json_array(` + strings.Join(ks, ", ") + `)`
				return `INSERT INTO ` + changesTable + ` (tbl, k) SELECT '` + t.name + `', ` + k + ` WHERE NOT EXISTS (SELECT 1 FROM ` +
					changesTable + ` WHERE tbl = '` + t.name + `' AND k = ` + k + `);`
			}
			for _, on := range []struct{ op, body string }{
				{"INSERT", key("NEW")}, {"UPDATE", key("OLD") + " " + key("NEW")}, {"DELETE", key("OLD")},
			} {
				stmts = append(stmts, `CREATE TRIGGER IF NOT EXISTS "`+trackPrefix+t.name+`_`+strings.ToLower(on.op)+`" AFTER `+on.op+
					` ON `+t.name+` BEGIN `+on.body+` END`)
			}
		}
	}
	if err := inOneTaking(ctx, db, stmts, retried); err != nil {
		return fmt.Errorf("copy: track the changes of %s: %w", db.Path(), err)
	}
	return nil
}

// lockCarried takes every carried table's lock in mode, in one
// statement, waiting for each at most a tenth of the server's default
// deadlock_timeout: in a deadlock with a worker that waited first, the
// copy gives up before the server would choose which one to end, so the
// worker's write is never the one refused.
func lockCarried(mode string) []string {
	names := make([]string, len(copyTables))
	for i, t := range copyTables {
		names[i] = t.name
	}
	return []string{`SET LOCAL lock_timeout = '100ms'`, `LOCK TABLE ` + strings.Join(names, ", ") + ` IN ` + mode + ` MODE`}
}

// inOneTaking runs stmts in one transaction (inOne) until the database
// grants their locks: a refusal (on PostgreSQL a lock not free or a
// deadlock, on SQLite a writer past the busy timeout) is said to retried
// and tried again after a pause that grows, until ctx ends.
func inOneTaking(ctx context.Context, db *store.DB, stmts []string, retried func(error)) error {
	pause := 10 * time.Millisecond
	for {
		err := inOne(ctx, db, stmts)
		if err == nil || !store.Contended(err) {
			return err
		}
		retried(err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (stopped while the worker's writes held the tables: %v)", ctx.Err(), err)
		case <-clock.After(pause + rand.N(pause)):
		}
		pause = min(2*pause, time.Second)
	}
}

// Tracked says whether db notes its changes for a copy (Track).
func Tracked(ctx context.Context, db *store.DB) (bool, error) {
	q := `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`
	if db.Postgres() {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, q, changesTable).Scan(&n); err != nil {
		return false, fmt.Errorf("copy: does %s track its changes: %w", db.Path(), err)
	}
	return n > 0, nil
}

// Untrack drops what Track made: db notes its changes no more. It takes
// its locks as Track does.
func Untrack(ctx context.Context, db *store.DB, retried func(error)) error {
	var stmts []string
	if db.Postgres() {
		stmts = lockCarried("ACCESS EXCLUSIVE")
	}
	for _, t := range copyTables {
		if db.Postgres() {
			stmts = append(stmts, `DROP TRIGGER IF EXISTS `+trackPrefix+t.name+` ON `+t.name)
			continue
		}
		for _, op := range []string{"insert", "update", "delete"} {
			stmts = append(stmts, `DROP TRIGGER IF EXISTS "`+trackPrefix+t.name+`_`+op+`"`)
		}
	}
	stmts = append(stmts, `DROP TABLE IF EXISTS `+changesTable)
	if db.Postgres() {
		stmts = append(stmts, `DROP FUNCTION IF EXISTS `+trackPrefix+`row()`)
	}
	if err := inOneTaking(ctx, db, stmts, retried); err != nil {
		return fmt.Errorf("copy: stop tracking the changes of %s: %w", db.Path(), err)
	}
	return nil
}

// Carried is what Carry did.
type Carried struct {
	Keys    int64 // the changed keys it read
	Written int64 // rows written as the source holds them
	Deleted int64 // rows the source no longer holds, deleted
}

// Carry writes into each of dsts, as src now holds them, the rows whose
// keys src noted since Track, each destination in one transaction, and
// then forgets those keys on src. src must have no writer meanwhile: a
// copy carries once its worker has stopped.
func Carry(ctx context.Context, src *store.DB, dsts ...*store.DB) (Carried, error) {
	var c Carried
	keys, err := changedKeys(ctx, src)
	if err != nil {
		return c, err
	}
	type change struct {
		t       carried
		cols    []string
		rows    [][]any // as the source holds them
		deleted [][]any // keys it no longer holds
	}
	var changes []change
	from := sideOf(src)
	for _, t := range copyTables {
		ks := keys[t.name]
		if len(ks) == 0 {
			continue
		}
		c.Keys += int64(len(ks))
		ch := change{t: t}
		if ch.cols, err = from.d.columns(ctx, src.Reader(), t.name); err != nil {
			return c, err
		}
		kn := strings.Split(t.key, ", ")
		at := keyIndexes(ch.cols, kn)
		for part := range slices.Chunk(ks, copyBatch) {
			rows, err := rowsByKey(ctx, src.Reader(), t, ch.cols, kn, part)
			if err != nil {
				return c, fmt.Errorf("copy: read the changed rows of %s: %w", t.name, err)
			}
			held := map[string]bool{}
			for _, r := range rows {
				k := make([]any, len(at))
				for i, j := range at {
					k[i] = r[j]
				}
				held[keyText(k)] = true
			}
			ch.rows = append(ch.rows, rows...)
			for _, k := range part {
				if !held[keyText(k)] {
					ch.deleted = append(ch.deleted, k)
				}
			}
		}
		c.Written += int64(len(ch.rows))
		c.Deleted += int64(len(ch.deleted))
		changes = append(changes, ch)
	}
	for _, dst := range dsts {
		to := sideOf(dst)
		err := to.inCarry(ctx, func(tx *sql.Tx) error {
			for _, ch := range slices.Backward(changes) {
				for part := range slices.Chunk(ch.deleted, copyBatch) {
					if err := to.d.dropping(ctx, tx, ch.t.name, part); err != nil {
						return fmt.Errorf("%s: %w", ch.t.name, err)
					}
					if err := deleteKeys(ctx, tx, ch.t, part); err != nil {
						return fmt.Errorf("%s: %w", ch.t.name, err)
					}
				}
			}
			for _, ch := range changes {
				whole := ch.t
				whole.whole = true
				for part := range slices.Chunk(ch.rows, copyBatch) {
					q, args := insertRows(whole, ch.cols, part)
					if _, err := tx.ExecContext(ctx, q, args...); err != nil {
						return fmt.Errorf("%s: %w", ch.t.name, err)
					}
					if err := to.d.carried(ctx, tx, ch.t.name, ch.cols, part); err != nil {
						return fmt.Errorf("%s: %w", ch.t.name, err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return c, fmt.Errorf("copy: carry the changed rows into %s: %w", dst.Path(), err)
		}
	}
	if _, err := src.Writer().ExecContext(ctx, `DELETE FROM `+changesTable); err != nil {
		return c, fmt.Errorf("copy: forget the changes carried from %s: %w", src.Path(), err)
	}
	return c, nil
}

// changedKeys are the keys src noted, by table, each as its values.
func changedKeys(ctx context.Context, src *store.DB) (map[string][][]any, error) {
	rows, err := src.Reader().QueryContext(ctx, `SELECT tbl, k FROM `+changesTable+` ORDER BY tbl, k`)
	if err != nil {
		return nil, fmt.Errorf("copy: the changes noted on %s: %w", src.Path(), err)
	}
	defer rows.Close()
	out := map[string][][]any{}
	for rows.Next() {
		var tbl, k string
		if err := rows.Scan(&tbl, &k); err != nil {
			return nil, err
		}
		d := json.NewDecoder(bytes.NewReader([]byte(k)))
		d.UseNumber()
		var vals []any
		if err := d.Decode(&vals); err != nil {
			return nil, fmt.Errorf("copy: a changed key of %s on %s (%s): %w", tbl, src.Path(), k, err)
		}
		for i, v := range vals {
			if n, ok := v.(json.Number); ok {
				if vals[i], err = n.Int64(); err != nil {
					vals[i], _ = n.Float64()
				}
			}
		}
		if tbl == "ledger_notes" && len(vals) == 1 && strings.HasPrefix(fmt.Sprint(vals[0]), "copy_") {
			continue // a copy's own notes (notCopyNote)
		}
		out[tbl] = append(out[tbl], vals)
	}
	return out, rows.Err()
}

// keyText is a key's values as one comparable text.
func keyText(k []any) string {
	parts := make([]string, len(k))
	for i, v := range k {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		parts[i] = fmt.Sprintf("%T:%v", v, v)
		if _, ok := v.(string); !ok {
			parts[i] = fmt.Sprintf("n:%v", v)
		}
	}
	return strings.Join(parts, "\x00")
}

// rowsByKey reads t's rows holding keys.
func rowsByKey(ctx context.Context, q reader, t carried, cols, kn []string, keys [][]any) ([][]any, error) {
	where, args := keysWhere(kn, keys)
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(cols, "")+` FROM `+t.name+` WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, len(cols))
}

// deleteKeys deletes t's rows holding keys.
func deleteKeys(ctx context.Context, tx *sql.Tx, t carried, keys [][]any) error {
	where, args := keysWhere(strings.Split(t.key, ", "), keys)
	_, err := tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE `+where, args...)
	return err
}

// keysWhere is a condition that holds for the rows of keys, one term a
// key (each side types its parameters by the columns they meet).
func keysWhere(kn []string, keys [][]any) (string, []any) {
	eq := make([]string, len(kn))
	for i, k := range kn {
		eq[i] = `"` + k + `" = ?`
	}
	one := "(" + strings.Join(eq, " AND ") + ")"
	terms := make([]string, len(keys))
	args := make([]any, 0, len(keys)*len(kn))
	for i, k := range keys {
		terms[i] = one
		args = append(args, k...)
	}
	return strings.Join(terms, " OR "), args
}

// inCarry runs carry in one transaction of s's writer, with the rollup's
// triggers held back: the rollup's rows are carried as the source holds
// them.
func (s side) inCarry(ctx context.Context, carry func(*sql.Tx) error) error {
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.d.startCopy(ctx, tx); err != nil {
		return err
	}
	if err := carry(tx); err != nil {
		return err
	}
	if err := s.d.endCarry(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
