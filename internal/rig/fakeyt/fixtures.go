package fakeyt

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// Anchor is the fixtures' "now": chart videos were published in the 45 days
// before it, search-only videos over the 12 months before it. Fixtures are
// the same on every run, so tests can compute date windows from it.
var Anchor = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// ChartLengths is how many videos each default region's most-popular chart
// holds (every code of regions.Default has one). Like the real charts,
// they differ (in 2018 GB had 77 and CA 84).
var ChartLengths = chartLengths(map[string]int{
	"US": 200, "GB": 77, "DE": 143, "FR": 118,
	"IN": 200, "BR": 96, "AU": 64, "CA": 84,
})

// defaultChartLength is the chart of a default region without a length of
// its own above: a new default region gets a chart without a fixture edit.
const defaultChartLength = 50

// chartLengths is known with defaultChartLength for every default region it
// does not name.
func chartLengths(known map[string]int) map[string]int {
	for _, r := range regions.Default {
		if known[r] == 0 {
			known[r] = defaultChartLength
		}
	}
	return known
}

// archivePerRegion is how many search-only videos each region has.
const archivePerRegion = 150

// video is one fixture video.
type video struct {
	ID           string
	Title        string
	Description  string
	Tags         []string
	ChannelID    string
	ChannelTitle string
	CategoryID   string
	Lang         string // the language of its text
	// AudioLang and TextLang are what the upstream sends as
	// snippet.defaultAudioLanguage and snippet.defaultLanguage: "" absent.
	AudioLang, TextLang string
	PublishedAt         time.Time
	Duration            string
	Views               uint64
	Likes               uint64
	Comments            uint64
	HideLikes           bool
	HideComments        bool
	// Live is liveBroadcastContent ("live", "upcoming"; "" is "none"),
	// Blocked the regions of contentDetails.regionRestriction.blocked, and
	// NoStats an item sent without statistics (world.go). Serving them
	// needs render (handlers.go) to read them.
	Live    string
	Blocked []string
	NoStats bool
	// fresh marks a video moving charts published (motion.go).
	fresh bool
}

// fixtures is the whole deterministic catalogue.
type fixtures struct {
	charts map[string][]*video // region -> chart in rank order
	search map[string][]*video // region -> everything searchable there
	byID   map[string]*video
	// generated are the other catalogued regions' charts (catalogue.go),
	// made on first use.
	generated map[string]*lazyChart
	// everyGenerated finds a video in any generated chart by id, made on
	// the first id no handcrafted chart holds (which makes them all).
	everyGenerated struct {
		once sync.Once
		byID map[string]*video
	}
}

// kind is a family of titles with the category they belong to.
type kind struct {
	category string
	titles   []string // %[1]s %[2]s fillers, %[3]d a number
	tags     []string
	desc     string
}

// lang holds the words one language's fixtures are made of.
type lang struct {
	code     string
	kinds    []kind
	fillers  []string
	channels []string
}

