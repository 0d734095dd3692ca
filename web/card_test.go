package web

import (
	"encoding/json"
	"reflect"
	"testing"

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
		if f.Kind() != "text" {
			t.Fatalf("field %s: the card shows text, not a %s", f.Column, f.Kind())
		}
		rv.FieldByName(f.Go).SetString(f.Column + "-value")
		want[f.JSON] = f.Column + "-value"
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
