package fakeyt

import (
	"sort"
	"sync"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// Every region of the catalogue (regions.Builtin) has a chart. The default
// and extra regions' are handcrafted (fixtures.go, world.go); every other
// region's is generated from its code by generatedChart, the first time it
// is asked for, so that a fake starts as fast as with the handcrafted
// regions alone and a test pays only for the regions it reads.

// ShortCharts are the generated regions whose charts hold fewer than 200
// videos, as small countries' real charts do; several end on a short page.
// Every other generated region's chart holds 200.
var ShortCharts = map[string]int{
	"IE": 77, "NZ": 84, "LI": 41, "IS": 63, "LU": 99,
	"MT": 120, "CY": 163, "PG": 58, "ME": 137, "BH": 150,
}

// fullChart is a generated region's chart unless ShortCharts says otherwise.
const fullChart = 200

// tongueHits is how many videos of one language trend in every region that
// speaks it (a Spanish hit in Mexico and Spain alike).
const tongueHits = 6

// spoken are the languages each generated region's chart is written in,
// the first the most; English is mixed into every one (generatedChart).
var spoken = map[string][]string{
	"AE": {"ar", "en", "hi"}, "AR": {"es"}, "AT": {"de"}, "AZ": {"az", "ru"}, "BA": {"bs"},
	"BD": {"bn"}, "BE": {"nl", "fr"}, "BG": {"bg"}, "BH": {"ar"}, "BO": {"es"},
	"BY": {"ru"}, "CH": {"de", "fr", "it"}, "CL": {"es"}, "CO": {"es"}, "CR": {"es"},
	"CY": {"el"}, "CZ": {"cs"}, "DK": {"da"}, "DO": {"es"}, "DZ": {"ar", "fr"},
	"EC": {"es"}, "EE": {"et", "ru"}, "EG": {"ar"}, "ES": {"es"}, "FI": {"fi"},
	"GE": {"ka"}, "GH": {"en"}, "GR": {"el"}, "GT": {"es"}, "HK": {"zh-Hant"},
	"HN": {"es"}, "HR": {"hr"}, "HU": {"hu"}, "ID": {"id"}, "IE": {"en"},
	"IL": {"he", "ar"}, "IQ": {"ar"}, "IS": {"is"}, "IT": {"it"}, "JM": {"en"},
	"JO": {"ar"}, "KE": {"sw", "en"}, "KH": {"km"}, "KW": {"ar"}, "KZ": {"kk", "ru"},
	"LA": {"lo"}, "LB": {"ar", "fr"}, "LI": {"de"}, "LK": {"si"}, "LT": {"lt"},
	"LU": {"fr", "de"}, "LV": {"lv", "ru"}, "LY": {"ar"}, "MA": {"ar", "fr"}, "MD": {"ro", "ru"},
	"ME": {"sr-Latn"}, "MK": {"mk"}, "MT": {"en", "it"}, "MX": {"es"}, "MY": {"ms", "zh-Hans"},
	"NG": {"en"}, "NI": {"es"}, "NL": {"nl"}, "NO": {"nb"}, "NP": {"ne"},
	"NZ": {"en"}, "OM": {"ar"}, "PA": {"es"}, "PE": {"es"}, "PG": {"en"},
	"PH": {"fil"}, "PK": {"ur"}, "PL": {"pl"}, "PR": {"es"}, "PT": {"pt"},
	"PY": {"es"}, "QA": {"ar"}, "RO": {"ro"}, "RS": {"sr", "sr-Latn"}, "RU": {"ru"},
	"SE": {"sv"}, "SG": {"en", "zh-Hans"}, "SI": {"sl"}, "SK": {"sk"}, "SN": {"fr"},
	"SV": {"es"}, "TN": {"ar", "fr"}, "TR": {"tr"}, "TZ": {"sw"}, "UA": {"uk"},
	"UG": {"en", "sw"}, "UY": {"es"}, "VE": {"es"}, "VN": {"vi"}, "YE": {"ar"},
	"ZA": {"en"}, "ZW": {"en"},
}

// glued are emoji that real titles carry stuck to a word.
var glued = []string{"🔥", "😂", "🤩", "🥹", "✨", "😱", "🫶"}

// lazyChart is one generated region's chart, made on first use.
type lazyChart struct {
	once  sync.Once
	code  string
	hits  []*video // the global hits, shared with the handcrafted charts
	chart []*video
	byID  map[string]*video
}

func (l *lazyChart) get() *lazyChart {
	l.once.Do(func() {
		l.chart = generatedChart(l.code, l.hits)
		l.byID = make(map[string]*video, len(l.chart))
		for _, v := range l.chart {
			l.byID[v.ID] = v
		}
	})
	return l
}

// lazyCharts are the catalogue's regions without handcrafted charts.
func lazyCharts(handmade map[string][]*video, hits []*video) map[string]*lazyChart {
	out := map[string]*lazyChart{}
	for _, code := range regions.Builtin.Codes() {
		if _, ok := handmade[code]; !ok {
			out[code] = &lazyChart{code: code, hits: hits}
		}
	}
	return out
}

// chartOf is region's chart in rank order, and false when the fake has
// none for it.
func (fx *fixtures) chartOf(region string) ([]*video, bool) {
	if c, ok := fx.charts[region]; ok {
		return c, true
	}
	if l := fx.generated[region]; l != nil {
		return l.get().chart, true
	}
	return nil, false
}

// searchable is what search.list finds in region: a handcrafted region's
// chart and archive, a generated region's chart.
func (fx *fixtures) searchable(region string) []*video {
	if s, ok := fx.search[region]; ok {
		return s
	}
	c, _ := fx.chartOf(region)
	return c
}

// video finds a video by id. An id no handcrafted chart holds makes every
// generated chart: an id a fake served before the process restarted is
// found again.
func (fx *fixtures) video(id string) *video {
	if v := fx.byID[id]; v != nil {
		return v
	}
	g := &fx.everyGenerated
	g.once.Do(func() {
		g.byID = map[string]*video{}
		for _, l := range fx.generated {
			for id, v := range l.get().byID {
				// Any one will do where charts share a video: they are the
				// same video.
				g.byID[id] = v
			}
		}
	})
	return g.byID[id]
}

// generatedChart makes region's chart from its code alone: its languages'
// videos with English mixed in, hits of its languages that other regions
// share, some global hits, and the mess of real charts (emoji glued to
// words, hidden counts, items without tags or statistics, live broadcasts).
func generatedChart(region string, hits []*video) []*video {
	n := ShortCharts[region]
	if n == 0 {
		n = fullChart
	}
	langs := spoken[region]
	if len(langs) == 0 {
		langs = []string{"en"}
	}
	salt := int(idHash(region) % 3)
	out := make([]*video, 0, n)
	for i := 0; len(out) < n; i++ {
		switch {
		case i%4 == 1 && i/4 < len(hits) && (i/4+salt)%3 == 0:
			out = append(out, hits[i/4])
		case i%6 == 3 && i/6 < tongueHits:
			out = append(out, tongueHit(langs[0], i/6))
		default:
			out = append(out, generatedVideo(region, langs, i))
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Views > out[b].Views })
	return out
}

// tongueHit is the k-th video that trends wherever code is spoken: every
// region makes the same one from the language alone.
func tongueHit(code string, k int) *video {
	scope := "hit/" + code
	r := newRand(scope, k)
	v := makeVideo(scope, code, k, r, Anchor.Add(-time.Duration(k+1)*20*time.Hour))
	v.Views += 25_000_000
	return v
}

// generatedVideo is the i-th video of region's own: in one of its
// languages, every fifth in English.
func generatedVideo(region string, langs []string, i int) *video {
	code := langs[i%len(langs)]
	if i%5 == 4 {
		code = "en"
	}
	r := newRand(region, i)
	age := time.Duration(1+r.IntN(45*24)) * time.Hour
	v := makeVideo(region, code, i, r, Anchor.Add(-age))
	switch {
	case i%6 == 2:
		v.Title += glued[i%len(glued)]
	case i%10 == 7:
		v.Title = "❤️" + v.Title
	}
	if i%11 == 7 {
		v.Tags = nil
	}
	if i%41 == 13 {
		v.NoStats = true
	}
	if i%47 == 5 {
		v.Live, v.Duration = "live", "P0D"
	}
	return v
}
