package dbcopy

// SQLite's file format read by hand, for a salvage: a table's b-tree
// walked from its root page as sqlite_dbpage hands the pages over, each
// page checked against its kind before its cells are read, so that a page
// overwritten by anything else is skipped with what hangs under it rather
// than stopping the walk (https://www.sqlite.org/fileformat2.html).

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// The b-tree page kinds, as a page's first byte says.
const (
	indexInterior = 2
	tableInterior = 5
	indexLeaf     = 10
	tableLeaf     = 13
)

// pages reads a SQLite file's pages through its sqlite_dbpage table, which
// reads them through SQLite's pager (the WAL's frames included) and never
// checks what they hold.
type pages struct {
	q      reader
	size   int   // bytes a page
	usable int   // size less the bytes reserved at each page's end
	count  int64 // pages in the file
}

// fileHeader is the size of the file's header, before page 1's b-tree
// header.
const fileHeader = 100

func openPages(ctx context.Context, q reader) (*pages, error) {
	p := &pages{q: q}
	if err := q.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&p.count); err != nil {
		return nil, fmt.Errorf("page count: %w", err)
	}
	var first []byte
	if err := q.QueryRowContext(ctx, `SELECT data FROM sqlite_dbpage WHERE pgno = 1`).Scan(&first); err != nil {
		return nil, fmt.Errorf("page 1: %w", err)
	}
	if len(first) < fileHeader {
		return nil, fmt.Errorf("page 1: %d bytes, less than the file's header", len(first))
	}
	p.size = len(first)
	p.usable = p.size - int(first[20])
	if p.usable < 480 {
		return nil, fmt.Errorf("page 1: %d usable bytes a page: not a SQLite file's header", p.usable)
	}
	return p, nil
}

// read returns page no, or nil when it cannot be read whole.
func (p *pages) read(ctx context.Context, no int64) ([]byte, error) {
	if no < 1 || no > p.count {
		return nil, nil
	}
	var b []byte
	err := p.q.QueryRowContext(ctx, `SELECT data FROM sqlite_dbpage WHERE pgno = ?`, no).Scan(&b)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || len(b) != p.size {
		return nil, nil
	}
	return b, nil
}

// walked is what a walk of one b-tree met.
type walked struct {
	good, bad int // pages read as their kind; pages that were not
	// broken are the entries of good pages whose record did not read
	// whole (bytes overwritten within a page, an overflow page lost).
	broken int64
}

// walk visits the b-tree at root, a table's (rowids) or an index's (a
// WITHOUT ROWID table's rows), handing each entry to row: its rowid (0 in
// an index) and its record's values. A page that does not read as a page
// of the tree is counted bad and skipped with its subtree.
func (p *pages) walk(ctx context.Context, root int64, index bool, row func(rowid int64, values []any)) (walked, error) {
	var w walked
	seen := map[int64]bool{}
	stack := []int64{root}
	for len(stack) > 0 {
		no := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[no] {
			w.bad++ // a loop: a pointer on a damaged page
			continue
		}
		seen[no] = true
		b, err := p.read(ctx, no)
		if err != nil {
			return w, err
		}
		kids, cells, ok := p.parse(no, b, index)
		if !ok {
			w.bad++
			continue
		}
		w.good++
		stack = append(stack, kids...)
		for _, c := range cells {
			rec, err := p.payload(ctx, c)
			if err != nil {
				return w, err
			}
			if values, ok := decodeRecord(rec); ok {
				row(c.rowid, values)
			} else {
				w.broken++
			}
		}
	}
	return w, nil
}

// cell is one entry of a page: its rowid (a table's), its payload's size
// and the part of it on the page, and the first overflow page of the rest.
type cell struct {
	rowid    int64
	size     int
	local    []byte
	overflow int64
}

// parse reads page no (b) as a page of a table's tree, or an index's: the
// child pages it points to and its entries; ok false when it is not one.
func (p *pages) parse(no int64, b []byte, index bool) (kids []int64, cells []cell, ok bool) {
	if b == nil {
		return nil, nil, false
	}
	off := 0
	if no == 1 {
		off = fileHeader
	}
	kind := b[off]
	leaf := kind == tableLeaf || kind == indexLeaf
	if index && kind != indexInterior && kind != indexLeaf || !index && kind != tableInterior && kind != tableLeaf {
		return nil, nil, false
	}
	head := off + 12
	if leaf {
		head = off + 8
	}
	n := int(binary.BigEndian.Uint16(b[off+3:]))
	if head+2*n > p.usable {
		return nil, nil, false
	}
	if !leaf {
		kids = append(kids, int64(binary.BigEndian.Uint32(b[off+8:])))
	}
	for i := range n {
		at := int(binary.BigEndian.Uint16(b[head+2*i:]))
		if at < head+2*n || at >= p.usable {
			return nil, nil, false
		}
		kid, c, hasCell, ok := p.cell(b[at:p.usable], kind)
		if !ok {
			return nil, nil, false
		}
		if kid != 0 {
			kids = append(kids, kid)
		}
		if hasCell {
			cells = append(cells, c)
		}
	}
	for _, k := range kids {
		if k < 1 || k > p.count {
			return nil, nil, false
		}
	}
	return kids, cells, true
}

