package fetch

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
)

// rawCounts is what the Go structs lose: whether viewCount, likeCount and
// commentCount were sent at all. Absent (or null) likes and comments mean
// the owner hides them; an item without statistics has no counts at all.
type rawCounts struct {
	Items []struct {
		ID         string `json:"id"`
		Statistics *struct {
			ViewCount    json.RawMessage `json:"viewCount"`
			LikeCount    json.RawMessage `json:"likeCount"`
			CommentCount json.RawMessage `json:"commentCount"`
		} `json:"statistics"`
	} `json:"items"`
}

type shown struct{ views, likes, comments bool }

// presence reads, from the raw body, which counts each video carries.
func presence(body []byte) (map[string]shown, error) {
	if body == nil {
		return nil, fmt.Errorf("%w: response body was not kept", ErrMalformed)
	}
	var raw rawCounts
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out := make(map[string]shown, len(raw.Items))
	for _, it := range raw.Items {
		if s := it.Statistics; s != nil {
			out[it.ID] = shown{views: sent(s.ViewCount), likes: sent(s.LikeCount), comments: sent(s.CommentCount)}
		}
	}
	return out, nil
}

func sent(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }

// toVideos converts the items of a videos.list response; body is the raw
// response they were decoded from.
func toVideos(items []*youtube.Video, body []byte) ([]ingest.Video, error) {
	counts, err := presence(body)
	if err != nil {
		return nil, err
	}
	out := make([]ingest.Video, 0, len(items))
	for _, it := range items {
		v, err := toVideo(it, counts[it.Id])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func toVideo(it *youtube.Video, sh shown) (ingest.Video, error) {
	v := ingest.Video{ID: it.Id}
	if it.Id == "" {
		return v, fmt.Errorf("%w: a video without an id", ErrMalformed)
	}
	if s := it.Snippet; s != nil {
		v.Title, v.Description, v.Tags = s.Title, s.Description, s.Tags
		v.ChannelID, v.ChannelTitle, v.CategoryID = s.ChannelId, s.ChannelTitle, s.CategoryId
		v.AudioLanguage, v.Language = s.DefaultAudioLanguage, s.DefaultLanguage
		if s.PublishedAt != "" {
			t, err := time.Parse(time.RFC3339, s.PublishedAt)
			if err != nil {
				return v, fmt.Errorf("%w: video %s publishedAt: %v", ErrMalformed, it.Id, err)
			}
			v.PublishedAt = t.UTC()
		}
		if th := s.Thumbnails; th != nil && th.Default != nil {
			v.Thumbnail = th.Default.Url
		}
	}
	if d := it.ContentDetails; d != nil {
		v.Duration = d.Duration
	}
	if st := it.Statistics; st != nil {
		if sh.views {
			v.ViewCount = ptr(int64(st.ViewCount))
		}
		if sh.likes {
			v.LikeCount = ptr(int64(st.LikeCount))
		}
		if sh.comments {
			v.CommentCount = ptr(int64(st.CommentCount))
		}
	}
	return v, nil
}

func ptr(n int64) *int64 { return &n }
