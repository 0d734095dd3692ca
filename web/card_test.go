package web

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// The JSON card is the store's table of a video's fields: each field the
// table names for the card is on it under that name, with the video's
// value, and the card shows nothing else.
func TestVideoCardIsTheTable(t *testing.T) {
	var v ingest.Video
	rv := reflect.ValueOf(&v).Elem()
	want := map[string]any{}
	for _, f := range store.VideoFields() {
		if f.JSON == "" {
			continue
		}
		switch f.Kind() {
		case "text":
			rv.FieldByName(f.Go).SetString(f.Column + "-value")
			want[f.JSON] = f.Column + "-value"
		case "time":
			at := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
			rv.FieldByName(f.Go).Set(reflect.ValueOf(at))
			want[f.JSON] = at.Format(time.RFC3339)
		default:
			t.Fatalf("field %s: the card shows text and times, not a %s", f.Column, f.Kind())
		}
	}
	b, err := json.Marshal(CardOf(v))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("card %s\nwant the table's %v", b, want)
	}
}
