package signin

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinTokenLen is the fewest characters an access token may have.
const MinTokenLen = 20

// MinTokenBits is the least entropy an access token may have, as
// TokenBits estimates it: the throttle slows each guessing address, not
// a guess spread over many, so the token alone must put guessing out of
// reach at any rate a server can answer.
const MinTokenBits = 128

// CheckToken says why token is too weak to guard the data: shorter than
// MinTokenLen, under MinTokenBits, or with spaces around it (a bearer
// header cannot carry them). It never quotes the token.
func CheckToken(token string) error {
	if strings.TrimSpace(token) != token {
		return fmt.Errorf("it begins or ends with white space, which an Authorization header cannot carry")
	}
	if strings.ContainsFunc(token, unicode.IsControl) {
		return fmt.Errorf("it holds a control character")
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLen {
		return fmt.Errorf("it has %d characters, want at least %d", n, MinTokenLen)
	}
	if bits := TokenBits(token); bits < MinTokenBits {
		return fmt.Errorf("it has about %d bits of entropy, want at least %d (repeats, runs like 1234 and one kind of character count for little)", bits, MinTokenBits)
	}
	return nil
}

// TokenBits estimates the entropy of token: each character that neither
// repeats what came before (three or more in a row already seen) nor
// continues a run (abc, 4321) counts the bits of a pick among the kinds
// of character the token uses (26 lower-case letters, 26 upper-case, 10
// digits, 33 symbols). A random token of n characters counts about what
// it has; a word said twice, a repeated letter or a run counts little.
func TokenBits(token string) int {
	rs := []rune(token)
	kinds, fresh := map[string]bool{}, 0
	for i := 0; i < len(rs); i++ {
		kinds[charKind(rs[i])] = true
		if n := repeatAt(rs, i); n >= 3 {
			for _, r := range rs[i : i+n] {
				kinds[charKind(r)] = true
			}
			i += n - 1
			continue
		}
		if i >= 2 && rs[i]-rs[i-1] == rs[i-1]-rs[i-2] && abs(rs[i]-rs[i-1]) <= 1 {
			continue // a run: aaa, abc, 321
		}
		fresh++
	}
	alphabet := 0
	for k := range kinds {
		alphabet += kindSize[k]
	}
	return int(float64(fresh) * math.Log2(float64(alphabet)))
}

// repeatAt is the length of the longest stretch at rs[i:] that begins
// earlier too (overlapping allowed, as in aaaa).
func repeatAt(rs []rune, i int) int {
	best := 0
	for j := 0; j < i; j++ {
		n := 0
		for i+n < len(rs) && rs[j+n] == rs[i+n] {
			n++
		}
		best = max(best, n)
	}
	return best
}

func abs(r rune) rune {
	if r < 0 {
		return -r
	}
	return r
}

var kindSize = map[string]int{"lower-case letters": 26, "upper-case letters": 26, "digits": 10, "symbols": 33}

func charKind(r rune) string {
	switch {
	case unicode.IsLower(r):
		return "lower-case letters"
	case unicode.IsUpper(r):
		return "upper-case letters"
	case unicode.IsDigit(r):
		return "digits"
	}
	return "symbols"
}

// NewToken returns a random access token of 256 bits that CheckToken
// takes.
func NewToken() string {
	for {
		var b [32]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		if tok := base64.RawURLEncoding.EncodeToString(b[:]); CheckToken(tok) == nil {
			return tok
		}
	}
}
