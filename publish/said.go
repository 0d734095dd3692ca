package publish

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Said logs a publish into dir that took took: what it wrote (res), or
// why the directory keeps what it had (err), unless ctx ended first, when
// the stop says why. only is the paths a partial publish asked; nil for a
// whole one.
func Said(ctx context.Context, log *slog.Logger, dir string, only []string, res Result, err error, took time.Duration) {
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("publish: the site was not written; the directory keeps what it had", "dir", dir, "err", err)
		}
		return
	}
	log.Info("published", "dir", dir, "pages", pages(only), "files", res.Files, "bytes", res.Bytes, "written", res.Written,
		"written_bytes", res.WrittenBytes, "removed", res.Removed, "took", took.Round(time.Millisecond).String())
}

// pages says which pages a publish asked: every one, or those the
// changes named.
func pages(only []string) string {
	if only == nil {
		return "all"
	}
	return fmt.Sprintf("changed (%d)", len(only))
}
