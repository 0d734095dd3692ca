package web

// A chart with no run to show: the API's 404 and the page that says when
// its first run is due.

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// noChart is why a chart has no run to show: none stored, or none by at
// when its first run came later (which it names).
func (s *Server) noChart(ctx context.Context, region, category string, at time.Time) error {
	nf := &notFound{code: "no_chart", msg: "no chart of " + chartLabel(region, category) + " stored" + atText(at)}
	if at.IsZero() {
		return nf
	}
	first, ok, err := s.cfg.DB.FirstChartAt(ctx, region, category)
	if err != nil {
		return err
	}
	if ok {
		nf.earliest = first
		nf.msg += "; its earliest run started at " + first.Format(time.RFC3339) + " (ask for at= then or later)"
	}
	return nf
}

func atText(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return " at or before " + at.UTC().Format(time.RFC3339)
}

type noChartView struct {
	Title, Label, Message string
	Next                  time.Time // when the chart's first run is due; zero when not known
	Planned               bool      // the charts this ingest fetches include it
	Others                []switchLink
	// Earliest, for a time asked before the chart's first run, is that
	// run's page; At the time asked.
	Earliest, At string
}

// noChartPage is a chart with no stored run yet (or none by the time
// asked): a 404 that says so, when its first run is due when the
// schedule knows, and the charts there are.
func (s *Server) noChartPage(w http.ResponseWriter, r *http.Request, nf *notFound) {
	region, _ := regionParam(r.PathValue("region"), true)
	category, _ := categoryParam(r)
	// The API's message names the chart by its codes; a reader gets names.
	msg := strings.Replace(nf.msg, chartLabel(region, category), s.places.chart(region, category), 1)
	v := noChartView{Title: "No chart yet", Label: s.places.chart(region, category), Message: strings.ToUpper(msg[:1]) + msg[1:]}
	if !nf.earliest.IsZero() {
		at, _ := timeParam(r, "at") // read once already
		v.Title, v.At = "No chart then", at.UTC().Format("2006-01-02 15:04 UTC")
		v.Earliest = chartHref(region, category, r.URL.Query().Get("language"), nf.earliest)
		s.render(w, r, http.StatusNotFound, "nochart", v)
		return
	}
	if s.cfg.Report != nil {
		if rep, err := s.cfg.Report(r.Context()); err == nil {
			code := region
			if category != "" {
				code += "/" + category
			}
			for _, reg := range rep.Regions {
				if reg.Code == code {
					v.Planned, v.Next = true, reg.NextRun
				}
			}
		}
	}
	if charts, err := s.charts.list(r.Context(), s.cfg.DB); err == nil {
		for _, c := range charts {
			v.Others = append(v.Others, switchLink{Label: s.places.chart(c.Region, c.Category), Href: chartPath(c.Region, c.Category)})
		}
	}
	s.render(w, r, http.StatusNotFound, "nochart", v)
}
