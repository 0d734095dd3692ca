package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

// realText are titles of the shapes real charts carry (issue 9), one video
// each, with the id a query must find.
var realText = []struct{ id, title, desc string }{
	{"home", "Welcome Home🤴 | Royal Vlog", "A day at the palace"},
	{"crore", "1 Crore🤑 Challenge", "Who wins the money"},
	{"heart", "❤️Love Story – Official Video", "The new single"},
	{"zwj", "Family👨‍👩‍👧Vlog: Sunday", "Kids and parents"},
	{"arabic", "مجنون🤯 حلقة جديدة", "برنامج كوميدي"},
	{"ramen", "🤩拉麵 in Taipei", "Noodles"},
	{"yakitori", "東京の焼鳥屋さんを巡る", "居酒屋めぐり"},
	{"first", "最初のライブ配信", "ファン感謝"},
	{"tainan", "台南美食之旅", "小吃"},
	{"wolf", "หมาป่าในป่าใหญ่", "สารคดี"},
	{"seoul", "서울에서 먹방", "맛집 투어"},
	{"sari", "नई सा\u095cी कलेक्शन", "शादी के लिए"}, // ड़ as the API sends it: U+095C
	{"tamil", "தமிழ் பாடல் 2026", "புதிய பாடல்"},
	{"fussball", "Fußball-WM: Deutschland gewinnt", "Alle Tore"},
	{"kyiv", "Київ вночі", "Прогулянка"},
	{"merci", "Merci❤️ pour tout", "Concert"},
	{"keycap", "Round 1️⃣ Recap", "Boxing"},
	{"persian", "من می\u200cخواهم بروم", "ترانه"},
	{"fullwidth", "ＦＩＦＡ Ｗｏｒｌｄ", "Fullwidth letters"},
}

// scriptsFixture is searchFixture plus realText, stored in IN.
func scriptsFixture(t *testing.T, db *DB) {
	t.Helper()
	searchFixture(t, db)
	var vs []ingest.Video
	for _, r := range realText {
		v := vid(r.id, r.title)
		v.Description, v.ChannelTitle = r.desc, "World Channel"
		vs = append(vs, v)
	}
	run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 2, t0, vs...))
}

// searchTable is query -> the video ids it must find, in any order. Every
// row can fail: each relies on one part of the normalization.
var searchTable = []struct {
	name, q string
	want    []string
}{
	// the existing cases
	{"title word", "highlights", []string{"worldcup"}},
	{"phrase", `"world cup"`, []string{"worldcup", "descmatch"}},
	{"phrase", `"cup of tea"`, []string{"cupworld"}},
	{"phrase in order only", `"cup world"`, nil},
	{"prefix", "skate*", []string{"tagonly"}},
	{"no prefix without star", "skate", nil},
	{"muller", "muller", []string{"muller"}},
	{"MÜLLER", "MÜLLER", []string{"muller"}},
	{"COVID-19", "COVID-19", []string{"covid"}},
	{"AC/DC", "AC/DC", []string{"acdc"}},
	{"don't", "don't", []string{"dont"}},
	{"c++", "c++", []string{"cpp"}},
	{"NOT", "cup NOT tea", []string{"worldcup", "descmatch"}},
	{"hindi whole word", "हिन्दी", []string{"hindi"}},
	// newer emoji and selectors separate words
	{"emoji after a word", "home", []string{"home"}},
	{"emoji after a number word", "crore", []string{"crore"}},
	{"heart with U+FE0F before a word", "love", []string{"heart"}},
	{"ZWJ sequence between words", "family", []string{"zwj"}},
	{"word after a ZWJ sequence", "vlog", []string{"zwj", "home", "chan"}},
	{"arabic glued to emoji", "مجنون", []string{"arabic"}},
	{"han after emoji", "拉麵", []string{"ramen"}},
	{"U+FE0F after a word", "merci", []string{"merci"}},
	{"keycap: U+FE0F and U+20E3 after a digit", `"round 1"`, []string{"keycap"}},
	{"ZWNJ separates", "خواهم", []string{"persian"}},
	// runs without spaces
	{"japanese inside a run", "焼鳥屋", []string{"yakitori"}},
	{"japanese two characters", "最初", []string{"first"}},
	{"katakana inside a run", "ライブ", []string{"first"}},
	{"chinese two characters", "台南", []string{"tainan"}},
	{"chinese inside a run", "美食", []string{"tainan"}},
	{"thai inside a run", "หมาป่า", []string{"wolf"}},
	{"korean word with particle", "서울", []string{"seoul"}},
	{"not across words", "焼鳥巡る", nil},
	// nukta, folding, width
	{"nukta typed as two code points", "सा\u0921\u093cी", []string{"sari"}},
	{"nukta as one code point", "सा\u095cी", []string{"sari"}},
	{"tamil", "பாடல்", []string{"tamil"}},
	{"sharp s as ss", "fussball", []string{"fussball"}},
	{"sharp s as typed", "Fußball", []string{"fussball"}},
	{"capital sharp s", "FUẞBALL", []string{"fussball"}},
	{"cyrillic case", "КИЇВ", []string{"kyiv"}},
	{"fullwidth", "ｗｏｒｌｄ fifa", []string{"fullwidth", "worldcup"}},
}

func TestSearchTable(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		scriptsFixture(t, db)
		ctx := context.Background()
		for _, tc := range searchTable {
			hits, err := db.Search(ctx, tc.q, SearchOptions{})
			if err != nil {
				t.Errorf("%s: Search(%q): %v", tc.name, tc.q, err)
				continue
			}
			got := ids(hits)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("%s: Search(%q) = %v, want %v", tc.name, tc.q, got, want)
			}
		}
	})
}

