package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

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
		var ans statsAnswer
		ctx, d := withDecode(ctx, &ans)
		_, err := c.svc.Videos.BatchGetStats().Id(ids...).Part("statistics").
			Fields(fields[ingest.OpBatchGetStats]).Context(ctx).Do()
		if err == nil {
			err = d.err
		}
		if err != nil {
			return err
		}
		out, err = toStats(ans.Items, c.now())
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("stats of %d ids", len(ids)), ingest.OpBatchGetStats, err)
	}
	return out, nil
}

// statsAnswer is a videos.batchGetStats answer, decoded once by the
// transport, its counts kept apart from zero as a video's are.
type statsAnswer struct {
	Items []statItem `json:"items"`
}

type statItem struct {
	ID         string  `json:"id"`
	Statistics *counts `json:"statistics"`
}

// toStats converts the items of a batchGetStats answer, read at at.
func toStats(items []statItem, at time.Time) ([]ingest.VideoStats, error) {
	out := make([]ingest.VideoStats, 0, len(items))
	for _, it := range items {
		if it.ID == "" {
			return nil, fmt.Errorf("%w: a video stat without an id", ErrMalformed)
		}
		s := ingest.VideoStats{ID: it.ID, At: at}
		if st := it.Statistics; st != nil {
			if st.ViewCount != nil {
				s.ViewCount = *st.ViewCount
			}
			s.LikeCount, s.CommentCount = st.LikeCount, st.CommentCount
		}
		out = append(out, s)
	}
	return out, nil
}
