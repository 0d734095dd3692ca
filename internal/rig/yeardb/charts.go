package yeardb

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// Charts that churn as real ones do. Each region's chart is a row of
// slots as long as fakeyt's chart of that region; a slot holds a video
// for the video's stay, then a new video takes it. Most stays are one to
// seven days, a few last weeks (stay), so a year's chart shows tens of
// thousands of videos, most for days. Now and then a new video is one
// that just entered another region's chart: a hit on several charts.
// Videos are ranked by views, which grow at each video's own rate.

// chartLengths are the default regions' chart lengths (fakeyt.ChartLengths).
var chartLengths = map[string]int{"US": 200, "GB": 77, "DE": 143, "FR": 118, "IN": 200, "BR": 96, "AU": 64, "CA": 84}

// regionLangs says in what languages a region's videos are written, each
// with its weight in percent.
var regionLangs = map[string][]weighted{
	"US": {{"en", 84}, {"es", 8}, {"ko", 3}, {"hi", 2}, {"ja", 2}, {"th", 1}},
	"GB": {{"en", 88}, {"hi", 3}, {"ar", 3}, {"ko", 2}, {"pt", 2}, {"zh", 2}},
	"DE": {{"de", 80}, {"en", 12}, {"ar", 4}, {"ko", 2}, {"ja", 2}},
	"FR": {{"fr", 80}, {"en", 10}, {"ar", 8}, {"ko", 2}},
	"IN": {{"hi", 52}, {"en", 25}, {"ta", 12}, {"bn", 8}, {"ko", 3}},
	"BR": {{"pt", 88}, {"en", 6}, {"es", 4}, {"ko", 2}},
	"AU": {{"en", 88}, {"zh", 4}, {"hi", 3}, {"ko", 3}, {"th", 2}},
	"CA": {{"en", 60}, {"fr", 30}, {"zh", 4}, {"ar", 3}, {"hi", 3}},
}

// chartLength is how many videos region's chart holds: as the fake's
// (chartLengths, fakeyt.ShortCharts), 200 for every other region.
func chartLength(region string) int {
	if n := chartLengths[region]; n > 0 {
		return n
	}
	if n := fakeyt.ShortCharts[region]; n > 0 {
		return n
	}
	return 200
}

// clip is one made-up video: its text, and how its counts grow.
type clip struct {
	v             ingest.Video // counts unset: see at
	base, perHour float64
	likeDiv       int64 // 0: likes hidden
	commentDiv    int64 // 0: comments hidden
}

// at is c with its counts at time t.
func (c *clip) at(t time.Time) ingest.Video {
	v := c.v
	views := c.views(t)
	v.ViewCount = &views
	if c.likeDiv > 0 {
		l := views / c.likeDiv
		v.LikeCount = &l
	}
	if c.commentDiv > 0 {
		n := views / c.commentDiv
		v.CommentCount = &n
	}
	return v
}

func (c *clip) views(t time.Time) int64 {
	return int64(c.base + c.perHour*max(0, t.Sub(c.v.PublishedAt).Hours()))
}

// slot is one place in a chart: its video, until the hour it leaves.
type slot struct {
	c     *clip
	until int
}

// world is every region's chart, hour by hour from start.
type world struct {
	r      *rand.Rand
	start  time.Time
	lex    map[string]*lexicon
	slots  map[string][]slot
	clips  map[string]*clip
	recent []*clip // the latest new videos, for hits on several charts
	made   uint64
}

func newWorld(seed uint64, regions []string, start time.Time) *world {
	w := &world{r: rand.New(rand.NewPCG(seed, 0x7965617264622d31)), start: start,
		lex: map[string]*lexicon{}, slots: map[string][]slot{}, clips: map[string]*clip{}}
	for code := range langSpecs {
		w.lex[code] = newLexicon(code, langSpecs[code], seed)
	}
	for _, region := range regions {
		for _, l := range langsOf(region) {
			if w.lex[l.code] == nil {
				w.lex[l.code] = newLexicon(l.code, sampled(l.code), seed)
			}
		}
		n := chartLength(region)
		w.slots[region] = make([]slot, n)
		for i := range n {
			// The first charts are mid-stay: each video entered some
			// time before start.
			stay := stay(w.r)
			in := w.r.IntN(stay)
			w.slots[region][i] = slot{c: w.newClip(region, start.Add(-time.Duration(in+w.r.IntN(12))*time.Hour)), until: stay - in}
		}
	}
	return w
}

