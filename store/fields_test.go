package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// The table of a video's fields is the videos table of both migrated
// schemas: every column but the row's own (vid, first and last seen, the
// index's) is in it, with the type each database's migrations give it.
func TestVideoFieldsAreTheMigratedSchema(t *testing.T) {
	eachStore(t, func(t *testing.T, db *DB) {
		q := `SELECT name, type FROM pragma_table_info('videos')`
		if isPG(db) {
			q = `SELECT column_name, upper(data_type) FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'videos'`
		}
		rows, err := db.Writer().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			got[name] = typ
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, own := range []string{"vid", "first_seen_ms", "last_seen_ms", "retitled_ms"} {
			delete(got, own)
		}
		for _, f := range videoFields {
			want := f.SQLite
			if isPG(db) {
				want = f.Postgres
			}
			if typ, ok := got[f.Column]; !ok {
				t.Errorf("field %s: no such column in the migrated videos table", f.Column)
			} else if typ != want {
				t.Errorf("field %s: the migrations make it %s, the table says %s", f.Column, typ, want)
			}
			delete(got, f.Column)
		}
		if len(got) > 0 {
			t.Errorf("columns of videos the table of fields does not declare: %v", got)
		}
	})
}

// keptByAnUpdate are the fields a page without them does not clear: the
// key, the publication time and the thumbnail; every
// other field is the latest page's.
var keptByAnUpdate = map[string]bool{"id": true, "published_at_ms": true, "thumbnail": true}

// Every field of ingest.Video is declared once, and every field set goes
// through both databases' writes and the read model unchanged; an update
// keeps what it keeps.
func TestVideoFieldsRoundTrip(t *testing.T) {
	vt := reflect.TypeFor[ingest.Video]()
	declared := map[string]bool{}
	for _, f := range videoFields {
		declared[f.Go] = true
	}
	for i := range vt.NumField() {
		if !declared[vt.Field(i).Name] {
			t.Errorf("ingest.Video.%s is not in the table of a video's fields (store/fields.go)", vt.Field(i).Name)
		}
	}
	// every field a value of its own
	full := func(id string) ingest.Video {
		var v ingest.Video
		rv := reflect.ValueOf(&v).Elem()
		for n, f := range videoFields {
			fv := rv.FieldByIndex(f.index)
			switch f.kind {
			case textField:
				fv.SetString(f.Column + "-value")
			case countField:
				c := int64(1000 + n)
				fv.Set(reflect.ValueOf(&c))
			case timeField:
				fv.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC).Add(time.Duration(n) * time.Hour)))
			case tagsField:
				fv.Set(reflect.ValueOf([]string{f.Column, "two words"}))
			}
		}
		v.ID = id
		return v
	}
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		save := func(at time.Time, videos ...ingest.Video) {
			t.Helper()
			run, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePage(ctx, run, ingest.Page{Kind: ingest.Trending, Region: "US", Number: 1, Videos: videos, Fetched: at}); err != nil {
				t.Fatal(err)
			}
		}
		want := full("fields0001")
		save(at, want)
		got, ok, err := db.Video(ctx, want.ID)
		if err != nil || !ok {
			t.Fatalf("video: %v %v", ok, err)
		}
		if !reflect.DeepEqual(got.Video, want) {
			t.Errorf("read back\n got  %+v\n want %+v", got.Video, want)
		}
		// a later page without the kept fields keeps them; the others
		// take the page's (empty) values
		bare := ingest.Video{ID: want.ID}
		save(at.Add(time.Hour), bare)
		got, _, err = db.Video(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		gv, wv := reflect.ValueOf(got.Video), reflect.ValueOf(want)
		for _, f := range videoFields {
			g := gv.FieldByIndex(f.index).Interface()
			kept := keptByAnUpdate[f.Column]
			w := reflect.ValueOf(bare).FieldByIndex(f.index).Interface()
			if kept {
				w = wv.FieldByIndex(f.index).Interface()
			}
			if f.kind == tagsField && len(w.([]string)) == 0 {
				if len(g.([]string)) != 0 {
					t.Errorf("field %s after an update: %v, want none", f.Column, g)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("field %s after an update (%v): %v, want %v", f.Column, f.Update, g, w)
			}
		}
	})
}
