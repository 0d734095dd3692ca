package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// pipes is the daemon's --listen in the bubble: a listener whose
// connections are net.Pipe's, in memory, which let virtual time pass
// where a socket would not. A life of the process listens on a new one;
// readers dial whichever is current, and meet none while the process is
// down.
type pipes struct {
	mu  sync.Mutex
	cur *pipeListener
	gen int // the lives that listened so far
	// started is told, when nobody has yet heard of the last, that a life
	// listens
	started chan struct{}
}

// listen is a new listener for a life of the process, current from now.
func (p *pipes) listen() *pipeListener {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	p.mu.Lock()
	p.cur = l
	p.gen++
	p.mu.Unlock()
	select {
	case p.started <- struct{}{}:
	default:
	}
	return l
}

// life is the number of the life listening now.
func (p *pipes) life() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen
}

// dial connects to the current listener.
func (p *pipes) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	p.mu.Lock()
	l := p.cur
	p.mu.Unlock()
	if l == nil {
		return nil, net.ErrClosed
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, fmt.Errorf("dial the daemon's listener: %w", net.ErrClosed)
}

type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return listenAddr }

// listenAddr is the --listen the simulated daemon is given: loopback, so
// that the site serves every page without a token.
const listenAddr = "127.0.0.1:8080"

// Served is one chart a reader was answered with: when, which region,
// the run the API's answer named and when its views were fetched, and
// the time the chart's page said at the same instant ("" when the read
// failed: Err says why).
type Served struct {
	At     time.Time
	Region string
	RunID  int64
	// PrevRunID is the run the chart named its previous one (0 for none),
	// against which each entry's Prev was given; NextRunID, its next;
	// DayRunID, its run a day before; PrevAt and DayAt, when the chart
	// said those two started.
	PrevRunID, NextRunID, DayRunID int64
	PrevAt, DayAt                  string
	// Status and Complete are what the chart said of its run's end.
	Status   string
	Complete bool
	RunAt    string
	PageAt   string
	Err      string
	Down     bool // the process was down at the read's start or end: no answer is due
	// Entries are the chart's videos as its JSON ranks them, in its order.
	Entries []Shown
}

// Shown is a video as a reader was served it: its id, its rank in the
// chart (0 for a search hit) and the owner's language tags.
type Shown struct {
	Rank                    int
	ID, Title               string
	AudioLanguage, Language string
	Regions                 []string // a search hit's
	Snippet                 string   // a search hit's, its matched words between [ and ]
	Prev                    int      // a chart entry's previous_rank, 0 for none
}

// PlanRead is the day's plan a reader read on the site's /quota (the
// report `report --json` prints) in a life of the process: units a day
// by pool; and, read on /metrics just after, the period of each chart's
// slots the daemon serves there (nil when /metrics was not read).
type PlanRead struct {
	At    time.Time
	Units map[string]int64
	Slots map[string]time.Duration
	Err   string
}

// readEvery is about how often a reader comes to the site.
const readEvery = 30 * time.Minute

// readers asks the site for a chart's JSON and then its page, about
// every readEvery (drawn from the seed), the US chart and one of the
// configured charts in turn, and searches after each unless told not to,
// until ctx ends; then it returns what it was served.
func readers(ctx context.Context, seed uint64, charts []regions.Chart, net *pipes, up func() bool, search bool) ([]Served, []PlanRead, []Searched) {
	rng := rand.New(rand.NewPCG(seed, 0x4ead))
	client := &http.Client{Transport: &http.Transport{DialContext: net.dial, DisableKeepAlives: true}}
	var out []Served
	var plans []PlanRead
	var searched []Searched
	planned := 0 // the life whose plan was read
	for i := 0; ; i++ {
		wait := readEvery/2 + time.Duration(rng.Int64N(int64(readEvery)))
		select {
		case <-ctx.Done():
			return out, plans, searched
		case <-time.After(wait):
		}
		if life := net.life(); life != planned && up() {
			if p := readPlan(ctx, client); p.Err == "" || up() {
				plans = append(plans, p)
				planned = life
			}
		}
		region := "US"
		if i%2 == 1 {
			region = charts[rng.IntN(len(charts))].Code
		}
		was := up()
		s := read(ctx, client, region)
		s.Down = !was || !up()
		if ctx.Err() != nil {
			return out, plans, searched // the read the simulation's end cut short
		}
		out = append(out, s)
		if search {
			searched = append(searched, searches(ctx, client, i, s, up)...)
		}
	}
}

