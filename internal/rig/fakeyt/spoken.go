package fakeyt

import "strings"

// Spoken are the languages region's chart is written in, the most spoken
// first; nil for a region whose chart is handcrafted or absent. Builders
// of made-up databases (internal/rig/yeardb) read it so that their charts
// speak as the fake's do.
func Spoken(region string) []string {
	return spoken[region]
}

// Words are the words code's table is made of (its titles without their
// verbs' placeholders, tags, fillers, channels and description), split at
// spaces; nil for a language the fake has no table of.
func Words(code string) []string {
	l, ok := languages[code]
	if !ok {
		if l, ok = tongues[code]; !ok {
			return nil
		}
	}
	var text []string
	for _, k := range l.kinds {
		text = append(text, k.titles...)
		text = append(text, k.tags...)
		text = append(text, k.desc)
	}
	text = append(append(text, l.fillers...), l.channels...)
	return strings.Fields(placeholders.Replace(strings.Join(text, " ")))
}

// placeholders are the fmt verbs of the titles' templates.
var placeholders = strings.NewReplacer("%[1]s", " ", "%[2]s", " ", "%[3]d", " ")