var languages = map[string]lang{
	"en": {
		code: "en",
		kinds: []kind{
			{"17", []string{"World Cup 2026 highlights: %[1]s vs %[2]s", "Top 10 football goals of the week #%[3]d",
				"%[1]s vs %[2]s | Premier League football highlights", "Cricket: %[1]s vs %[2]s full match recap"},
				[]string{"football", "world cup", "highlights", "sport"}, "Every goal and every save from the world cup and the league."},
			{"10", []string{"%[1]s - %[2]s (Official Music Video)", "%[1]s - %[2]s (Lyric Video)"},
				[]string{"music", "official video", "pop"}, "Official music video. Stream the new album now."},
			{"20", []string{"I played %[1]s for 100 hours", "%[1]s speedrun world record #%[3]d"},
				[]string{"gaming", "speedrun", "lets play"}, "A long gaming session with friends."},
			{"24", []string{"We tried every %[1]s in %[2]s", "Reacting to the %[1]s trailer"},
				[]string{"entertainment", "reaction", "vlog"}, "Thanks for watching, see you next week."},
			{"25", []string{"%[1]s: what we know so far", "Morning briefing: %[1]s and %[2]s"},
				[]string{"news", "politics", "today"}, "The latest news, explained."},
			{"26", []string{"How to cook the perfect %[1]s", "How to fix a %[1]s in 5 minutes"},
				[]string{"howto", "recipe", "diy"}, "Step by step, for beginners."},
		},
		fillers:  []string{"England", "Brazil", "Argentina", "Spain", "Lakers", "Taylor Swift", "Midnight Rain", "Minecraft", "pizza", "London", "Chicago", "Zelda", "Olivia Rodrigo", "Chelsea", "Arsenal", "Texas", "burger", "Toronto"},
		channels: []string{"Sky Sports Football", "ESPN FC", "VEVO Hits", "MrGamer", "Daily Brief", "Kitchen Basics", "Late Night Fun", "Maple Leaf TV"},
	},
	"de": {
		code: "de",
		kinds: []kind{
			{"17", []string{"WM 2026 Highlights: Deutschland gegen %[1]s", "Thomas Müller über die Fußball-WM",
				"Bundesliga: %[1]s gegen %[2]s – alle Tore", "Fußball-Weltmeisterschaft: die schönsten Tore #%[3]d"},
				[]string{"Fußball", "WM", "Bundesliga", "Müller", "world cup"}, "Alle Tore und Highlights. Müller trifft wieder!"},
			{"10", []string{"%[1]s – %[2]s (Offizielles Musikvideo)"},
				[]string{"Musik", "Schlager", "Pop"}, "Das offizielle Musikvideo. Jetzt überall hören."},
			{"24", []string{"Wir testen %[1]s – große Überraschung!", "Größter Spaß mit Müller und Schäfer #%[3]d"},
				[]string{"Unterhaltung", "Comedy"}, "Schönen Abend und viel Spaß beim Zuschauen."},
			{"25", []string{"Nachrichten: %[1]s – was wir wissen", "Tagesschau kompakt: %[1]s"},
				[]string{"Nachrichten", "Politik"}, "Aktuelle Nachrichten aus Deutschland und der Welt."},
			{"26", []string{"Schnelle Küche: %[1]s in 15 Minuten"},
				[]string{"Kochen", "Rezept"}, "Einfach, schnell und lecker – für Anfänger."},
			{"20", []string{"Wir spielen %[1]s – Folge %[3]d"},
				[]string{"Gaming", "Let's Play"}, "Ein gemütlicher Spieleabend."},
		},
		fillers:  []string{"Österreich", "Frankreich", "Bayern München", "Dortmund", "Schalke", "Käsespätzle", "Brezel", "Köln", "Düsseldorf", "Helene Fischer", "Atemlos", "Minecraft", "Zürich", "Nürnberg"},
		channels: []string{"Sportschau", "Müller TV", "Musik Kanal", "Tagesschau", "Küchenzauber", "Spieleabend"},
	},
	"fr": {
		code: "fr",
		kinds: []kind{
			{"17", []string{"Coupe du monde 2026 : France – %[1]s, le résumé", "Ligue 1 : %[1]s contre %[2]s, les buts",
				"Le football à l'école : été %[3]d"},
				[]string{"football", "coupe du monde", "Ligue 1", "world cup"}, "Tous les buts du match. Quelle soirée à Marseille !"},
			{"10", []string{"%[1]s – %[2]s (Clip officiel)"},
				[]string{"musique", "clip", "chanson"}, "Le clip officiel. Écoutez l'album dès maintenant."},
			{"24", []string{"On a testé %[1]s pendant une journée", "Élodie réagit à %[1]s"},
				[]string{"divertissement", "humour"}, "Merci d'avoir regardé, à la semaine prochaine."},
			{"25", []string{"Actualité : %[1]s, ce qu'il faut savoir", "Le journal de 20 h : %[1]s"},
				[]string{"actualité", "politique"}, "Les dernières nouvelles, expliquées simplement."},
			{"26", []string{"Recette facile : crêpes et %[1]s", "Pâtisserie : réussir la %[1]s"},
				[]string{"cuisine", "recette"}, "Une recette très simple, étape par étape."},
			{"20", []string{"Je découvre %[1]s – épisode %[3]d"},
				[]string{"jeu vidéo", "gaming"}, "Une découverte en direct."},
		},
		fillers:  []string{"Belgique", "Brésil", "Paris SG", "Olympique de Marseille", "Lyon", "tarte tatin", "Québec", "Montréal", "Angèle", "Dernière danse", "crème brûlée", "Genève"},
		channels: []string{"beIN Sports France", "Canal Foot", "Musique Élégante", "Le Monde Vidéo", "Cuisine Facile", "Joueur du Grenier"},
	},
	"pt": {
		code: "pt",
		kinds: []kind{
			{"17", []string{"Copa do Mundo 2026: Brasil x %[1]s – melhores momentos", "Futebol: %[1]s x %[2]s – gols e lances",
				"São Paulo x %[1]s | Brasileirão rodada %[3]d"},
				[]string{"futebol", "Copa do Mundo", "gols", "world cup", "football"}, "Todos os gols da partida. Que jogaço no Maracanã!"},
			{"10", []string{"%[1]s - %[2]s (Clipe Oficial)"},
				[]string{"música", "sertanejo", "funk"}, "Clipe oficial. Ouça agora em todas as plataformas."},
			{"24", []string{"Reagindo a %[1]s com a família", "Tentei fazer %[1]s e deu errado"},
				[]string{"entretenimento", "humor"}, "Obrigado por assistir! Não esqueça de se inscrever."},
			{"25", []string{"Notícias: %[1]s – o que sabemos", "Jornal da manhã: %[1]s"},
				[]string{"notícias", "política"}, "As últimas notícias, explicadas."},
			{"26", []string{"Receita fácil de %[1]s em casa"},
				[]string{"receita", "cozinha"}, "Uma receita simples e deliciosa."},
		},
		fillers:  []string{"Argentina", "Flamengo", "Corinthians", "Palmeiras", "pão de queijo", "brigadeiro", "Anitta", "Coração", "Rio de Janeiro", "Salvador", "feijoada", "Grêmio"},
		channels: []string{"Globo Esporte", "Canal do Futebol", "Música Brasil", "Jornal Hoje", "Cozinha da Vovó", "Risadaria"},
	},
	"hi": {
		code: "hi",
		kinds: []kind{
			{"17", []string{"क्रिकेट विश्व कप: भारत बनाम %[1]s – मुख्य अंश", "फुटबॉल वर्ल्ड कप 2026: %[1]s की शानदार जीत"},
				[]string{"क्रिकेट", "फुटबॉल", "विश्व कप", "cricket", "world cup"}, "मैच के सभी मुख्य अंश। देखते रहिए!"},
			{"10", []string{"%[1]s – नया गाना (आधिकारिक वीडियो)", "दिल का गाना | %[1]s"},
				[]string{"गाना", "संगीत", "बॉलीवुड"}, "आधिकारिक संगीत वीडियो। अभी सुनिए।"},
			{"24", []string{"%[1]s के साथ मज़ेदार दिन", "कॉमेडी शो एपिसोड %[3]d"},
				[]string{"मनोरंजन", "कॉमेडी"}, "देखने के लिए धन्यवाद।"},
			{"25", []string{"आज की ताज़ा ख़बरें: %[1]s"},
				[]string{"ख़बरें", "समाचार"}, "देश और दुनिया की ताज़ा ख़बरें।"},
			{"26", []string{"घर पर %[1]s कैसे बनाएं"},
				[]string{"रेसिपी", "खाना"}, "आसान रेसिपी, कदम दर कदम।"},
		},
		fillers:  []string{"पाकिस्तान", "ऑस्ट्रेलिया", "मुंबई", "दिल्ली", "बिरयानी", "समोसा", "अरिजीत सिंह", "शाहरुख़ ख़ान", "पनीर टिक्का", "जयपुर"},
		channels: []string{"स्टार स्पोर्ट्स", "टी-सीरीज़", "आज तक", "रसोई घर", "कॉमेडी अड्डा"},
	},
}

