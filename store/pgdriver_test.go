package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`a = ?1 AND b = ?12 OR c = ?1`, `a = $1 AND b = $12 OR c = $1`},
		{`x = '?' AND y = ? AND z = "a?b"`, `x = '?' AND y = $1 AND z = "a?b"`},
		{`o->>'id' = ?2`, `o->>'id' = $2`},
		{`'it''s ?' || ?`, `'it''s ?' || $1`},
		{"-- a video's words\nWHERE a = ? -- and ?'s\nAND b = ?", "-- a video's words\nWHERE a = $1 -- and ?'s\nAND b = $2"},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// tsQuery writes the operators FTS5 is given, with the same precedence.
func TestTSQuery(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{`world cup`, `('world') & ('cup')`},
		{`"world cup"`, `('world' <-> 'cup')`},
		{`skate*`, `('skate':*)`},
		{`a OR b NOT c`, `('a') | ('b') & !('c')`},
		{`don't`, `('don' <-> 't')`},
		{`焼鳥屋`, `('焼鳥' <-> '鳥屋')`},
	} {
		pq, err := parseQuery(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := pq.tsQuery(); got != tc.want {
			t.Errorf("tsQuery(%q) = %s, want %s", tc.q, got, tc.want)
		}
	}
}

// A lexeme with a quote or a backslash is written so that the server
// reads it back as it was.
func TestTSLexeme(t *testing.T) {
	if got, want := tsLexeme(`it's\`), `'it''s\\'`; got != want {
		t.Errorf("tsLexeme = %s, want %s", got, want)
	}
}
