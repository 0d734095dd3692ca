package regions

import (
	"time"
	_ "time/tzdata" // every region's zone loads on a minimal image
)

// zones are each catalogue region's zone in the tz database: for a region
// of several zones, its capital's, the one its national media and most
// calendars date a day by; an export's day of a chart entry is read in it.
var zones = map[string]string{
	"AE": "Asia/Dubai", "AR": "America/Argentina/Buenos_Aires", "AT": "Europe/Vienna", "AU": "Australia/Sydney",
	"AZ": "Asia/Baku", "BA": "Europe/Sarajevo", "BD": "Asia/Dhaka", "BE": "Europe/Brussels",
	"BG": "Europe/Sofia", "BH": "Asia/Bahrain", "BO": "America/La_Paz", "BR": "America/Sao_Paulo",
	"BY": "Europe/Minsk", "CA": "America/Toronto", "CH": "Europe/Zurich", "CL": "America/Santiago",
	"CO": "America/Bogota", "CR": "America/Costa_Rica", "CY": "Asia/Nicosia", "CZ": "Europe/Prague",
	"DE": "Europe/Berlin", "DK": "Europe/Copenhagen", "DO": "America/Santo_Domingo", "DZ": "Africa/Algiers",
	"EC": "America/Guayaquil", "EE": "Europe/Tallinn", "EG": "Africa/Cairo", "ES": "Europe/Madrid",
	"FI": "Europe/Helsinki", "FR": "Europe/Paris", "GB": "Europe/London", "GE": "Asia/Tbilisi",
	"GH": "Africa/Accra", "GR": "Europe/Athens", "GT": "America/Guatemala", "HK": "Asia/Hong_Kong",
	"HN": "America/Tegucigalpa", "HR": "Europe/Zagreb", "HU": "Europe/Budapest", "ID": "Asia/Jakarta",
	"IE": "Europe/Dublin", "IL": "Asia/Jerusalem", "IN": "Asia/Kolkata", "IQ": "Asia/Baghdad",
	"IS": "Atlantic/Reykjavik", "IT": "Europe/Rome", "JM": "America/Jamaica", "JO": "Asia/Amman",
	"JP": "Asia/Tokyo", "KE": "Africa/Nairobi", "KH": "Asia/Phnom_Penh", "KR": "Asia/Seoul",
	"KW": "Asia/Kuwait", "KZ": "Asia/Almaty", "LA": "Asia/Vientiane", "LB": "Asia/Beirut",
	"LI": "Europe/Vaduz", "LK": "Asia/Colombo", "LT": "Europe/Vilnius", "LU": "Europe/Luxembourg",
	"LV": "Europe/Riga", "LY": "Africa/Tripoli", "MA": "Africa/Casablanca", "MD": "Europe/Chisinau",
	"ME": "Europe/Podgorica", "MK": "Europe/Skopje", "MT": "Europe/Malta", "MX": "America/Mexico_City",
	"MY": "Asia/Kuala_Lumpur", "NG": "Africa/Lagos", "NI": "America/Managua", "NL": "Europe/Amsterdam",
	"NO": "Europe/Oslo", "NP": "Asia/Kathmandu", "NZ": "Pacific/Auckland", "OM": "Asia/Muscat",
	"PA": "America/Panama", "PE": "America/Lima", "PG": "Pacific/Port_Moresby", "PH": "Asia/Manila",
	"PK": "Asia/Karachi", "PL": "Europe/Warsaw", "PR": "America/Puerto_Rico", "PT": "Europe/Lisbon",
	"PY": "America/Asuncion", "QA": "Asia/Qatar", "RO": "Europe/Bucharest", "RS": "Europe/Belgrade",
	"RU": "Europe/Moscow", "SA": "Asia/Riyadh", "SE": "Europe/Stockholm", "SG": "Asia/Singapore",
	"SI": "Europe/Ljubljana", "SK": "Europe/Bratislava", "SN": "Africa/Dakar", "SV": "America/El_Salvador",
	"TH": "Asia/Bangkok", "TN": "Africa/Tunis", "TR": "Europe/Istanbul", "TW": "Asia/Taipei",
	"TZ": "Africa/Dar_es_Salaam", "UA": "Europe/Kyiv", "UG": "Africa/Kampala", "US": "America/New_York",
	"UY": "America/Montevideo", "VE": "America/Caracas", "VN": "Asia/Ho_Chi_Minh", "YE": "Asia/Aden",
	"ZA": "Africa/Johannesburg", "ZW": "Africa/Harare",
}

// locations are zones loaded once.
var locations = func() map[string]*time.Location {
	out := make(map[string]*time.Location, len(zones))
	for code, name := range zones {
		loc, err := time.LoadLocation(name)
		if err != nil {
			panic("regions: the zone of " + code + ": " + err.Error())
		}
		out[code] = loc
	}
	return out
}()

// Zone is the time zone a region's days are dated in: its capital's, UTC
// for a code the built-in catalogue does not hold.
func Zone(code string) *time.Location {
	if loc, ok := locations[code]; ok {
		return loc
	}
	return time.UTC
}
