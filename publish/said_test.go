package publish

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A publish says in one line what it wrote, whole or the pages a landing
// changed; one that failed says the directory keeps what it had, unless
// the process was stopping, whose stop says why.
func TestSaidTellsWhatAPublishWrote(t *testing.T) {
	t.Parallel()
	res := Result{Files: 12, Bytes: 3400, Written: 2, WrittenBytes: 560, Removed: 1}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	for _, c := range []struct {
		name  string
		ctx   context.Context
		only  []string
		err   error
		wants []string
	}{
		{"whole", context.Background(), nil, nil, []string{"level=INFO msg=published dir=/srv/site pages=all files=12 bytes=3400 written=2 written_bytes=560 removed=1 took=1.235s"}},
		{"partial", context.Background(), []string{"/charts/US", "/"}, nil, []string{"msg=published", "pages=\"changed (2)\""}},
		{"failed", context.Background(), nil, errors.New("disk full"), []string{"level=WARN msg=\"publish: the site was not written; the directory keeps what it had\" dir=/srv/site err=\"disk full\""}},
		{"stopping", stopped, nil, context.Canceled, nil},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		Said(c.ctx, log, "/srv/site", c.only, res, c.err, 1234567*time.Microsecond)
		got := strings.TrimSpace(logs.String())
		if len(c.wants) == 0 && got != "" {
			t.Errorf("%s: said %q, want nothing", c.name, got)
		}
		for _, want := range c.wants {
			if !strings.Contains(got, want) || strings.Count(got, "\n") > 0 {
				t.Errorf("%s: said %q, want one line with %q", c.name, got, want)
			}
		}
	}
}