// pageAt is where a chart's page says when its run's views were fetched.
var pageAt = regexp.MustCompile(`gave them at <time datetime="([^"]+)"`)

// read is one reader's visit to region's chart: its JSON, then its page.
func read(ctx context.Context, client *http.Client, region string) Served {
	s := Served{At: time.Now(), Region: region}
	body, err := get(ctx, client, "/api/v1/charts/"+region)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	var chart struct {
		RunID   int64   `json:"run_id"`
		PrevRun *int64  `json:"previous_run_id"`
		PrevAt  *string `json:"previous_at"`
		NextRun *int64  `json:"next_run_id"`
		DayRun  *int64  `json:"day_ago_run_id"`
		DayAt   *string `json:"day_ago_at"`
		Status  string  `json:"status"`
		Whole   bool    `json:"complete"`
		At      *string `json:"at"`
		Entries []struct {
			Rank          int    `json:"rank"`
			Prev          *int   `json:"previous_rank"`
			ID            string `json:"id"`
			Title         string `json:"title"`
			AudioLanguage string `json:"audio_language"`
			Language      string `json:"language"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(body, &chart); err != nil {
		s.Err = fmt.Sprintf("/api/v1/charts/%s: %v", region, err)
		return s
	}
	s.RunID = chart.RunID
	s.PrevRunID, s.NextRunID, s.DayRunID = orZero(chart.PrevRun), orZero(chart.NextRun), orZero(chart.DayRun)
	s.PrevAt, s.DayAt = orZero(chart.PrevAt), orZero(chart.DayAt)
	s.Status, s.Complete = chart.Status, chart.Whole
	for _, e := range chart.Entries {
		sh := Shown{Rank: e.Rank, ID: e.ID, Title: e.Title, AudioLanguage: e.AudioLanguage, Language: e.Language}
		if e.Prev != nil {
			sh.Prev = *e.Prev
		}
		s.Entries = append(s.Entries, sh)
	}
	if chart.At != nil {
		s.RunAt = *chart.At
	}
	page, err := get(ctx, client, "/charts/"+region)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	if m := pageAt.FindSubmatch(page); m != nil {
		s.PageAt = string(m[1])
	}
	return s
}

// orZero is what p points at, the zero value for nil: a field the
// API leaves null.
func orZero[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// readPlan reads the day's plan on /quota.
func readPlan(ctx context.Context, client *http.Client) PlanRead {
	p := PlanRead{At: time.Now(), Units: map[string]int64{}}
	body, err := get(ctx, client, "/quota")
	if err != nil {
		p.Err = err.Error()
		return p
	}
	var report struct {
		Plan []struct {
			Pool  string `json:"pool"`
			Units int64  `json:"units_per_day"`
		} `json:"plan"`
	}
	if err := json.Unmarshal(body, &report); err != nil {
		p.Err = fmt.Sprintf("/quota: %v", err)
		return p
	}
	for _, l := range report.Plan {
		p.Units[l.Pool] = l.Units
	}
	body, err = get(ctx, client, "/metrics")
	if err != nil {
		p.Err = err.Error()
		return p
	}
	p.Slots = map[string]time.Duration{}
	for _, m := range slotSeries.FindAllSubmatch(body, -1) {
		secs, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			p.Err = fmt.Sprintf("/metrics: ingest_chart_slot_seconds{chart=%q}: %v", m[1], err)
			return p
		}
		p.Slots[string(m[1])] = time.Duration(secs * float64(time.Second))
	}
	return p
}

// slotSeries is a chart's ingest_chart_slot_seconds on /metrics.
var slotSeries = regexp.MustCompile(`(?m)^ingest_chart_slot_seconds\{chart="([^"]*)"\} (\S+)$`)

func get(ctx context.Context, client *http.Client, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+listenAddr+path, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusNotFound {
		return nil, fmt.Errorf("%s: %s", path, res.Status)
	}
	return body, nil
}
