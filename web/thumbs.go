package web

import (
	"net/url"
	"path"
	"strconv"
	"strings"
)

// wideThumbnail is the 16:9 picture of a video whose stored thumbnail is
// on ThumbnailHost: the upstream sends the 4:3 one (120x90, with black
// bars above and below a 16:9 video), while mqdefault.jpg beside it is
// 320x180 without bars, large enough for every row the pages draw. ""
// for a thumbnail the policy does not let the page load.
func wideThumbnail(raw string) string {
	s := thumbnail(raw)
	if s == "" {
		return ""
	}
	u, _ := url.Parse(s) // thumbnail parsed it already
	dir, file := path.Split(u.Path)
	if strings.HasPrefix(dir, "/vi/") && strings.Count(dir, "/") == 3 && path.Ext(file) == ".jpg" {
		u.Path, u.RawQuery = dir+"mqdefault.jpg", ""
	}
	return u.String()
}

// jump is one link of a chart's row bands: a place in a long chart one
// tap away.
type jump struct {
	Label, Href string
}

// rowBands are where a chart's bands start, as the charts are read: the
// top 10, then to 50, 100 and 200.
var rowBands = []int{1, 11, 51, 101}

// jumps are the bands of a chart of n rows, each named by the rows it
// holds; none for a chart that fits its first band.
func jumps(n int) []jump {
	if n <= 10 {
		return nil
	}
	var js []jump
	for i, from := range rowBands {
		if from > n {
			break
		}
		to := n
		if i+1 < len(rowBands) {
			to = min(n, rowBands[i+1]-1)
		}
		label := strconv.Itoa(from) + "–" + strconv.Itoa(to)
		if from == 1 {
			label = "Top " + strconv.Itoa(to)
		}
		js = append(js, jump{Label: label, Href: "#row-" + strconv.Itoa(from)})
	}
	return js
}
