package web

// The read model as a terminal shows it: `ingest chart` and `ingest
// search` print what the API answers, as text.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/termtext"
)

// WriteText prints the chart: a line naming it and its run, then each
// entry's rank, movement (when derived figures are on), views, title,
// channel and link.
func (c ChartJSON) WriteText(out io.Writer) {
	name := c.Region
	if c.Category != "" {
		name += " · " + ingest.CategoryName(c.Category)
	}
	if c.Language != "" {
		name += " · " + c.Language
	}
	fmt.Fprintf(out, "%s chart, run %d at %s (%s); views as fetched then\n", name, c.RunID, *c.At, c.Status)
	if len(c.Entries) == 0 && c.Language != "" {
		fmt.Fprintf(out, "no videos in %s on this chart (--language keeps a video whose audio or text is in it; leave it out for all)\n", c.Language)
		return
	}
	if len(c.Entries) == 0 {
		fmt.Fprintln(out, "no videos")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !c.Derived {
		fmt.Fprintln(tw, "#\tviews\t")
		for _, e := range c.Entries {
			fmt.Fprintf(tw, "%d\t%s\t  %s · %s · https://youtu.be/%s\n", e.Rank, viewsText(e.Views), e.Title, e.Channel, e.ID)
		}
		tw.Flush()
		return
	}
	fmt.Fprintln(tw, "#\tmove*\tviews\t")
	for _, e := range c.Entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t  %s · %s · https://youtu.be/%s\n", e.Rank, e.movement(), viewsText(e.Views), e.Title, e.Channel, e.ID)
	}
	tw.Flush()
	fmt.Fprintln(out, "* computed by ingest from its stored runs, not a figure from YouTube (--derived on)")
}

// viewsText is an entry's views as the text says them: hidden where the
// upstream withheld the count, never a 0 a reader would take for none.
func viewsText(n *int64) string {
	if n == nil {
		return "hidden"
	}
	return termtext.Thousands(*n)
}

// movement is an entry's change since the chart's previous run as the
// page marks it: new, +2, -1, =; blank with no previous run.
func (e EntryJSON) movement() string {
	switch {
	case e.New:
		return "new"
	case e.PrevRank == nil:
		return ""
	case e.Movement == 0:
		return "="
	}
	return fmt.Sprintf("%+d", e.Movement)
}

// WriteHits prints search results, best first: title; channel, views
// (or hidden), when last seen, regions and link; the matching snippet.
func WriteHits(out io.Writer, hits []store.Hit) {
	if len(hits) == 0 {
		fmt.Fprintln(out, "no matches")
		return
	}
	for i, h := range hits {
		views := "views hidden"
		if h.ViewCount != nil {
			views = termtext.Thousands(*h.ViewCount) + " views"
		}
		fmt.Fprintf(out, "%2d. %s\n    %s · %s (at %s) · %s · https://youtu.be/%s\n    %s\n",
			i+1, h.Title, h.ChannelTitle, views, h.LastSeen.UTC().Format("2006-01-02 15:04 UTC"),
			strings.Join(h.Regions, ","), h.ID, strings.Join(strings.Fields(h.Snippet), " "))
	}
}
