package web

// What the templates call: one map built beside the server, so that the
// pages' file (pages.go) names no resource and each resource's words stay
// in its own file.

import (
	"html/template"

	"github.com/ingestworks/ingest/report"
)

// templateFuncs are the templates' functions; signOut shows the sign-out
// button, operator the link to the operator's page (not on a public site,
// whose readers it would only send to a sign-in), names the regions.
func templateFuncs(signOut, operator bool, asset func(string) string, names places, search string) template.FuncMap {
	return template.FuncMap{"search": func() string { return search }, "signOut": func() bool { return signOut }, "operator": func() bool { return operator }, "asset": asset, "plural": plural, "deref": func(p *int) int { return *p }, "thumbnail": thumbnail, "addf": func(a, b float64) float64 { return a + b },
		"subf": func(a, b float64) float64 { return a - b }, "midf": func(a, b float64) float64 { return (a + b) / 2 }, "duration": duration, "day": day, "youtube": youTubeURL, "plural64": plural64,
		"num64": func(n int) string { return num(int64(n)) }, "add": func(a, b int) int { return a + b },
		"num": num, "when": when, "spark": sparkline, "marks": marks,
		"stampTime": stampTime, "abs": func(n int) int { return max(n, -n) }, "shortNote": shortNote,
		"dur": report.ShortDuration, "chartLabel": names.chart, "chartPath": chartPath, "regionList": names.list,
		"rowLabel": func(code string) string { return chartLabel(splitChart(code)) },
		"rowPath":  func(code string) string { return chartPath(splitChart(code)) },
		"short":    short, "channel": channelURL, "language": languageName, "region": names.name, "inRegion": names.in,
		"moved": movementText, "gained": func(p *int64) string {
			if *p < 0 {
				return "−" + short(-*p)
			}
			return "+" + short(*p)
		}, "num64s": func(p *int64) string { return num(*p) }, "hitTitle": hitTitle, "hitSnippet": hitSnippet,
		"wide": wideThumbnail, "jumps": jumps, "clip": clip, "sharing": sharing,
		"titleLang": titleLang, "wordsLang": wordsLang, "nameLang": nameLang, "in": placedIn, "first": firstOf}
}
