package fakeyt

import (
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"strings"
)

// Page tokens are opaque, like the real ones: they carry the offset, the
// epoch they were issued in (InvalidateTokens moves it on) and a signature of
// the query they belong to, so a token used with another query, a tampered
// token or one from an earlier epoch is an invalidPageToken.

func scope(parts ...string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(strings.Join(parts, "\x00")))
	return h.Sum32()
}

func encodeToken(offset int, epoch, sig uint32) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:], uint32(offset)^sig*2246822519)
	binary.BigEndian.PutUint32(b[4:], epoch)
	binary.BigEndian.PutUint32(b[8:], sig^0x5bd1e995^uint32(offset)*2654435761)
	return "C" + base64.RawURLEncoding.EncodeToString(b[:])
}

// decodeToken returns the offset a token stands for, or ok false.
func decodeToken(tok string, epoch, sig uint32) (offset int, ok bool) {
	if !strings.HasPrefix(tok, "C") {
		return 0, false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[1:])
	if err != nil || len(b) != 12 {
		return 0, false
	}
	off := binary.BigEndian.Uint32(b[0:]) ^ sig*2246822519
	if binary.BigEndian.Uint32(b[4:]) != epoch || binary.BigEndian.Uint32(b[8:]) != sig^0x5bd1e995^off*2654435761 {
		return 0, false
	}
	return int(off), true
}
