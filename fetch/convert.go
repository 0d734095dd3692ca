package fetch

import (
	"fmt"
	"time"

	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
)

// videoAnswer is a videos.list answer, decoded once by the transport
// (withDecode): the Google client's types where they serve, and the counts
// as pointers, which keep what its structs lose, whether each was sent at
// all. Absent (or null) likes and comments mean the owner hides them; an
// item without statistics has no counts at all.
type videoAnswer struct {
	Items         []videoItem `json:"items"`
	NextPageToken string      `json:"nextPageToken"`
}

type videoItem struct {
	ID             string                       `json:"id"`
	Snippet        *youtube.VideoSnippet        `json:"snippet"`
	ContentDetails *youtube.VideoContentDetails `json:"contentDetails"`
	Statistics     *counts                      `json:"statistics"`
}

// counts are a video's statistics as the upstream sends them: strings, nil
// when left out.
type counts struct {
	ViewCount    *int64 `json:"viewCount,string"`
	LikeCount    *int64 `json:"likeCount,string"`
	CommentCount *int64 `json:"commentCount,string"`
}

// toVideos converts the items of a videos.list answer.
func toVideos(items []videoItem) ([]ingest.Video, error) {
	out := make([]ingest.Video, 0, len(items))
	for i := range items {
		v, err := toVideo(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func toVideo(it *videoItem) (ingest.Video, error) {
	v := ingest.Video{ID: it.ID}
	if it.ID == "" {
		return v, fmt.Errorf("%w: a video without an id", ErrMalformed)
	}
	if s := it.Snippet; s != nil {
		v.Title, v.Description, v.Tags = s.Title, s.Description, s.Tags
		v.ChannelID, v.ChannelTitle, v.CategoryID = s.ChannelId, s.ChannelTitle, s.CategoryId
		v.AudioLanguage, v.Language = s.DefaultAudioLanguage, s.DefaultLanguage
		if s.PublishedAt != "" {
			t, err := time.Parse(time.RFC3339, s.PublishedAt)
			if err != nil {
				return v, fmt.Errorf("%w: video %s publishedAt: %v", ErrMalformed, it.ID, err)
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
		v.ViewCount, v.LikeCount, v.CommentCount = st.ViewCount, st.LikeCount, st.CommentCount
	}
	return v, nil
}
