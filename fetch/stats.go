package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
)

// MaxStatsIDs is the most ids one videos.batchGetStats call takes.
const MaxStatsIDs = 50

// ErrTooManyIDs says that Stats was asked for more ids than one call takes.
var ErrTooManyIDs = errors.New("too many ids for one videos.batchGetStats call")

// Stats reads the counts of up to MaxStatsIDs videos with one
// videos.batchGetStats call (op ingest.OpBatchGetStats: the stats pool, not
// the default one), in the order the upstream returns them. Ids the
// upstream does not know are left out; no ids is no call. More than
// MaxStatsIDs is ErrTooManyIDs before the gate is asked: splitting is the
// caller's choice, since every call costs.
func (c *Client) Stats(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.VideoStats, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > MaxStatsIDs {
		return nil, fmt.Errorf("fetch stats: %w: %d, at most %d", ErrTooManyIDs, len(ids), MaxStatsIDs)
	}
	var out []ingest.VideoStats
	err := c.call(ctx, gate, ingest.OpBatchGetStats, func(ctx context.Context) error {
		ctx, cp := withCapture(ctx)
		res, err := c.svc.Videos.BatchGetStats().Id(ids...).Part("statistics").
			Fields(fields[ingest.OpBatchGetStats]).Context(ctx).Do()
		if err != nil {
			return err
		}
		out, err = toStats(res.Items, cp.body, c.now())
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("stats of %d ids", len(ids)), ingest.OpBatchGetStats, err)
	}
	return out, nil
}

// toStats converts the items of a batchGetStats response; body is the raw
// response they were decoded from, which tells hidden counts from zero.
func toStats(items []*youtube.VideoStat, body []byte, at time.Time) ([]ingest.VideoStats, error) {
	counts, err := presence(body)
	if err != nil {
		return nil, err
	}
	out := make([]ingest.VideoStats, 0, len(items))
	for _, it := range items {
		if it.Id == "" {
			return nil, fmt.Errorf("%w: a video stat without an id", ErrMalformed)
		}
		s := ingest.VideoStats{ID: it.Id, At: at}
		if st := it.Statistics; st != nil {
			s.ViewCount = st.ViewCount
			if counts[it.Id].likes {
				s.LikeCount = ptr(st.LikeCount)
			}
			if counts[it.Id].comments {
				s.CommentCount = ptr(st.CommentCount)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
