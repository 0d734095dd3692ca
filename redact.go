// The URLs of the servers ingest connects to with a password (Redis,
// PostgreSQL, the upstream's endpoint), checked and redacted, so that no
// message ever prints any part of a password or a query's key, however
// the URL is written, mistyped shapes too (no colon, one slash, no
// scheme): Redact is the one way such a setting is printed, by every part
// that names one in what it says.
//
// A password must be percent-encoded in a URL: a bare @, /, ?, # or % in
// it moves the URL's other parts, and each parser then splits it in its
// own place (net/url at the last @, pgx at the first), quoting pieces of
// the password as a host, a port or a database in its errors. So the user
// information is found the one way that cannot cut a password short: up
// to the last @ of the whole URL; a URL whose user information then holds
// a reserved character is refused before any parser sees it.

package ingest

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// URLHint is what a user does about a password that breaks a URL.
const URLHint = "percent-encode each of @ : / ? # % in the user or password (as %40 %3A %2F %3F %23 %25; docs/operations/store.md, The URL)"

// ErrURLUnencoded: the user information holds a character URLs reserve.
var ErrURLUnencoded = errors.New("its user or password holds @, /, ? or # as they are, or a % that starts no %XX: " + URLHint)

// ErrURLUnparsable: the URL does not parse; the error quotes none of it.
var ErrURLUnparsable = errors.New("it does not parse as a URL (if a password holds @ : / ? # or %, " + URLHint + ")")

// CheckURL finds what would make a parser split raw in the wrong place, and
// says so without quoting raw.
func CheckURL(raw string) error {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ErrURLUnparsable
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		info := rest[:i]
		if strings.ContainsAny(info, "@/?#") || !escaped(info) {
			return ErrURLUnencoded
		}
	}
	if _, err := url.Parse(raw); err != nil {
		return ErrURLUnparsable
	}
	return nil
}

