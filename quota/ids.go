package quota

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// A call id is "<ms>-<seq>", a valid Redis stream id, whose sequence
// names the limiter that gave it by its range, so that two limiters
// deciding in the same millisecond on one ledger (Redis and the embedded
// one on a database shared while moving off Redis) never give the same
// id: Redis's counter below embeddedBase, the embedded limiter's counter
// from embeddedBase up, an unmetered call's random part from
// unmeteredBase up, all below 2^53 so that Lua reads them exactly. Ids
// the embedded limiter gave before it had a range of its own are Redis's
// range, read as they always were.
const (
	embeddedBase  = 1 << 51
	unmeteredBase = 1 << 52
)

// embeddedID is the id of the embedded limiter's call at ms with its
// counter at seq.
func embeddedID(ms, seq int64) string { return fmt.Sprintf("%d-%d", ms, embeddedBase+seq) }

// embeddedSeq is the embedded limiter's counter a call id carries, 0 when
// it is not in the embedded limiter's range.
func embeddedSeq(id string) int64 {
	if _, seq, err := parseID(id); err == nil && seq >= embeddedBase {
		return seq - embeddedBase
	}
	return 0
}

// token is a random hex string, for lease tokens and instance names.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// parseID splits a metered call id "<ms>-<seq>".
func parseID(id string) (ms, seq int64, err error) {
	a, b, ok := strings.Cut(id, "-")
	if ok {
		ms, err = strconv.ParseInt(a, 10, 64)
	}
	if ok && err == nil {
		seq, err = strconv.ParseInt(b, 10, 64)
	}
	if !ok || err != nil || ms <= 0 || seq <= 0 || seq >= unmeteredBase {
		return 0, 0, fmt.Errorf("call id %q: want <ms>-<seq>", id)
	}
	return ms, seq, nil
}

// unmeteredID names a call admitted while the limiter was unreachable:
// "<ms>-u<8 hex digits>", from this worker's clock.
func unmeteredID(at time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-u%08x", at.UnixMilli(), binary.BigEndian.Uint32(b[:]))
}

// logID is the id a ledger call takes in the limiter's log: its own for a
// metered call, and for an unmetered one the same time with a sequence
// above every counter, so that writing it back twice counts it once.
func logID(id string) (ms, seq int64, err error) {
	if a, b, ok := strings.Cut(id, "-u"); ok {
		ms, err1 := strconv.ParseInt(a, 10, 64)
		r, err2 := strconv.ParseUint(b, 16, 32)
		if err1 != nil || err2 != nil || ms <= 0 {
			return 0, 0, fmt.Errorf("call id %q: want <ms>-u<hex>", id)
		}
		return ms, unmeteredBase + int64(r), nil
	}
	return parseID(id)
}

// refillable keeps the ledger calls that belong in the window: of this quota
// key (or unnamed), with a well-formed id. A row that cannot be read is
// skipped with one warning: one bad row must not stop the limiter.
func refillable(log *slog.Logger, quotaKey string, calls []ingest.Call) []ingest.Call {
	var out []ingest.Call
	bad := 0
	for _, c := range calls {
		if c.QuotaKey != "" && c.QuotaKey != quotaKey {
			continue
		}
		if _, _, err := logID(c.ID); err != nil {
			if bad++; bad == 1 {
				log.Warn("ledger row skipped: its call id cannot be read", ingest.LogID, c.ID, ingest.LogOp, c.Op)
			}
			continue
		}
		out = append(out, c)
	}
	if bad > 1 {
		log.Warn("ledger rows skipped in all", "rows", bad)
	}
	return out
}

// highestSeq is the highest Redis counter among metered calls: a Redis
// limiter whose counter is below it has lost calls.
func highestSeq(calls []ingest.Call) int64 {
	var top int64
	for _, c := range calls {
		if _, seq, err := parseID(c.ID); err == nil && !c.Unmetered && seq < embeddedBase {
			top = max(top, seq)
		}
	}
	return top
}