// stay draws how many hours a new video stays on a chart: a tenth less
// than a day, most one to seven days, a few one to three weeks, and one
// in twenty three to eight weeks.
func stay(r *rand.Rand) int {
	switch x := r.IntN(100); {
	case x < 10:
		return 2 + r.IntN(22)
	case x < 80:
		return 24 + r.IntN(6*24+1)
	case x < 95:
		return 8*24 + r.IntN(14*24)
	default:
		return 22*24 + r.IntN(35*24)
	}
}

// chart is region's chart at hour h (since start), the clock at at:
// slots whose video's stay ended get a new video first.
func (w *world) chart(region string, h int, at time.Time) []ingest.Video {
	slots := w.slots[region]
	on := make(map[*clip]bool, len(slots))
	for _, s := range slots {
		on[s.c] = true
	}
	for i := range slots {
		if slots[i].until > h {
			continue
		}
		c := w.arrival(region, at, on)
		on[c] = true
		slots[i] = slot{c: c, until: h + stay(w.r)}
	}
	out := make([]ingest.Video, len(slots))
	for i, s := range slots {
		out[i] = s.c.at(at)
	}
	slices.SortStableFunc(out, func(a, b ingest.Video) int { return int(*b.ViewCount - *a.ViewCount) })
	return out
}

// arrival is the video entering a chart of region at at: one in ten is a
// video that just entered another chart, if one is not already on this
// one.
func (w *world) arrival(region string, at time.Time, on map[*clip]bool) *clip {
	if w.r.IntN(10) == 0 {
		for i := len(w.recent) - 1; i >= 0; i-- {
			if c := w.recent[i]; !on[c] {
				return c
			}
		}
	}
	c := w.newClip(region, at.Add(-time.Duration(1+w.r.IntN(36*60))*time.Minute))
	w.recent = append(w.recent, c)
	if len(w.recent) > 64 {
		w.recent = w.recent[1:]
	}
	return c
}

// stats are the counts tracking reads of ids at at (videos.batchGetStats).
func (w *world) stats(ids []string, at time.Time) []ingest.VideoStats {
	out := make([]ingest.VideoStats, 0, len(ids))
	for _, id := range ids {
		if c := w.clips[id]; c != nil {
			v := c.at(at)
			out = append(out, ingest.VideoStats{ID: id, ViewCount: *v.ViewCount, LikeCount: v.LikeCount,
				CommentCount: v.CommentCount, At: at})
		}
	}
	return out
}

// newClip writes a new video of region published at published.
func (w *world) newClip(region string, published time.Time) *clip {
	r := w.r
	w.made++
	lang := w.pickLang(region)
	l := w.lex[lang]
	id := videoID(w.made, r)
	c := &clip{v: ingest.Video{ID: id, Title: w.title(l, lang), Description: w.description(l, lang),
		Tags: w.tags(l), CategoryID: categories[r.IntN(len(categories))], PublishedAt: published.Truncate(time.Second),
		Duration: duration(r), Thumbnail: "https://i.ytimg.com/vi/" + id + "/default.jpg"},
		base: float64(1000 + r.IntN(200_000)), perHour: 2000 * math.Pow(150, r.Float64()),
		likeDiv: int64(20 + r.IntN(60)), commentDiv: int64(200 + r.IntN(800))}
	c.v.ChannelTitle, c.v.ChannelID = w.channel(region, lang)
	if r.IntN(19) == 0 {
		c.likeDiv = 0
	}
	if r.IntN(15) == 0 {
		c.commentDiv = 0
	}
	w.clips[id] = c
	return c
}

func (w *world) pickLang(region string) string {
	x := w.r.IntN(100)
	for _, l := range langsOf(region) {
		if x < l.pct {
			return l.code
		}
		x -= l.pct
	}
	return "en"
}

// videoID makes an 11-character id like the real ones, unique per n.
func videoID(n uint64, r *rand.Rand) string {
	var b [9]byte
	binary.BigEndian.PutUint32(b[:4], uint32(n))
	binary.BigEndian.PutUint32(b[4:8], r.Uint32())
	b[8] = byte(n >> 32)
	return base64.RawURLEncoding.EncodeToString(b[:])[:11]
}

