package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestLogEnd(t *testing.T) {
	t.Parallel()
	retry := time.Date(2026, 11, 22, 8, 0, 0, 0, time.FixedZone("PST", -8*3600))
	tests := []struct {
		name  string
		end   ingest.RunEnd
		err   error
		level slog.Level
		want  map[string]any
	}{
		{"stopped", ingest.RunEnd{Status: ingest.StatusStopped, RetryAt: retry, Message: "the quota said no"}, nil, slog.LevelInfo,
			map[string]any{"level": "INFO", "status": "stopped", "retry_at": "2026-11-22T16:00:00Z", "detail": "the quota said no", "units": float64(3)}},
		{"completed quietly", ingest.RunEnd{Status: ingest.StatusCompleted}, nil, slog.LevelDebug,
			map[string]any{"level": "DEBUG", "status": "completed", "units": float64(3)}},
		{"failed", ingest.RunEnd{Status: ingest.StatusFailed, Message: "boom"}, errors.New("boom"), slog.LevelDebug,
			map[string]any{"level": "ERROR", "status": "failed", "err": "boom", "units": float64(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			LogEnd(log, tt.level, "pass", tt.end, tt.err, ingest.LogUnits, 3)
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("one JSON line: %v in %q", err, buf.String())
			}
			delete(got, "time")
			delete(got, "msg")
			if len(got) != len(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: got %v, want %v (line %s)", k, got[k], v, buf.String())
				}
			}
		})
	}
}