// cell reads one cell of a page of kind: the child it points to (0 on a
// leaf) and its entry (none on a table's interior page, which holds only
// rowids that bound its children).
func (p *pages) cell(b []byte, kind byte) (kid int64, c cell, hasCell, ok bool) {
	if kind == tableInterior || kind == indexInterior {
		if len(b) < 4 {
			return 0, c, false, false
		}
		kid, b = int64(binary.BigEndian.Uint32(b)), b[4:]
	}
	if kind == tableInterior {
		_, n := varint(b)
		return kid, c, false, n > 0
	}
	size, n := varint(b)
	if n == 0 || size > math.MaxInt32 {
		return 0, c, false, false
	}
	b, c.size = b[n:], int(size)
	if kind == tableLeaf {
		rowid, n := varint(b)
		if n == 0 {
			return 0, c, false, false
		}
		b, c.rowid = b[n:], int64(rowid)
	}
	local := p.local(c.size, kind != tableLeaf)
	if len(b) < local || local < c.size && len(b) < local+4 {
		return 0, c, false, false
	}
	c.local = b[:local]
	if local < c.size {
		c.overflow = int64(binary.BigEndian.Uint32(b[local:]))
	}
	return kid, c, true, true
}

// local is how much of a payload of size bytes its page holds, the rest
// on overflow pages, by the file format's rule for tables and indexes.
func (p *pages) local(size int, index bool) int {
	u := p.usable
	most := u - 35
	if index {
		most = (u-12)*64/255 - 23
	}
	if size <= most {
		return size
	}
	least := (u-12)*32/255 - 23
	if k := least + (size-least)%(u-4); k <= most {
		return k
	}
	return least
}

// payload is c's whole payload, read on from its overflow pages; nil when
// one of them cannot be read.
func (p *pages) payload(ctx context.Context, c cell) ([]byte, error) {
	out := append([]byte(nil), c.local...)
	for next := c.overflow; len(out) < c.size; {
		b, err := p.read(ctx, next)
		if err != nil || b == nil {
			return nil, err
		}
		next = int64(binary.BigEndian.Uint32(b))
		out = append(out, b[4:min(p.usable, 4+c.size-len(out))]...)
	}
	return out, nil
}

// varint reads SQLite's big-endian varint: 0 bytes read when b ends first.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := range 8 {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// decodeRecord reads a record's values: nil, int64, float64, string or
// []byte; ok false when it is not a whole record, or holds text that is
// not UTF-8 (a database of ingest's holds none).
func decodeRecord(rec []byte) (values []any, ok bool) {
	head, n := varint(rec)
	if n == 0 || head < uint64(n) || head > uint64(len(rec)) {
		return nil, false
	}
	body := int(head)
	for at := n; at < int(head); {
		t, k := varint(rec[at:head])
		if k == 0 {
			return nil, false
		}
		at += k
		v, size, ok := value(t, rec[body:])
		if !ok {
			return nil, false
		}
		values, body = append(values, v), body+size
	}
	return values, body == len(rec)
}

// value reads the value of serial type t at b's start, and its size.
func value(t uint64, b []byte) (any, int, bool) {
	switch {
	case t == 0:
		return nil, 0, true
	case t == 8 || t == 9:
		return int64(t - 8), 0, true
	case t == 7:
		if len(b) < 8 {
			return nil, 0, false
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), 8, true
	case t <= 6:
		size := [...]int{0, 1, 2, 3, 4, 6, 8}[t]
		if len(b) < size {
			return nil, 0, false
		}
		return signed(b[:size]), size, true
	case t < 12:
		return nil, 0, false
	}
	size := int((t - 12) / 2)
	if t > math.MaxInt32 || len(b) < size {
		return nil, 0, false
	}
	if t%2 == 0 {
		return append([]byte{}, b[:size]...), size, true
	}
	if !utf8.Valid(b[:size]) {
		return nil, 0, false
	}
	return string(b[:size]), size, true
}

// signed reads a big-endian two's complement integer of len(b) bytes.
func signed(b []byte) int64 {
	var v int64
	if b[0]&0x80 != 0 {
		v = -1
	}
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}
