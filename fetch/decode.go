package fetch

import (
	"encoding/json"
	"reflect"

	fastjson "github.com/segmentio/encoding/json"
)

// decodeAnswer reads a successful answer's JSON into v, once. segmentio's
// decoder reads each value as encoding/json does (the same struct tags,
// ",string" counts, null, names matched regardless of case, invalid UTF-8
// replaced) in a fraction of its time, and the answers are most of what
// the client does with its CPU. An answer it refuses is read again by
// encoding/json, into a fresh v: what a malformed answer leaves and the
// error that names it are then encoding/json's own, which Classify reads.
func decodeAnswer(b []byte, v any) error {
	if fastjson.Unmarshal(b, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(b, v)
}