// regionLangs is which languages a region's fixtures are written in.
var regionLangs = map[string][]string{
	"US": {"en"}, "GB": {"en"}, "AU": {"en"}, "CA": {"en", "fr"},
	"DE": {"de"}, "FR": {"fr"}, "IN": {"hi", "en"}, "BR": {"pt"},
}

// globalHits is how many videos trend in several regions at once.
const globalHits = 12

var durations = []string{"PT4M13S", "PT12M", "PT58S", "PT1H2M5S", "PT3M31S", "PT22M47S", "PT9M9S", "PT45S", "PT7M30S", "PT2H1M"}

// buildFixtures makes the catalogue. It depends on nothing but its seeds,
// so every Fake serves the same videos.
func buildFixtures() *fixtures {
	f := &fixtures{charts: map[string][]*video{}, search: map[string][]*video{}, byID: map[string]*video{}}
	hits := make([]*video, globalHits)
	for i := range hits {
		hits[i] = f.add(makeVideo("global", "en", i, newRand("global", i), Anchor.Add(-time.Duration(i+1)*36*time.Hour)))
	}
	for ri, region := range regions.Default {
		f.charts[region] = f.withShapes(region, f.chart(region, ri, hits))
		f.search[region] = append([]*video(nil), f.charts[region]...)
		for i := 0; i < archivePerRegion; i++ {
			r := newRand(region+"/archive", i)
			age := time.Duration(r.IntN(365*24)) * time.Hour
			v := f.add(makeVideo(region+"/archive", pickLang(region, i), i, r, Anchor.Add(-age-time.Hour)))
			f.search[region] = append(f.search[region], v)
		}
	}
	for _, region := range ExtraRegions {
		f.charts[region] = f.worldChart(region)
		f.search[region] = append([]*video(nil), f.charts[region]...)
	}
	f.generated = lazyCharts(f.charts, hits)
	return f
}

