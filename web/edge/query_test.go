package edge

import "testing"

func TestCanonicalQueryKeepsWhatTheRouteReadsSorted(t *testing.T) {
	t.Parallel()
	keep := []string{"category", "limit", "sort"}
	for _, c := range []struct{ raw, want string }{
		{"", ""},
		{"utm_source=news&x=1", ""},
		{"sort=views&category=10", "category=10&sort=views"},
		{"category=10&sort=views", "category=10&sort=views"},
		{"fbclid=abc&limit=5&&sort=rank&gclid=", "limit=5&sort=rank"},
		{"sort=views&sort=rank", "sort=rank"},
		{"%63ategory=10&sort", "sort"},
		{"Sort=views", ""},
	} {
		if got := CanonicalQuery(c.raw, keep); got != c.want {
			t.Errorf("CanonicalQuery(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}