// TestSnippetMarksOriginal checks the snippet shows the text as sent and
// marks what matched in it.
func TestSnippetMarksOriginal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		scriptsFixture(t, db)
		for _, tc := range []struct{ q, id, want string }{
			{"home", "home", "Welcome [Home]🤴 | Royal Vlog"},
			{"fussball", "fussball", "[Fußball]-WM: Deutschland gewinnt"},
			{"焼鳥屋", "yakitori", "東京の[焼鳥屋]さんを巡る"},
			{"सा\u0921\u093cी", "sari", "नई [सा\u095cी] कलेक्शन"},
			{"love", "heart", "❤️[Love] Story – Official Video"},
			{"muller", "muller", "Thomas [Müller] interview"},
		} {
			hits, err := db.Search(context.Background(), tc.q, SearchOptions{})
			if err != nil || len(hits) == 0 || hits[0].ID != tc.id {
				t.Errorf("Search(%q) = %v, %v; want %s first", tc.q, ids(hits), err, tc.id)
				continue
			}
			if hits[0].Snippet != tc.want {
				t.Errorf("Search(%q) snippet = %q, want %q", tc.q, hits[0].Snippet, tc.want)
			}
			if !strings.Contains(tc.want, "[") {
				t.Errorf("bad test row %q", tc.q)
			}
		}
	})
}

// TestStoredTextUnchanged checks the stored text is byte for byte what was
// sent, emoji, selectors and U+095C included.
func TestStoredTextUnchanged(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		scriptsFixture(t, db)
		for _, r := range realText {
			var title string
			if err := db.Reader().QueryRow(`SELECT title FROM videos WHERE id = ?`, r.id).Scan(&title); err != nil || title != r.title {
				t.Errorf("%s: stored %q (%v), sent %q", r.id, title, err, r.title)
			}
		}
		hits, err := db.Search(context.Background(), "sari", SearchOptions{})
		if err == nil && len(hits) > 0 && hits[0].Title != realText[11].title /* sari */ {
			t.Errorf("search printed %q, want the title as sent", hits[0].Title)
		}
	})
}

// TestIndexIntegrity runs FTS5's own check after inserts, updates and
// re-ingesting the same page.
func TestIndexIntegrity(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		scriptsFixture(t, db)
		a := vid("home", "Renamed 🤴 title")
		run(t, db, ingest.Trending, "IN", t0.Add(1), page(ingest.Trending, "IN", 1, t0.Add(1), a))
		run(t, db, ingest.Trending, "IN", t0.Add(1), page(ingest.Trending, "IN", 1, t0.Add(1), a))
		integrityCheck(t, db)
		ctx := context.Background()
		if hits, _ := db.Search(ctx, "welcome", SearchOptions{}); len(hits) != 0 {
			t.Errorf("old title still found: %v", ids(hits))
		}
		if hits, _ := db.Search(ctx, "renamed", SearchOptions{}); !slices.Equal(ids(hits), []string{"home"}) {
			t.Errorf("new title: %v", ids(hits))
		}
	})
}

// TestUpgradeRebuildsIndex builds a database with schema version 1 holding
// data, opens it with this binary, and finds the words version 1 missed.
func TestUpgradeRebuildsIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(string(v1) + "; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	for i, r := range realText {
		if _, err := old.Exec(`INSERT INTO videos (id, title, description, tags, channel_id, channel_title,
			category_id, duration, view_count, first_seen_ms, last_seen_ms)
			VALUES (?, ?, ?, '["live"]', 'UC1', 'World Channel', '10', 'PT1M', ?, 1, 1)`,
			r.id, r.title, r.desc, 1000+i); err != nil {
			t.Fatal(err)
		}
	}
	var v1Found int
	if err := old.QueryRow(`SELECT count(*) FROM videos_fts WHERE videos_fts MATCH 'home'`).Scan(&v1Found); err != nil || v1Found != 0 {
		t.Fatalf("version 1 finds home %d times (%v): the test would prove nothing", v1Found, err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open version 1 database: %v", err)
	}
	defer db.Close()
	if got := userVersion(t, db); got != SchemaVersion {
		t.Errorf("user_version = %d, want %d", got, SchemaVersion)
	}
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM videos`).Scan(&n); err != nil || n != len(realText) {
		t.Errorf("videos after upgrade = %d (%v), want %d", n, err, len(realText))
	}
	for _, tc := range []struct{ q, want string }{{"home", "home"}, {"焼鳥屋", "yakitori"}, {"fussball", "fussball"},
		{"सा\u0921\u093cी", "sari"}, {"live", "home"}} {
		hits, err := db.Search(ctx, tc.q, SearchOptions{})
		if err != nil || !slices.Contains(ids(hits), tc.want) {
			t.Errorf("after upgrade Search(%q) = %v, %v; want %s", tc.q, ids(hits), err, tc.want)
		}
	}
}

// TestUpgradeProgressBatches upgrades a database larger than a batch:
// every video is indexed across batches (the progress lines are logged).
func TestUpgradeProgressBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	v1, _ := os.ReadFile("testdata/schema_v1.sql")
	old, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(string(v1) + "; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	const total = rebuildBatch + 7
	if _, err := old.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO videos (id, title, description, tags, channel_id, channel_title, category_id,
		  duration, first_seen_ms, last_seen_ms)
		SELECT 'v' || i, 'Video ' || i || ' Straße', '', '[]', 'UC', 'C', '10', 'PT1M', 1, 1 FROM n`, total); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM videos_fts WHERE videos_fts MATCH 'strasse'`).Scan(&n); err != nil || n != total {
		t.Errorf("indexed after upgrade = %d (%v), want %d", n, err, total)
	}
}
