package store

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/ingestworks/ingest"
)

// SQLite's JSONB (https://sqlite.org/jsonb.html) is what its JSON
// functions parse text into before reading it: a page handed over as
// JSONB is read by each of the page's statements without being parsed
// again at each, and writing it here costs less than escaping text. Each
// element is a header (its type, then its payload's size) and a payload;
// a string's payload is its bytes as they are (TEXTRAW), a number's its
// decimal digits.
const (
	jsonbNull    = 0x0
	jsonbInt     = 0x3
	jsonbText    = 0x7 // a label: a name that needs no escape
	jsonbTextRaw = 0xA
	jsonbArray   = 0xB
	jsonbObject  = 0xC
)

// jsonbHeaderMax is the longest header: a type byte and an 8-byte size.
const jsonbHeaderMax = 9

// jsonbHeader appends the header of an element of type typ whose payload
// is n bytes, in the fewest bytes that hold n.
func jsonbHeader(b []byte, typ byte, n int) []byte {
	switch {
	case n <= 11:
		return append(b, byte(n)<<4|typ)
	case n <= 0xff:
		return append(b, 12<<4|typ, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 13<<4|typ), uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 14<<4|typ), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 15<<4|typ), uint64(n))
}

// jsonbObjectWriter writes one object at a time: its members go to a
// scratch buffer, reused, whose size the object's header then states.
type jsonbObjectWriter struct{ members []byte }

func (w *jsonbObjectWriter) label(name string) {
	w.members = append(jsonbHeader(w.members, jsonbText, len(name)), name...)
}

// text is s as encoding/json would store it: a byte that is not UTF-8
// becomes U+FFFD, as it does in the text JSON PostgreSQL is handed.
func (w *jsonbObjectWriter) text(s string) {
	if !utf8.ValidString(s) {
		var v []byte
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			v = utf8.AppendRune(v, r)
			i += n
		}
		s = string(v)
	}
	w.members = append(jsonbHeader(w.members, jsonbTextRaw, len(s)), s...)
}

func (w *jsonbObjectWriter) int(n int64) {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	w.members = append(jsonbHeader(w.members, jsonbInt, len(d)), d...)
}

func (w *jsonbObjectWriter) null() { w.members = append(w.members, jsonbNull) }

// count is a count, or null where the owner hides it.
func (w *jsonbObjectWriter) count(n *int64) {
	if n == nil {
		w.null()
		return
	}
	w.int(*n)
}

// value writes x, a value as pageValue or a row hands it on.
func (w *jsonbObjectWriter) value(x any) error {
	switch x := x.(type) {
	case nil:
		w.null()
	case string:
		w.text(x)
	case int64:
		w.int(x)
	case *int64:
		w.count(x)
	default:
		return fmt.Errorf("no JSONB value of %T", x)
	}
	return nil
}

// end appends the object to b and readies the writer for the next.
func (w *jsonbObjectWriter) end(b []byte) []byte {
	b = append(jsonbHeader(b, jsonbObject, len(w.members)), w.members...)
	w.members = w.members[:0]
	return b
}

// jsonbArrayOf is an array of n objects, each written by object into b
// with w: room for the longest header is kept before the elements, and
// the header, once their size is known, written just before them.
func jsonbArrayOf(size, n int, object func(i int, w *jsonbObjectWriter, b []byte) ([]byte, error)) ([]byte, error) {
	b := takeJSONB(jsonbHeaderMax + size)
	var w jsonbObjectWriter
	for i := range n {
		var err error
		if b, err = object(i, &w, b); err != nil {
			return nil, err
		}
	}
	head := jsonbHeader(nil, jsonbArray, len(b)-jsonbHeaderMax)
	start := jsonbHeaderMax - len(head)
	copy(b[start:], head)
	return b[start:], nil
}

// jsonbBufs hold the bytes of pages and batches of counts handed to
// SQLite, given back (releaseRows) for the next: the driver copies a blob
// it binds, so the bytes are free once the statements ran, and made afresh
// for every page they were much of what storing one allocated.
var jsonbBufs sync.Pool // of *[]byte

// maxJSONB is the largest buffer kept for the next: one grown past it by
// an unusually large batch goes with it.
const maxJSONB = 4 << 20

// takeJSONB is a buffer of room for n bytes, holding jsonbHeaderMax
// bytes, one given back when it has the room.
func takeJSONB(n int) []byte {
	if p, ok := jsonbBufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:jsonbHeaderMax]
	}
	return make([]byte, jsonbHeaderMax, n)
}

// releaseRows gives back rows, what a dialect's pageRows or statRows made,
// once no statement will read them again; PostgreSQL's text is left to
// the collector.
func releaseRows(rows any) {
	if b, ok := rows.([]byte); ok && cap(b) <= maxJSONB {
		b = b[:0]
		jsonbBufs.Put(&b)
	}
}

// pageJSONB is pageJSON's rows as JSONB, for SQLite: one object per video
// with the table's columns by name (fields.go), then its rank.
func pageJSONB(page ingest.Page) ([]byte, error) {
	first := (max(page.Number, 1) - 1) * PageSize
	return jsonbArrayOf(pageJSONSize(page.Videos), len(page.Videos), func(i int, w *jsonbObjectWriter, b []byte) ([]byte, error) {
		v := &page.Videos[i]
		if v.ID == "" {
			return nil, fmt.Errorf("video %d on the page has no id", i+1)
		}
		for _, f := range videoFields {
			x, err := pageValue(f, v, false)
			if err == nil {
				w.label(f.Column)
				err = w.value(x)
			}
			if err != nil {
				return nil, fmt.Errorf("video field %s: %w", f.Column, err)
			}
		}
		w.label("rank")
		w.int(int64(first + i + 1))
		return w.end(b), nil
	})
}

// statsJSONB is tracking's counts as JSONB, for SQLite: statRow's fields
// by their JSON names.
func statsJSONB(stats []ingest.VideoStats) ([]byte, error) {
	return jsonbArrayOf(len(stats)*96, len(stats), func(i int, w *jsonbObjectWriter, b []byte) ([]byte, error) {
		s := &stats[i]
		w.label("id")
		w.text(s.ID)
		w.label("at")
		w.int(msOf(s.At))
		w.label("views")
		w.int(s.ViewCount)
		w.label("likes")
		w.count(s.LikeCount)
		w.label("comments")
		w.count(s.CommentCount)
		return w.end(b), nil
	})
}
