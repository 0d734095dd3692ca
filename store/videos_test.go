package store

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// fullVideo is a video with every field of ingest.Video set.
func fullVideo(id string) ingest.Video {
	v := vid(id, "derby "+id)
	v.Thumbnail = "https://i.ytimg.com/vi/" + id + "/default.jpg"
	v.AudioLanguage, v.Language = "hi", "hi-Latn"
	return v
}

// Every reader of a whole video (a search's hits, a chart's entries, an
// export's rows by run and by day) reads the same video as Video does,
// every field of it: the one read model (videoColumns, scanVideo). A field
// added to ingest.Video and stored by the sink but left out of the read
// model reads back zero here, in every reader at once.
func TestReadModelReachesEveryReader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id := run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 1, t0, fullVideo("a")))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
			t.Fatal(err)
		}
		want, ok, err := db.Video(ctx, "a")
		if err != nil || !ok {
			t.Fatalf("Video = %v, %v", ok, err)
		}
		fields := reflect.ValueOf(want.Video)
		for i := range fields.NumField() {
			if fields.Field(i).IsZero() {
				t.Errorf("Video reads back %s empty: the sink or the read model drops it (or fullVideo does not set it)",
					fields.Type().Field(i).Name)
			}
		}
		got := map[string]StoredVideo{}
		hits, err := db.Search(ctx, "derby", SearchOptions{Region: "IN", Language: "hi"})
		if err != nil || len(hits) != 1 {
			t.Fatalf("Search = %d hits, %v", len(hits), err)
		}
		got["search hit"] = hits[0].StoredVideo
		c, err := db.Chart(ctx, ChartQuery{Region: "IN", Category: "", Language: "hi", At: time.Time{}, Limit: 10})
		if err != nil || len(c.Entries) != 1 {
			t.Fatalf("ChartIn = %d entries, %v", len(c.Entries), err)
		}
		got["chart entry"] = c.Entries[0].StoredVideo
		day := t0.Truncate(24 * time.Hour)
		for _, perDay := range []bool{false, true} {
			err := db.Export(ctx, ExportFilter{Since: day, Until: day.Add(24 * time.Hour), PerDay: perDay}, func(r ExportRow) error {
				got[map[bool]string{false: "export row", true: "per-day export row"}[perDay]] = r.StoredVideo
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 4 {
			t.Fatalf("read %d of the four readers: %v", len(got), got)
		}
		for reader, v := range got {
			if !reflect.DeepEqual(v, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", reader, v, want)
			}
		}
	})
}

// decodeTags' fast path cuts plain arrays out of the text; it must agree
// with encoding/json on every input, including the ones it hands over.
func FuzzDecodeTags(f *testing.F) {
	for _, seed := range []string{
		`[]`, `["a"]`, `["derby","Ліга Чемпіонів","🔥goal"]`, ` [ "a" , "b" ] `,
		`["say \"hi\""]`, `["a\u00e9"]`, `["\ud83d\ude00"]`, `null`, ``, `[`, `["a",]`, `["a"]]`,
		`["a" "b"]`, "[\"tab\there\"]", "\u00a0[\"a\"]", "[\"\xff\"]", `[1]`, `{"a":1}`, `["a"] x`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		wantErr := json.Unmarshal([]byte(s), &want)
		got, err := decodeTags(s)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeTags(%q): error %v, encoding/json's %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("decodeTags(%q) = %q, encoding/json %q", s, got, want)
		}
	})
}

// Tags as the store writes them come back as they went in, through the
// fast path.
func TestDecodeTagsWrittenByStore(t *testing.T) {
	for _, tags := range [][]string{nil, {}, {"a"}, {"derby", "Ліга", "🔥goal", "a,b", `q"uote`, "back\\slash"}} {
		text, err := tagsJSON(tags)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeTags(text)
		if err != nil {
			t.Fatalf("decodeTags(%s): %v", text, err)
		}
		if len(got) != len(tags) || (len(tags) > 0 && !reflect.DeepEqual(got, tags)) {
			t.Fatalf("decodeTags(%s) = %q, want %q", text, got, tags)
		}
		if got == nil {
			t.Fatalf("decodeTags(%s) = nil, want an empty list", text)
		}
	}
}
