package fakeyt

import (
	"strings"

	"github.com/ingestworks/ingest"
)

// Chart returns region's chart as a videos.list pass would read it now (as
// Move's clock has it), converted to the root's videos: for tools that
// build a database with the store's own writer without going over HTTP
// (internal/rig/yeardb). Nil when the region has no chart.
func (f *Fake) Chart(region string) []ingest.Video {
	list, ok := f.chartNow(strings.ToUpper(region))
	if !ok {
		return nil
	}
	out := make([]ingest.Video, 0, len(list))
	for _, v := range list {
		out = append(out, v.ingest())
	}
	return out
}

// ingest converts a fixture video as the fetch package would read it.
func (v *video) ingest() ingest.Video {
	out := ingest.Video{ID: v.ID, Title: v.Title, Description: v.Description, Tags: v.Tags,
		ChannelID: v.ChannelID, ChannelTitle: v.ChannelTitle, CategoryID: v.CategoryID,
		PublishedAt: v.PublishedAt, Duration: v.Duration, Thumbnail: thumbs(v.ID).Default.URL}
	if v.NoStats {
		return out
	}
	views := int64(v.Views)
	out.ViewCount = &views
	if !v.HideLikes {
		n := int64(v.Likes)
		out.LikeCount = &n
	}
	if !v.HideComments {
		n := int64(v.Comments)
		out.CommentCount = &n
	}
	return out
}