var categories = []string{"10", "10", "17", "20", "24", "24", "24", "25", "22", "23", "26", "1", "2", "28"}

func duration(r *rand.Rand) string {
	switch r.IntN(20) {
	case 0:
		return "P0D" // a live broadcast
	case 1:
		return fmt.Sprintf("PT%dH%dM%dS", 1+r.IntN(3), r.IntN(60), r.IntN(60))
	case 2, 3:
		return fmt.Sprintf("PT%dS", 15+r.IntN(45))
	default:
		return fmt.Sprintf("PT%dM%dS", 1+r.IntN(30), r.IntN(60))
	}
}

// emoji are glued to words, as real titles carry them: some past
// U+1F900, some with the variation selector, one a ZWJ sequence.
var emoji = []string{"🤩", "🔥", "❤️", "😂", "🤯", "🫶", "🥹", "⚽", "🎶", "👨‍👩‍👧", "✨", "💯"}

// title is three to nine words of l with what real titles add: a
// bracketed label, a separator and a second part, an emoji glued to a
// word, a number, a hashtag, shouting.
func (w *world) title(l *lexicon, lang string) string {
	r := w.r
	t := l.phrase(r, 3+r.IntN(5))
	if r.IntN(3) == 0 {
		t += " | " + l.phrase(r, 1+r.IntN(3))
	}
	if r.IntN(4) == 0 {
		t += emoji[r.IntN(len(emoji))]
	}
	if r.IntN(5) == 0 {
		t = emoji[r.IntN(len(emoji))] + t
	}
	if r.IntN(6) == 0 {
		t += fmt.Sprintf(" %d", 1+r.IntN(2030))
	}
	if r.IntN(7) == 0 {
		t += " #" + l.word(r)
	}
	if lang == "ja" || lang == "zh" || lang == "ko" {
		if r.IntN(3) == 0 {
			t = "【" + l.word(r) + "】" + t
		}
	} else if r.IntN(12) == 0 {
		t = strings.ToUpper(t)
	}
	if lang != "en" && r.IntN(8) == 0 {
		t += " (Official Video)"
	}
	return t
}

// description is none to six paragraphs of l, with hashtags, a link and
// now and then a line in English.
func (w *world) description(l *lexicon, lang string) string {
	r := w.r
	n := r.IntN(7)
	ps := make([]string, 0, n+2)
	for range n {
		ps = append(ps, l.phrase(r, 6+r.IntN(30)))
	}
	if n > 0 && lang != "en" && r.IntN(4) == 0 {
		ps = append(ps, w.lex["en"].phrase(r, 5+r.IntN(10)))
	}
	if n > 0 && r.IntN(2) == 0 {
		ps = append(ps, fmt.Sprintf("https://example.com/%s/%d", l.word(r), r.IntN(100000)))
	}
	if n > 0 && r.IntN(2) == 0 {
		ps = append(ps, "#"+l.word(r)+" #"+l.word(r)+emoji[r.IntN(len(emoji))])
	}
	return strings.Join(ps, "\n\n")
}

// tags are none (one video in five has no tags) to eight words or
// phrases of l.
func (w *world) tags(l *lexicon) []string {
	r := w.r
	if r.IntN(5) == 0 {
		return nil
	}
	out := make([]string, 1+r.IntN(8))
	for i := range out {
		out[i] = l.phrase(r, 1+r.IntN(2))
	}
	return out
}

// channel is one of region's channels in lang: a few big channels have
// many videos, most have few.
func (w *world) channel(region, lang string) (title, id string) {
	r := w.r
	n := uint64(r.IntN(1 + r.IntN(3000)))
	key := uint64(0)
	for _, b := range []byte(region + lang) {
		key = key<<8 | uint64(b)
	}
	cr := rand.New(rand.NewPCG(n, key))
	title = w.lex[lang].phrase(cr, 1+cr.IntN(3))
	switch cr.IntN(4) {
	case 0:
		title += " TV"
	case 1:
		title += " Official"
	}
	return title, "UC" + videoID(n<<16|key&0xffff, cr) + videoID(key>>16, cr)
}