// chart builds one region's chart: its own videos, with some global hits
// mixed in near the top.
func (f *fixtures) chart(region string, ri int, hits []*video) []*video {
	n := ChartLengths[region]
	out := make([]*video, 0, n)
	for i := 0; len(out) < n; i++ {
		if i%4 == 1 && i/4 < len(hits) && (i/4+ri)%3 != 0 {
			out = append(out, hits[i/4])
			continue
		}
		r := newRand(region, i)
		age := time.Duration(1+r.IntN(45*24)) * time.Hour
		out = append(out, f.add(makeVideo(region, pickLang(region, i), i, r, Anchor.Add(-age))))
	}
	// A chart is ranked by popularity, as the real one roughly is.
	sort.SliceStable(out, func(a, b int) bool { return out[a].Views > out[b].Views })
	return out
}

func (f *fixtures) add(v *video) *video {
	f.byID[v.ID] = v
	return v
}

// pickLang is the language of a region's i-th video: a generated region's
// are those it speaks (catalogue.go); a region without languages of its
// own is written in English.
func pickLang(region string, i int) string {
	ls := regionLangs[region]
	if len(ls) == 0 {
		ls = spoken[region]
	}
	if len(ls) == 0 {
		return "en"
	}
	return ls[i%len(ls)]
}

func newRand(scope string, i int) *rand.Rand {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", scope, i)))
	var a, b uint64
	for k := 0; k < 8; k++ {
		a = a<<8 | uint64(h[k])
		b = b<<8 | uint64(h[8+k])
	}
	return rand.New(rand.NewPCG(a, b))
}

// makeVideo writes one video from its scope, index and random source.
func makeVideo(scope, code string, i int, r *rand.Rand, published time.Time) *video {
	l := langOf(code)
	k := l.kinds[r.IntN(len(l.kinds))]
	a, b := l.fillers[r.IntN(len(l.fillers))], l.fillers[r.IntN(len(l.fillers))]
	title := fmt.Sprintf(k.titles[r.IntN(len(k.titles))], a, b, 1+r.IntN(40))
	title = trimExtra(title)
	channel := l.channels[r.IntN(len(l.channels))]
	views := uint64(1000 + r.IntN(20_000_000))
	v := &video{
		ID:           videoID(scope, i),
		Title:        title,
		Description:  title + "\n\n" + k.desc + "\n#" + strings.ReplaceAll(k.tags[0], " ", ""),
		Tags:         append([]string{a}, k.tags...),
		ChannelID:    "UC" + videoID("channel/"+channel, 0) + videoID("channel2/"+channel, 0),
		ChannelTitle: channel,
		CategoryID:   k.category,
		Lang:         l.code,
		AudioLang:    audioLang(l.code, i),
		TextLang:     textLang(l.code, i),
		PublishedAt:  published.Truncate(time.Second),
		Duration:     durations[r.IntN(len(durations))],
		Views:        views,
		Likes:        views / uint64(20+r.IntN(60)),
		Comments:     views / uint64(200+r.IntN(800)),
		// Some owners hide their counts: absent is not zero.
		HideLikes:    i%19 == 3,
		HideComments: i%23 == 5 || i%19 == 3,
	}
	return v
}

// trimExtra drops what fmt appends when a title uses no filler at all.
func trimExtra(s string) string {
	if i := strings.Index(s, "%!(EXTRA"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// videoID makes an 11-character id like the real ones.
func videoID(scope string, i int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("id:%s#%d", scope, i)))
	return base64.RawURLEncoding.EncodeToString(h[:9])[:11]
}

// regional is the regional tag some owners give a language instead of
// the bare one.
var regional = map[string]string{"en": "en-US", "pt": "pt-BR", "es": "es-MX", "fr": "fr-FR", "de": "de-DE", "hi": "hi-IN"}

// audioLang is a video's snippet.defaultAudioLanguage as the real API
// sends it: absent for many videos (the owner never set it), "zxx" (no
// linguistic content) for music and ambient uploads, a regional tag for
// some.
func audioLang(code string, i int) string {
	switch {
	case i%4 == 1:
		return ""
	case i%13 == 6:
		return "zxx"
	case i%3 == 0 && regional[code] != "":
		return regional[code]
	}
	return code
}

// textLang is a video's snippet.defaultLanguage, the language of its
// title and description: set by fewer owners than the audio's.
func textLang(code string, i int) string {
	if i%4 == 1 || i%5 == 2 {
		return ""
	}
	return code
}