// escaped reports whether every % of s starts a %XX escape.
func escaped(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// urlShape is a value written as a URL: a scheme, a colon, and then a slash
// or user information (an @ further on). A scheme that is misspelt
// (postgress://), in capitals (Postgres://), short of a slash
// (postgres:/) or another database's (mysql://) is still a URL by its
// shape, whose password must not be printed.
var urlShape = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):(/*)(.*)$`)

// colonlessShape is a URL whose scheme lost its colon (postgres//u:p@h/db,
// http//h): a URL by its shape when its scheme is one ingest opens or
// user information follows, else a file's path such as data//x.db.
var colonlessShape = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)(//+)(.*)$`)

// knownSchemes are the schemes ingest opens: their user names are kept when a
// password follows, which Redact masks.
var knownSchemes = map[string]bool{"postgres": true, "postgresql": true, "redis": true, "rediss": true, "http": true, "https": true}

// splitURL cuts raw shaped as a URL into its scheme, what follows the scheme
// up to the rest (a colon and slashes, or slashes alone when the colon is
// missing), and the rest; ok is false for a value not so shaped.
func splitURL(raw string) (scheme, sep, rest string, ok bool) {
	if m := urlShape.FindStringSubmatch(raw); m != nil && (m[2] != "" || strings.Contains(m[3], "@")) {
		return m[1], ":" + m[2], m[3], true
	}
	if m := colonlessShape.FindStringSubmatch(raw); m != nil && (knownSchemes[strings.ToLower(m[1])] || strings.Contains(m[3], "@")) {
		return m[1], m[2], m[3], true
	}
	return "", "", "", false
}

// URLScheme returns the scheme of raw, as written, when raw has the shape of
// a URL (a scheme, a colon, then a slash or an @ further on; or a scheme
// ingest opens, or one followed by user information, that lost its colon:
// postgres//...); else ok is false: a file's path such as ingest.db or
// ./a:b.db.
func URLScheme(raw string) (scheme string, ok bool) {
	scheme, _, _, ok = splitURL(raw)
	return scheme, ok
}

// ColonlessURL says whether raw is shaped as a URL whose scheme lost its
// colon (postgres//u:p@h/db).
func ColonlessURL(raw string) bool {
	_, sep, _, ok := splitURL(raw)
	return ok && !strings.HasPrefix(sep, ":")
}

// RedactMask stands for whatever was taken out.
const RedactMask = "xxxxx"

// shownParams are the query parameters whose values are never secret
// (where a server is, how to reach it): every other one is masked, as a
// parameter's name says nothing of what a server reads as a password or
// a key.
var shownParams = map[string]bool{
	"addr": true, "host": true, "hostaddr": true, "port": true, "dbname": true, "db": true,
	"sslmode": true, "connect_timeout": true, "target_session_attrs": true, "application_name": true,
	"protocol": true, "dial_timeout": true, "read_timeout": true, "write_timeout": true, "pool_size": true,
}

// Redact is the one way a setting that may hold a secret (--db,
// REDIS_URL, YOUTUBE_ENDPOINT, --public-url, --ledger, --to) is printed,
// whatever its shape. Everything between the scheme and the last @ is the
// user information, of which only a user name that holds no reserved
// character is kept, and only for the schemes ingest opens written with
// their two slashes (for Redis only with a password after it, as its URLs
// may give the password alone); the query keeps only the values of
// parameters that name where a server is (shownParams), and a fragment is
// dropped. Where the user information cannot be told from the query (an
// @ after a ? or #) nothing past the scheme is kept. A value not shaped as
// a URL (URLScheme) is not printed: "(not a URL)".
func Redact(raw string) string {
	scheme, sep, rest, ok := splitURL(raw)
	if !ok {
		return "(not a URL)"
	}
	prefix := scheme + sep
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		if strings.ContainsAny(rest[:i], "?#") {
			return prefix + RedactMask
		}
		rest = userInfo(scheme, sep, rest[:i]) + "@" + rest[i+1:]
	}
	i := strings.IndexAny(rest, "?#")
	if i < 0 {
		return prefix + rest
	}
	if rest[i] == '#' {
		return prefix + rest[:i]
	}
	query, _, _ := strings.Cut(rest[i+1:], "#")
	return prefix + rest[:i] + "?" + maskQuery(query)
}

// userInfo is what Redact keeps of the user information info.
func userInfo(scheme, sep, info string) string {
	user, _, withPassword := strings.Cut(info, ":")
	keep := sep == "://" && knownSchemes[scheme] && (withPassword || scheme == "postgres" || scheme == "postgresql")
	switch {
	case !keep || user == "" || strings.ContainsAny(user, "@/?#") || !escaped(user):
		if user == "" && withPassword {
			return ":" + RedactMask
		}
		return RedactMask
	case withPassword:
		return user + ":" + RedactMask
	}
	return user
}

// maskQuery keeps the values of shownParams that read as names, numbers
// or addresses, and masks every other parameter whole, its name too.
func maskQuery(q string) string {
	params := strings.Split(q, "&")
	for i, p := range params {
		name, value, _ := strings.Cut(p, "=")
		if !shownParams[strings.ToLower(name)] || !plainParam.MatchString(value) {
			params[i] = RedactMask
		}
	}
	return strings.Join(params, "&")
}

// plainParam is a parameter's value that is a name, a number or an address.
var plainParam = regexp.MustCompile(`^[A-Za-z0-9._:,\[\]-]*$`)

// Scrub takes the password of raw, as written and as decoded, out of msg:
// a parser's or a driver's error that may quote it. raw passed CheckURL.
func Scrub(msg, raw string) string {
	msg = strings.ReplaceAll(msg, raw, Redact(raw))
	u, err := url.Parse(raw)
	if err != nil {
		return msg
	}
	var secrets []string
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
	} else if u.User != nil && strings.HasPrefix(u.Scheme, "redis") {
		secrets = append(secrets, u.User.Username())
	}
	for _, k := range []string{"password", "sslpassword"} {
		if v := u.Query().Get(k); v != "" {
			secrets = append(secrets, v)
		}
	}
	for _, s := range secrets {
		msg = maskSecret(msg, s)
	}
	return msg
}

// shortSecret is the length below which a secret is masked only where it
// stands as a word of its own: a password of a letter or two is inside
// every word of a driver's message ("dial tcp"), and masking it there
// hides the message without hiding the password, which a driver quotes
// whole, between separators.
const shortSecret = 8

// maskSecret is msg with each occurrence of secret masked; a short secret's only
// where no letter or digit touches it.
func maskSecret(msg, secret string) string {
	if secret == "" {
		return msg
	}
	if len(secret) >= shortSecret {
		return strings.ReplaceAll(msg, secret, RedactMask)
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, secret)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(secret)
		if wordChar(msg[:i], true) || wordChar(msg[end:], false) {
			b.WriteString(msg[:end])
		} else {
			b.WriteString(msg[:i] + RedactMask)
		}
		msg = msg[end:]
	}
}

// wordChar says whether the rune that touches a secret in s (its last when
// before, its first when not) is a letter or a digit.
func wordChar(s string, before bool) bool {
	var r rune
	if before {
		r, _ = utf8.DecodeLastRuneInString(s)
	} else {
		r, _ = utf8.DecodeRuneInString(s)
	}
	return s != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// ScrubArgs takes out of msg every command-line argument shaped as a URL
// (or a flag's value so shaped, --ledger=URL), as Redact prints it: a
// command parser's own errors (an unknown command, a flag's bad value)
// quote what they were given.
func ScrubArgs(msg string, args []string) string {
	for _, arg := range args {
		if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
			arg = v
		}
		if _, ok := URLScheme(arg); ok {
			msg = strings.ReplaceAll(msg, arg, Redact(arg))
		}
	}
	return msg
}
