package regions

import (
	"slices"
	"strings"
)

// Region is one region of the catalogue: its ISO 3166-1 alpha-2 code, its
// name as i18nRegions.list gives it, and the area it is grouped under
// where a reader picks among a hundred.
type Region struct {
	Code string
	Name string
	Area string
}

// The areas a catalogue's regions are grouped under, in the order a page
// lists them.
const (
	Americas   = "Americas"
	Europe     = "Europe"
	MiddleEast = "Middle East & North Africa"
	Africa     = "Sub-Saharan Africa"
	Asia       = "Asia"
	Oceania    = "Oceania"
)

// Areas are the areas in the order a page lists them.
var Areas = []string{Americas, Europe, MiddleEast, Africa, Asia, Oceania}

// Catalogue is the regions the upstream charts, sorted by code.
type Catalogue []Region

// Builtin is the catalogue as i18nRegions.list (hl=en_US) named it when
// this copy was taken: what a first run and an offline host use until the
// upstream's own list is read and stored.
var Builtin = Catalogue{
	{"AE", "United Arab Emirates", MiddleEast}, {"AR", "Argentina", Americas},
	{"AT", "Austria", Europe}, {"AU", "Australia", Oceania},
	{"AZ", "Azerbaijan", Asia}, {"BA", "Bosnia and Herzegovina", Europe},
	{"BD", "Bangladesh", Asia}, {"BE", "Belgium", Europe},
	{"BG", "Bulgaria", Europe}, {"BH", "Bahrain", MiddleEast},
	{"BO", "Bolivia", Americas}, {"BR", "Brazil", Americas},
	{"BY", "Belarus", Europe}, {"CA", "Canada", Americas},
	{"CH", "Switzerland", Europe}, {"CL", "Chile", Americas},
	{"CO", "Colombia", Americas}, {"CR", "Costa Rica", Americas},
	{"CY", "Cyprus", Europe}, {"CZ", "Czechia", Europe},
	{"DE", "Germany", Europe}, {"DK", "Denmark", Europe},
	{"DO", "Dominican Republic", Americas}, {"DZ", "Algeria", MiddleEast},
	{"EC", "Ecuador", Americas}, {"EE", "Estonia", Europe},
	{"EG", "Egypt", MiddleEast}, {"ES", "Spain", Europe},
	{"FI", "Finland", Europe}, {"FR", "France", Europe},
	{"GB", "United Kingdom", Europe}, {"GE", "Georgia", Asia},
	{"GH", "Ghana", Africa}, {"GR", "Greece", Europe},
	{"GT", "Guatemala", Americas}, {"HK", "Hong Kong", Asia},
	{"HN", "Honduras", Americas}, {"HR", "Croatia", Europe},
	{"HU", "Hungary", Europe}, {"ID", "Indonesia", Asia},
	{"IE", "Ireland", Europe}, {"IL", "Israel", MiddleEast},
	{"IN", "India", Asia}, {"IQ", "Iraq", MiddleEast},
	{"IS", "Iceland", Europe}, {"IT", "Italy", Europe},
	{"JM", "Jamaica", Americas}, {"JO", "Jordan", MiddleEast},
	{"JP", "Japan", Asia}, {"KE", "Kenya", Africa},
	{"KH", "Cambodia", Asia}, {"KR", "South Korea", Asia},
	{"KW", "Kuwait", MiddleEast}, {"KZ", "Kazakhstan", Asia},
	{"LA", "Laos", Asia}, {"LB", "Lebanon", MiddleEast},
	{"LI", "Liechtenstein", Europe}, {"LK", "Sri Lanka", Asia},
	{"LT", "Lithuania", Europe}, {"LU", "Luxembourg", Europe},
	{"LV", "Latvia", Europe}, {"LY", "Libya", MiddleEast},
	{"MA", "Morocco", MiddleEast}, {"MD", "Moldova", Europe},
	{"ME", "Montenegro", Europe}, {"MK", "North Macedonia", Europe},
	{"MT", "Malta", Europe}, {"MX", "Mexico", Americas},
	{"MY", "Malaysia", Asia}, {"NG", "Nigeria", Africa},
	{"NI", "Nicaragua", Americas}, {"NL", "Netherlands", Europe},
	{"NO", "Norway", Europe}, {"NP", "Nepal", Asia},
	{"NZ", "New Zealand", Oceania}, {"OM", "Oman", MiddleEast},
	{"PA", "Panama", Americas}, {"PE", "Peru", Americas},
	{"PG", "Papua New Guinea", Oceania}, {"PH", "Philippines", Asia},
	{"PK", "Pakistan", Asia}, {"PL", "Poland", Europe},
	{"PR", "Puerto Rico", Americas}, {"PT", "Portugal", Europe},
	{"PY", "Paraguay", Americas}, {"QA", "Qatar", MiddleEast},
	{"RO", "Romania", Europe}, {"RS", "Serbia", Europe},
	{"RU", "Russia", Europe}, {"SA", "Saudi Arabia", MiddleEast},
	{"SE", "Sweden", Europe}, {"SG", "Singapore", Asia},
	{"SI", "Slovenia", Europe}, {"SK", "Slovakia", Europe},
	{"SN", "Senegal", Africa}, {"SV", "El Salvador", Americas},
	{"TH", "Thailand", Asia}, {"TN", "Tunisia", MiddleEast},
	{"TR", "Türkiye", Europe}, {"TW", "Taiwan", Asia},
	{"TZ", "Tanzania", Africa}, {"UA", "Ukraine", Europe},
	{"UG", "Uganda", Africa}, {"US", "United States", Americas},
	{"UY", "Uruguay", Americas}, {"VE", "Venezuela", Americas},
	{"VN", "Vietnam", Asia}, {"YE", "Yemen", MiddleEast},
	{"ZA", "South Africa", Africa}, {"ZW", "Zimbabwe", Africa},
}

// Find is the catalogue's region of code, and whether it has one.
func (c Catalogue) Find(code string) (Region, bool) {
	i, ok := slices.BinarySearchFunc(c, code, func(r Region, code string) int { return strings.Compare(r.Code, code) })
	if !ok {
		return Region{}, false
	}
	return c[i], true
}

// Name is code's name in the catalogue, or code itself when it has none.
func (c Catalogue) Name(code string) string {
	if r, ok := c.Find(code); ok {
		return r.Name
	}
	return code
}

// Codes are the catalogue's codes, in its order.
func (c Catalogue) Codes() []string {
	out := make([]string, len(c))
	for i, r := range c {
		out[i] = r.Code
	}
	return out
}

// Sorted is regions sorted by code, as a Catalogue must be; a region's
// area is kept from the built-in copy when it has none (the upstream's list
// names no areas).
func Sorted(regions []Region) Catalogue {
	out := slices.Clone(regions)
	for i, r := range out {
		if b, ok := Builtin.Find(r.Code); ok && r.Area == "" {
			out[i].Area = b.Area
		}
	}
	slices.SortFunc(out, func(a, b Region) int { return strings.Compare(a.Code, b.Code) })
	return slices.CompactFunc(out, func(a, b Region) bool { return a.Code == b.Code })
}
