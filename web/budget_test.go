package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/web/throttle"
)

// TestFloodWaitsItsTurnHotPagesDoNot: with the budget's one build taken by
// an anonymous search that is slow, another unique search is answered
// 503 with Retry-After once its wait is over, as JSON on the API, while a
// kept page is answered 200 at once and a signed-in reader's search is
// built outside the budget; when the slow build ends, searches are built
// again.
func TestFloodWaitsItsTurnHotPagesDoNot(t *testing.T) {
	t.Parallel()
	rb, entered, release := slowSearches(t)
	rb.armed.Store(true)
	slow := make(chan int, 1)
	go func() {
		code, _, _ := rb.get(t, "/search?q=slow")
		slow <- code
	}()
	<-entered // the budget's one build is taken

	code, retry, body := rb.getHeader(t, "/api/v1/search?q=flood", "Retry-After")
	var e errorBody
	if code != http.StatusServiceUnavailable || retry != budgetRetry || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "busy" {
		t.Errorf("a unique search while the budget is taken: got %d, Retry-After %q, %s; want 503 busy with Retry-After %s", code, retry, body, budgetRetry)
	}
	if code, _, page := rb.get(t, "/search?q=flood2"); code != http.StatusServiceUnavailable || !strings.Contains(page, "busy") {
		t.Errorf("a unique search page while the budget is taken: got %d; want 503 saying the site is busy", code)
	}
	if code, _, _ := rb.get(t, "/charts/US"); code != 200 {
		t.Errorf("the kept hot page while the budget is taken: got %d, want 200", code)
	}
	if code, _, _ := rb.get(t, "/search?q=mine", "Authorization", "Bearer some-token"); code == http.StatusServiceUnavailable {
		t.Errorf("a search carrying a token while the budget is taken: got 503, want it outside the budget")
	}
	close(release)
	if code := <-slow; code != 200 {
		t.Errorf("the slow search: got %d, want 200", code)
	}
	if code, _, _ := rb.get(t, "/api/v1/search?q=flood"); code != 200 {
		t.Errorf("a unique search after the budget is free: got %d, want 200", code)
	}
	if n := rb.s.budget.Figures().Refused; n != 2 {
		t.Errorf("%d requests refused, want the 2 over the budget", n)
	}
}

// getHeader is get, with one header of the answer.
func (rb *rebuilding) getHeader(t *testing.T, path, name string) (int, string, string) {
	t.Helper()
	res, err := (&http.Client{Timeout: 20 * time.Second}).Get(rb.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.StatusCode, res.Header.Get(name), b.String()
}

// TestBudgetFiguresSayTurnsAndBusy: the budget's figures (what /metrics
// exports) count each anonymous build given a turn and each request
// answered busy, and say the build running in it and the request
// waiting for a turn while they do; a kept page and a request with a
// token count in none of them.
func TestBudgetFiguresSayTurnsAndBusy(t *testing.T) {
	t.Parallel()
	rb, entered, release := slowSearches(t)
	if f := rb.s.Budget(); f != (throttle.BudgetFigures{Admitted: 1, Slots: 1}) {
		t.Errorf("after a page's first build: %+v, want 1 admitted of 1 slot", f)
	}
	rb.armed.Store(true)
	slow := make(chan int, 1)
	go func() {
		code, _, _ := rb.get(t, "/search?q=slow")
		slow <- code
	}()
	<-entered
	waited := make(chan int, 1)
	go func() {
		code, _, _ := rb.get(t, "/search?q=waits")
		waited <- code
	}()
	// The second search waits for its turn a second before it is
	// refused: its wait is seen within it, or it is refused unseen.
	var during throttle.BudgetFigures
	for during = rb.s.Budget(); during.Waiting == 0 && len(waited) == 0; during = rb.s.Budget() {
		time.Sleep(time.Millisecond)
	}
	if code := <-waited; code != http.StatusServiceUnavailable {
		t.Fatalf("a search while the budget is taken: got %d, want 503", code)
	}
	if during != (throttle.BudgetFigures{Admitted: 2, Running: 1, Waiting: 1, Slots: 1}) {
		t.Errorf("while a search waits for the slow one's turn: %+v, want 2 admitted, 1 running, 1 waiting", during)
	}
	rb.get(t, "/charts/US")
	rb.get(t, "/search?q=mine", "Authorization", "Bearer some-token")
	close(release)
	<-slow
	if f := rb.s.Budget(); f != (throttle.BudgetFigures{Admitted: 2, Refused: 1, Slots: 1}) {
		t.Errorf("after the slow search: %+v, want 2 admitted, 1 busy, none running or waiting", f)
	}
}

// slowSearches is a site whose budget holds one build, its hot page
// /charts/US built and kept: a search for "slow" says so on entered when
// its build starts and holds it until release closes.
func slowSearches(t *testing.T) (rb *rebuilding, entered chan struct{}, release chan struct{}) {
	t.Helper()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	entered, release = make(chan struct{}, 8), make(chan struct{})
	rb = newRebuilding(t, &now, time.Minute, func(r *http.Request) {
		if r.URL.Query().Get("q") == "slow" {
			entered <- struct{}{}
			<-release
		}
	})
	rb.s.budget = throttle.NewBudget(1)
	if code, _, _ := rb.get(t, "/charts/US"); code != 200 {
		t.Fatalf("the hot page's first build: got %d", code)
	}
	return rb, entered, release
}
