package ingest

import (
	"fmt"
	"sort"
	"strings"
)

// CategoryNames are the names people give the YouTube video categories that
// chart=mostPopular takes as videoCategoryId, by id. The ids are the
// upstream's (videoCategories.list); a region may lack some of them.
var CategoryNames = map[string]string{
	"1": "film", "2": "autos", "10": "music", "15": "pets", "17": "sports",
	"19": "travel", "20": "gaming", "22": "people", "23": "comedy",
	"24": "entertainment", "25": "news", "26": "howto", "27": "education",
	"28": "science", "30": "movies", "44": "trailers",
}

// CategoryID reads a category as a user writes it: an id ("10") or a name
// ("music", any case). "" and "all" are the unfiltered chart, id "".
func CategoryID(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "all" {
		return "", nil
	}
	if _, ok := CategoryNames[s]; ok {
		return s, nil
	}
	for id, name := range CategoryNames {
		if name == s {
			return id, nil
		}
	}
	names := make([]string, 0, len(CategoryNames))
	for _, n := range CategoryNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown category %q: want an id or one of all, %s", s, strings.Join(names, ", "))
}

// CategoryName is how a chart's category reads to people: its name, or its
// id when it has none ("" stays "", the unfiltered chart).
func CategoryName(id string) string {
	if name, ok := CategoryNames[id]; ok {
		return name
	}
	return id
}
