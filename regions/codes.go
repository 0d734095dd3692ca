package regions

import (
	"strings"
)

// iso3166 lists the ISO 3166-1 alpha-2 codes.
const iso3166 = `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL
BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE
DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ
GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM
KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ
MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN
PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY
SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF
WS YE YT ZA ZM ZW`

var known = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(iso3166) {
		m[c] = true
	}
	return m
}()

// Valid reports whether code is an ISO 3166-1 alpha-2 code (upper case):
// what --regions and --region accept, whether or not the catalogue names it
// (a region without a chart is skipped and said).
func Valid(code string) bool { return known[code] }

// aliases are codes people write for a region whose ISO code is another:
// UK is the United Kingdom's own name and domain, EL the European Union's
// code for Greece.
var aliases = map[string]string{"UK": "GB", "EL": "GR"}

// Suggest is the region code text most likely meant, as an error's hint
// puts it ("GB (United Kingdom)"): an alias's code, the region of cat whose
// name text is, or the only one whose name begins with it; "" when none is.
func Suggest(text string, cat Catalogue) string {
	t := strings.ToLower(strings.TrimSpace(text))
	code := aliases[strings.ToUpper(t)]
	if code == "" && len(t) >= 3 {
		code = byName(t, cat)
	}
	if code == "" {
		return ""
	}
	return code + " (" + cat.Name(code) + ")"
}

// byName is the region of cat named name (lower case), else the only one
// whose name begins with it; "" when none or several do.
func byName(name string, cat Catalogue) string {
	var begins []string
	for _, r := range cat {
		switch n := strings.ToLower(r.Name); {
		case n == name:
			return r.Code
		case strings.HasPrefix(n, name):
			begins = append(begins, r.Code)
		}
	}
	if len(begins) == 1 {
		return begins[0]
	}
	return ""
}
