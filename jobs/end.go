package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
)

// LogEnd writes the one line that says how a run ended, the same for a chart
// pass, tracking and a backfill, so that a query over the logs finds every
// run's end by the same keys: status, then what the run did (did, key-value
// pairs), retry_at as RFC 3339 in UTC when the quota said no, and err for a
// failed run or detail for another run's message. A failed run logs at error
// whatever level says: cron mails it even when the passes are quiet.
func LogEnd(log *slog.Logger, level slog.Level, msg string, end ingest.RunEnd, err error, did ...any) {
	attrs := append([]any{ingest.LogStatus, end.Status}, did...)
	if !end.RetryAt.IsZero() {
		attrs = append(attrs, ingest.LogRetryAt, end.RetryAt.UTC().Format(time.RFC3339))
	}
	switch {
	case end.Status == ingest.StatusFailed && err != nil:
		attrs = append(attrs, ingest.LogErr, err)
	case end.Message != "":
		attrs = append(attrs, ingest.LogDetail, end.Message)
	}
	if end.Status == ingest.StatusFailed {
		level = slog.LevelError
	}
	log.Log(context.Background(), level, msg, attrs...)
}
