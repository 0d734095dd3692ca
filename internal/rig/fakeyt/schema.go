package fakeyt

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
)

// answers are the types of each operation's answer as the upstream's
// discovery document declares them (the Google client is generated from
// it): a fields= naming a field they do not hold is refused, as the
// upstream refuses it, where a fake that only cut would answer without
// it and hide the mistake.
var answers = map[string]reflect.Type{
	ingest.OpVideosList:     reflect.TypeFor[youtube.VideoListResponse](),
	ingest.OpCategoriesList: reflect.TypeFor[youtube.VideoCategoryListResponse](),
	ingest.OpRegionsList:    reflect.TypeFor[youtube.I18nRegionListResponse](),
	ingest.OpSearchList:     reflect.TypeFor[youtube.SearchListResponse](),
	ingest.OpBatchGetStats:  reflect.TypeFor[youtube.BatchGetStatsResponse](),
}

// check says which name of sel t does not hold, "" for none.
func (sel selection) check(t reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		return "" // its keys are data, any may be named
	}
	for name, sub := range sel {
		if t.Kind() != reflect.Struct {
			return name // nothing inside a scalar to name
		}
		if name == "*" {
			continue
		}
		f, ok := jsonField(t, name)
		if !ok {
			return name
		}
		if bad := sub.check(f.Type); bad != "" {
			return name + "/" + bad
		}
	}
	return ""
}

// jsonField is t's field whose JSON name is name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name && n != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// checkFields reads and checks the fields= of a call of op: nil for none,
// and the upstream's refusal of one it cannot read or whose fields the
// answer does not hold.
func checkFields(op, fields string) (selection, *apiError) {
	if fields == "" {
		return nil, nil
	}
	key := op + "\x00" + fields
	if sel, ok := checked.Load(key); ok {
		return sel.(selection), nil
	}
	sel, e := readFields(op, fields)
	if e == nil && checkedN.Add(1) <= maxChecked {
		checked.Store(key, sel)
	}
	return sel, e
}

// checked are the selections read and found good, by operation and
// fields=: a client sends the same few on every call, and reading one
// again is work every call did. A selection is only read once made, so
// one serves every call. Refusals are read each time, and the count of
// those kept is bounded, as a client may send any text.
var (
	checked  sync.Map // string -> selection
	checkedN atomic.Int64
)

const maxChecked = 1024

// readFields is checkFields without the selections kept.
func readFields(op, fields string) (selection, *apiError) {
	sel, err := parseFields(fields)
	if err != nil {
		return nil, errFields(fmt.Sprintf("%s: %v", fields, err))
	}
	if t, ok := answers[op]; ok {
		if bad := sel.check(t); bad != "" {
			return nil, errFields(bad)
		}
	}
	return sel, nil
}
