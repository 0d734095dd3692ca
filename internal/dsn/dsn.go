// Package dsn checks and redacts the URLs of the servers ingest connects
// to with a password (Redis, PostgreSQL), so that no message ever prints
// any part of the password, however the URL is written.
//
// A password must be percent-encoded in a URL: a bare @, /, ?, # or % in
// it moves the URL's other parts, and each parser then splits it in its
// own place (net/url at the last @, pgx at the first), quoting pieces of
// the password as a host, a port or a database in its errors. So the user
// information is found the one way that cannot cut a password short: up
// to the last @ of the whole URL; a URL whose user information then holds
// a reserved character is refused before any parser sees it.
package dsn

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// Hint is what a user does about a password that breaks a URL.
const Hint = "percent-encode each of @ : / ? # % in the user or password (as %40 %3A %2F %3F %23 %25; docs/operations.md, The URL)"

// ErrUnencoded: the user information holds a character URLs reserve.
var ErrUnencoded = errors.New("its user or password holds @, /, ? or # as they are, or a % that starts no %XX: " + Hint)

// ErrUnparsable: the URL does not parse; the error quotes none of it.
var ErrUnparsable = errors.New("it does not parse as a URL (if a password holds @ : / ? # or %, " + Hint + ")")

// Check finds what would make a parser split raw in the wrong place, and
// says so without quoting raw.
func Check(raw string) error {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ErrUnparsable
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		info := rest[:i]
		if strings.ContainsAny(info, "@/?#") || !escaped(info) {
			return ErrUnencoded
		}
	}
	if _, err := url.Parse(raw); err != nil {
		return ErrUnparsable
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

// passwordParam is a password given as a query parameter (PostgreSQL's
// password= and sslpassword=, Redis's password=).
var passwordParam = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#]*`)

// shape is a value written as a URL: a scheme, a colon, and then a slash
// or user information (an @ further on). A scheme that is misspelt
// (postgress://), in capitals (Postgres://), short of a slash
// (postgres:/) or another database's (mysql://) is still a URL by its
// shape, whose password must not be printed.
var shape = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):(/*)(.*)$`)

// Scheme returns the scheme of raw, as written, when raw has the shape of
// a URL (a scheme, a colon, then a slash or an @ further on); else ok is
// false: a file's path such as ingest.db or ./a:b.db.
func Scheme(raw string) (scheme string, ok bool) {
	m := shape.FindStringSubmatch(raw)
	if m == nil || (m[2] == "" && !strings.Contains(m[3], "@")) {
		return "", false
	}
	return m[1], true
}

// Redact returns raw fit to print: everything between the scheme and the
// last @ is the user information, of which only a user name that holds no
// reserved character is kept, and only for the schemes ingest opens (none
// for Redis, whose URLs may give the password alone; none for a scheme
// misspelt or unknown, whose user may be a password); password parameters
// are masked too. A value not shaped as a URL (Scheme) is not printed.
func Redact(raw string) string {
	if _, ok := Scheme(raw); !ok {
		return "(not a URL)"
	}
	m := shape.FindStringSubmatch(raw)
	scheme, rest := m[1], m[3]
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		user, _, withPassword := strings.Cut(rest[:i], ":")
		keep := m[2] == "//" && (scheme == "postgres" || scheme == "postgresql" || (withPassword && (scheme == "redis" || scheme == "rediss")))
		switch {
		case !keep || strings.ContainsAny(user, "@/?#"):
			user = "xxxxx"
		case withPassword:
			user += ":xxxxx"
		}
		rest = user + "@" + rest[i+1:]
	}
	return scheme + ":" + m[2] + passwordParam.ReplaceAllString(rest, "${1}xxxxx")
}

// Scrub takes the password of raw, as written and as decoded, out of msg:
// a parser's or a driver's error that may quote it. raw passed Check.
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
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
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
		if _, ok := Scheme(arg); ok {
			msg = strings.ReplaceAll(msg, arg, Redact(arg))
		}
	}
	return msg
}
