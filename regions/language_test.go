package regions

import "testing"

// Every region of the built-in catalogue has the language its names are
// asked in, and the map names no code the catalogue does not hold.
func TestEveryRegionHasALanguage(t *testing.T) {
	for _, code := range Builtin.Codes() {
		if Language(code) == "" {
			t.Errorf("%s (%s) has no language", code, Builtin.Name(code))
		}
	}
	for code := range languages {
		if _, ok := Builtin.Find(code); !ok {
			t.Errorf("languages names %s, which the built-in catalogue does not hold", code)
		}
	}
	if Language("ZZ") != "" {
		t.Errorf("a code the map does not hold: %q, want none (the upstream's English)", Language("ZZ"))
	}
}
