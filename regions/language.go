package regions

// Language is the language a region's chart is read in, as the upstream's
// hl takes it (a BCP 47 tag i18nLanguages.list names): the language most of
// the region's readers read, for the names videoCategories.list gives.
// "" for a region it does not hold, which the upstream answers in English.
func Language(code string) string { return languages[code] }

// languages are the regions' languages, by code. A region of several
// (CA, CH, BE, IN) has the one most of its readers read.
var languages = map[string]string{
	"AE": "ar", "AR": "es-419", "AZ": "az", "BA": "bs", "GH": "en", "MD": "ro", "AT": "de", "AU": "en-GB", "BD": "bn", "BE": "nl", "BG": "bg",
	"BH": "ar", "BO": "es-419", "BR": "pt", "BY": "ru", "CA": "en", "CH": "de", "CL": "es-419",
	"CO": "es-419", "CR": "es-419", "CY": "el", "CZ": "cs", "DE": "de", "DK": "da", "DO": "es-419",
	"DZ": "ar", "EC": "es-419", "EE": "et", "EG": "ar", "ES": "es", "FI": "fi", "FR": "fr",
	"GB": "en-GB", "GE": "ka", "GR": "el", "GT": "es-419", "HK": "zh-HK", "HN": "es-419", "HR": "hr",
	"HU": "hu", "ID": "id", "IE": "en-GB", "IL": "iw", "IN": "en", "IQ": "ar", "IS": "is",
	"IT": "it", "JM": "en", "JO": "ar", "JP": "ja", "KE": "en", "KH": "km", "KR": "ko", "KW": "ar",
	"KZ": "kk", "LA": "lo", "LB": "ar", "LI": "de", "LK": "si", "LT": "lt", "LU": "fr", "LV": "lv",
	"LY": "ar", "MA": "ar", "ME": "sr", "MK": "mk", "MT": "en-GB", "MX": "es-419", "MY": "ms",
	"NG": "en", "NI": "es-419", "NL": "nl", "NO": "no", "NP": "ne", "NZ": "en-GB", "OM": "ar",
	"PA": "es-419", "PE": "es-419", "PG": "en", "PH": "fil", "PK": "ur", "PL": "pl", "PR": "es-419",
	"PT": "pt-PT", "PY": "es-419", "QA": "ar", "RO": "ro", "RS": "sr", "RU": "ru", "SA": "ar",
	"SE": "sv", "SG": "en", "SI": "sl", "SK": "sk", "SN": "fr", "SV": "es-419", "TH": "th",
	"TN": "ar", "TR": "tr", "TW": "zh-TW", "TZ": "sw", "UA": "uk", "UG": "en", "US": "en",
	"UY": "es-419", "VE": "es-419", "VN": "vi", "YE": "ar", "ZA": "en", "ZW": "en",
}
