package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// Trending fetches one page of region's most-popular chart (videos.list
// chart=mostPopular, 50 a page). pageToken "" is the first page; the page's
// NextToken is "" on the last. Page.Number is left to the caller, which
// counts the pages of its pass.
func (c *Client) Trending(ctx context.Context, gate ingest.Gate, region, pageToken string) (ingest.Page, error) {
	return c.Chart(ctx, gate, region, "", pageToken)
}

// Chart fetches one page of the most-popular chart of region and category
// (a videoCategoryId; "" the unfiltered chart). A category the region has
// no chart for is ingest.ErrNoChart, as a region without one is.
func (c *Client) Chart(ctx context.Context, gate ingest.Gate, region, category, pageToken string) (ingest.Page, error) {
	var page ingest.Page
	err := c.call(ctx, gate, ingest.OpVideosList, func(ctx context.Context) error {
		call := c.svc.Videos.List(videoParts).Chart("mostPopular").RegionCode(region).MaxResults(pageSize).
			Fields(fields[ingest.OpVideosList])
		if category != "" {
			call = call.VideoCategoryId(category)
		}
		if pageToken != "" {
			call = call.PageToken(pageToken)
		}
		var ans videoAnswer
		ctx, d := withDecode(ctx, &ans)
		if _, err := call.Context(ctx).Do(); err != nil {
			return err
		}
		if d.err != nil {
			return d.err
		}
		vids, err := toVideos(ans.Items)
		if err != nil {
			return err
		}
		page = ingest.Page{Kind: ingest.Trending, Region: region, Videos: vids,
			NextToken: ans.NextPageToken, Fetched: c.now()}
		return nil
	})
	if err != nil {
		return ingest.Page{}, wrap(ingest.ChartName(region, category), ingest.OpVideosList, err)
	}
	return page, nil
}

// Categories fetches the video categories videoCategories.list names for
// region, titled in the language hl ("" the upstream's default, English):
// one call gives the ids and their names in one language.
func (c *Client) Categories(ctx context.Context, gate ingest.Gate, region, hl string) ([]ingest.Category, error) {
	var out []ingest.Category
	err := c.call(ctx, gate, ingest.OpCategoriesList, func(ctx context.Context) error {
		call := c.svc.VideoCategories.List([]string{"snippet"}).RegionCode(region).
			Fields(fields[ingest.OpCategoriesList])
		if hl != "" {
			call = call.Hl(hl)
		}
		res, err := call.Context(ctx).Do()
		if err != nil {
			return err
		}
		out = out[:0]
		for _, it := range res.Items {
			cat := ingest.Category{Region: region, ID: it.Id, Language: hl}
			if it.Snippet != nil {
				cat.Title = it.Snippet.Title
			}
			out = append(out, cat)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(region, ingest.OpCategoriesList, err)
	}
	return out, nil
}

// SearchPage fetches one page of search.list (type=video, order=viewCount,
// 50 a page; a zero After or Before and an empty Query are left out) and returns the video ids in rank order and the next page's
// token, "" on the last page. Details come from Videos.
func (c *Client) SearchPage(ctx context.Context, gate ingest.Gate, q ingest.SearchQuery, pageToken string) (ids []string, next string, err error) {
	err = c.call(ctx, gate, ingest.OpSearchList, func(ctx context.Context) error {
		call := c.svc.Search.List([]string{"id"}).Type("video").Order("viewCount").MaxResults(pageSize).
			Fields(fields[ingest.OpSearchList])
		if q.Region != "" {
			call = call.RegionCode(q.Region)
		}
		if q.Query != "" {
			call = call.Q(q.Query)
		}
		if !q.After.IsZero() {
			call = call.PublishedAfter(q.After.UTC().Format(time.RFC3339))
		}
		if !q.Before.IsZero() {
			call = call.PublishedBefore(q.Before.UTC().Format(time.RFC3339))
		}
		if pageToken != "" {
			call = call.PageToken(pageToken)
		}
		res, err := call.Context(ctx).Do()
		if err != nil {
			return err
		}
		ids, next = ids[:0], res.NextPageToken
		for _, it := range res.Items {
			if it.Id != nil && it.Id.VideoId != "" {
				ids = append(ids, it.Id.VideoId)
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", wrap(q.Region, ingest.OpSearchList, err)
	}
	return ids, next, nil
}

// Videos fetches the details of ids, 50 to a videos.list call, in the
// order the upstream returns them. Ids the upstream does not know (deleted,
// private) are left out.
func (c *Client) Videos(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.Video, error) {
	var out []ingest.Video
	for start := 0; start < len(ids); start += pageSize {
		chunk := ids[start:min(start+pageSize, len(ids))]
		var vids []ingest.Video
		err := c.call(ctx, gate, ingest.OpVideosList, func(ctx context.Context) error {
			var ans videoAnswer
			ctx, d := withDecode(ctx, &ans)
			_, err := c.svc.Videos.List(videoParts).Id(strings.Join(chunk, ",")).
				Fields(fields[ingest.OpVideosList]).Context(ctx).Do()
			if err == nil {
				err = d.err
			}
			if err != nil {
				return err
			}
			vids, err = toVideos(ans.Items)
			return err
		})
		if err != nil {
			return nil, wrap(fmt.Sprintf("ids %d-%d", start+1, start+len(chunk)), ingest.OpVideosList, err)
		}
		out = append(out, vids...)
	}
	return out, nil
}

// wrap prefixes err with what was being fetched. A quota error names its
// operation itself.
func wrap(scope, op string, err error) error {
	var qe *ingest.QuotaExhaustedError
	if errors.As(err, &qe) {
		return fmt.Errorf("fetch %s: %w", scope, err)
	}
	return fmt.Errorf("fetch %s %s: %w", scope, op, err)
}

// Regions fetches the regions i18nRegions.list names (in English): the
// catalogue of the regions the upstream charts.
func (c *Client) Regions(ctx context.Context, gate ingest.Gate) ([]ingest.Region, error) {
	var out []ingest.Region
	err := c.call(ctx, gate, ingest.OpRegionsList, func(ctx context.Context) error {
		res, err := c.svc.I18nRegions.List([]string{"snippet"}).Hl("en_US").
			Fields(fields[ingest.OpRegionsList]).Context(ctx).Do()
		if err != nil {
			return err
		}
		out = out[:0]
		for _, it := range res.Items {
			if it.Snippet != nil && it.Snippet.Gl != "" {
				out = append(out, ingest.Region{Code: it.Snippet.Gl, Name: it.Snippet.Name})
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("the region catalogue", ingest.OpRegionsList, err)
	}
	return out, nil
}
