package fakeyt

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// videos.batchGetStats (GET youtube/v3/videos:batchGetStats) answers a
// BatchGetStatsResponse, which is not a list: no pageInfo, no page tokens.
// Its items are VideoStat resources, a subset of a video: the publish time,
// the counts (strings, hidden ones absent, and no favoriteCount) and the
// duration as a google.protobuf.Duration ("253s"), not ISO 8601.

type statsResponse struct {
	Kind  string     `json:"kind"`
	Etag  string     `json:"etag"`
	Items []statItem `json:"items"`
}

type statItem struct {
	head
	Snippet        *statSnippet  `json:"snippet,omitempty"`
	Statistics     *statCounts   `json:"statistics,omitempty"`
	ContentDetails *statDuration `json:"contentDetails,omitempty"`
}

type statSnippet struct {
	PublishTime string `json:"publishTime"`
}

type statCounts struct {
	ViewCount    string `json:"viewCount"`
	LikeCount    string `json:"likeCount,omitempty"`
	CommentCount string `json:"commentCount,omitempty"`
}

type statDuration struct {
	Duration string `json:"duration"`
}

// maxStatsIDs is the most ids one batchGetStats call takes.
const maxStatsIDs = 50

// batchGetStats serves the fixtures' stats of the ids asked for, repeated
// (as the Go client sends them) or comma-joined, in the order asked. Ids
// the fake does not know are left out, as videos.list leaves them out.
func (f *Fake) batchGetStats(q url.Values) (any, *apiError) {
	want, e := parts(q, "id", "snippet", "statistics", "contentDetails")
	if e != nil {
		return nil, e
	}
	ids := splitIDs(q["id"])
	switch {
	case len(ids) == 0:
		return nil, errParam("missingRequiredParameter", "id", "No filter selected. Expected one of: id")
	case len(ids) > maxStatsIDs:
		// Unconfirmed shape: the wording is the discovery document's; the
		// reason is the one videos.list gives for too many ids.
		return nil, errParam("invalidFilters", "id",
			fmt.Sprintf("The number of IDs specified cannot exceed %d.", maxStatsIDs))
	}
	resp := &statsResponse{Kind: "youtube#batchGetStatsResponse", Etag: etag("stats", strings.Join(ids, ",")),
		Items: []statItem{}}
	for _, id := range ids {
		if v := f.lookup(id); v != nil {
			resp.Items = append(resp.Items, renderStat(v, want))
		}
	}
	return resp, nil
}

// splitIDs flattens repeated and comma-joined id values, dropping blanks.
func splitIDs(values []string) []string {
	var ids []string
	for _, v := range values {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func renderStat(v *video, want map[string]bool) statItem {
	it := statItem{head: head{"youtube#videoStats", etag("stat", v.ID, strconv.FormatUint(v.Views, 10)), v.ID}}
	if want["snippet"] {
		it.Snippet = &statSnippet{PublishTime: v.PublishedAt.Format(time.RFC3339)}
	}
	if want["statistics"] {
		s := &statCounts{ViewCount: strconv.FormatUint(v.Views, 10)}
		if !v.HideLikes {
			s.LikeCount = strconv.FormatUint(v.Likes, 10)
		}
		if !v.HideComments {
			s.CommentCount = strconv.FormatUint(v.Comments, 10)
		}
		it.Statistics = s
	}
	if want["contentDetails"] {
		it.ContentDetails = &statDuration{Duration: protoDuration(v.Duration)}
	}
	return it
}

// protoDuration turns the fixtures' ISO 8601 durations (PT1H2M5S) into the
// JSON form of a google.protobuf.Duration (3725s).
func protoDuration(iso string) string {
	rest, ok := strings.CutPrefix(iso, "PT")
	if !ok {
		return "0s"
	}
	var total int64
	for _, unit := range []struct {
		suffix string
		secs   int64
	}{{"H", 3600}, {"M", 60}, {"S", 1}} {
		n, after, found := strings.Cut(rest, unit.suffix)
		if !found {
			continue
		}
		k, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return "0s"
		}
		total, rest = total+k*unit.secs, after
	}
	return strconv.FormatInt(total, 10) + "s"
}

// Stats returns the counts videos.batchGetStats would answer for ids at
// the fake's clock, read at at: what a tracking pass stores, for builders
// that write a database without going over HTTP. Unknown ids are left out.
func (f *Fake) Stats(ids []string, at time.Time) []ingest.VideoStats {
	out := make([]ingest.VideoStats, 0, len(ids))
	for _, id := range ids {
		v := f.lookup(id)
		if v == nil || v.NoStats {
			continue
		}
		iv := v.ingest()
		out = append(out, ingest.VideoStats{ID: id, ViewCount: *iv.ViewCount, LikeCount: iv.LikeCount,
			CommentCount: iv.CommentCount, At: at})
	}
	return out
}
