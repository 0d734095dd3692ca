package dbcopy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
)

// Sum is a table's rows on one side of a copy and the hash of them in the
// key's order (hex, shortened).
type Sum struct {
	Rows int64
	Hash string
}

// TableSums is a table's sums on both sides.
type TableSums struct {
	Table          string
	Source, Target Sum
}

// Same says whether both sides agree.
func (t TableSums) Same() bool { return t.Source == t.Target }

// sumBoth sums every table on the source (through q, the copy's snapshot)
// and on the target (through tq).
func sumBoth(ctx context.Context, q reader, from, to side, tq reader) ([]TableSums, error) {
	src, err := sumAll(ctx, q, from.d)
	if err != nil {
		return nil, fmt.Errorf("sum source %w", err)
	}
	dst, err := sumAll(ctx, tq, to.d)
	if err != nil {
		return nil, fmt.Errorf("sum target %w", err)
	}
	out := make([]TableSums, len(copyTables))
	for i, t := range copyTables {
		out[i] = TableSums{Table: t.name, Source: src[i], Target: dst[i]}
	}
	return out, nil
}

// sumAll sums every table a copy carries, in copyTables' order, through q.
func sumAll(ctx context.Context, q reader, d dialect) ([]Sum, error) {
	out := make([]Sum, len(copyTables))
	for i, t := range copyTables {
		var err error
		if out[i], err = sumTable(ctx, q, d, t); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return out, nil
}

// sumTable counts t's rows and hashes them in the key's order, column by
// column in the order of their names, each value in one text both
// databases give alike: a NULL apart from any text, an integer in decimal,
// text as its bytes with their length before them.
func sumTable(ctx context.Context, q reader, d dialect, t carried) (Sum, error) {
	cols, err := d.columns(ctx, q, t.name)
	if err != nil {
		return Sum{}, err
	}
	slices.Sort(cols)
	rows, err := q.QueryContext(ctx, `SELECT `+quoted(cols, "")+` FROM `+t.name+t.filter("")+` ORDER BY `+d.keyOrder(strings.Split(t.key, ", ")))
	if err != nil {
		return Sum{}, err
	}
	defer rows.Close()
	h := sha256.New()
	var n int64
	row := make([]any, len(cols))
	ptrs := pointers(row)
	for ; rows.Next(); n++ {
		if err := rows.Scan(ptrs...); err != nil {
			return Sum{}, err
		}
		for _, v := range row {
			writeValue(h, v)
		}
	}
	if err := rows.Err(); err != nil {
		return Sum{}, err
	}
	return Sum{Rows: n, Hash: hex.EncodeToString(h.Sum(nil))[:16]}, nil
}

func writeValue(h hash.Hash, v any) {
	switch v := v.(type) {
	case nil:
		h.Write([]byte{'N'})
	case int64:
		fmt.Fprintf(h, "I%d;", v)
	case string:
		fmt.Fprintf(h, "S%d:%s", len(v), v)
	case []byte:
		fmt.Fprintf(h, "S%d:%s", len(v), v)
	case float64:
		fmt.Fprintf(h, "F%s;", strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		if v {
			fmt.Fprint(h, "I1;")
		} else {
			fmt.Fprint(h, "I0;")
		}
	default:
		fmt.Fprintf(h, "?%v;", v)
	}
}
