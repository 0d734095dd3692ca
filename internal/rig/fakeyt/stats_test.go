package fakeyt

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// service is the real client pointed at the fixture's server.
func (fx *fixture) service(t *testing.T) *youtube.Service {
	t.Helper()
	svc, err := youtube.NewService(context.Background(), option.WithEndpoint(fx.srv.URL+"/"), option.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// chartIDs returns the first n ids of region's chart.
func (fx *fixture) chartIDs(region string, n int) []string {
	var ids []string
	for _, v := range fx.fake.fx.charts[region][:n] {
		ids = append(ids, v.ID)
	}
	return ids
}

func TestBatchGetStatsWithTheRealClient(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ids := fx.chartIDs("US", 50)
	res, err := fx.service(t).Videos.BatchGetStats().Id(ids...).
		Part("snippet", "statistics", "contentDetails").Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "youtube#batchGetStatsResponse" || len(res.Items) != 50 {
		t.Fatalf("kind %q, %d items; want youtube#batchGetStatsResponse, 50", res.Kind, len(res.Items))
	}
	for i, it := range res.Items {
		v := fx.fake.fx.byID[ids[i]]
		if it.Id != ids[i] || it.Kind != "youtube#videoStats" {
			t.Errorf("item %d = %s %q, want %s youtube#videoStats (order kept)", i, it.Id, it.Kind, ids[i])
			continue
		}
		if got := it.Statistics.ViewCount; got != int64(v.Views) {
			t.Errorf("%s viewCount = %d, want %d", it.Id, got, v.Views)
		}
		if want := v.PublishedAt.Format(time.RFC3339); it.Snippet.PublishTime != want {
			t.Errorf("%s publishTime = %q, want %q", it.Id, it.Snippet.PublishTime, want)
		}
		if d := it.ContentDetails.Duration; !strings.HasSuffix(d, "s") || strings.HasPrefix(d, "P") {
			t.Errorf("%s duration = %q, want a protobuf Duration", it.Id, d)
		}
	}
	if got, want := fx.fake.ChargedBuckets(key), map[string]int64{BucketStats: 1}; !maps.Equal(got, want) {
		t.Errorf("charged %v, want %v", got, want)
	}
}

func TestBatchGetStatsTooManyIDs(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	_, err := fx.service(t).Videos.BatchGetStats().Id(fx.chartIDs("US", 51)...).Part("statistics").Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 || len(ge.Errors) == 0 || ge.Errors[0].Reason != "invalidFilters" {
		t.Fatalf("51 ids: err = %v, want a 400 invalidFilters", err)
	}
	if !strings.Contains(ge.Message, "50") {
		t.Errorf("message %q does not name the limit", ge.Message)
	}
	if got := fx.fake.ChargedBuckets(key)[BucketStats]; got != 1 {
		t.Errorf("stats charged %d, want 1 (invalid calls cost too)", got)
	}
	for _, q := range []string{"part=statistics&key=" + key, "id=" + fx.chartIDs("US", 1)[0] + "&key=" + key} {
		if status, b := fx.get(t, "/youtube/v3/videos:batchGetStats", q); status != 400 {
			t.Errorf("%s: %d %s, want 400", q, status, b)
		}
	}
}

func TestBatchGetStatsHiddenCountsAbsent(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var hidden []string
	for _, v := range fx.fake.fx.charts["US"] {
		if v.HideLikes && v.HideComments && len(hidden) < 3 {
			hidden = append(hidden, v.ID)
		}
	}
	shown := fx.chartIDs("US", 1)
	if fx.fake.fx.byID[shown[0]].HideLikes || len(hidden) == 0 {
		t.Fatalf("fixtures changed: want a first video with likes shown and some hiding both counts")
	}
	ids := append(hidden, shown...)
	status, b := fx.get(t, "/youtube/v3/videos:batchGetStats", "part=statistics&key="+key+"&id="+strings.Join(ids, ","))
	l := decode(t, b)
	if status != 200 || len(l.Items) != len(ids) {
		t.Fatalf("status %d, %d items, want 200 and %d: %s", status, len(l.Items), len(ids), b)
	}
	for i, it := range l.Items {
		st := it["statistics"].(map[string]any)
		_, likes := st["likeCount"]
		_, comments := st["commentCount"]
		if wantShown := i == len(ids)-1; likes != wantShown || comments != wantShown {
			t.Errorf("%s: likeCount sent %v, commentCount sent %v, want %v", it["id"], likes, comments, wantShown)
		}
		if v, ok := st["viewCount"].(string); !ok {
			t.Errorf("%s: viewCount %v not a string", it["id"], st["viewCount"])
		} else if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			t.Errorf("%s: viewCount %q: %v", it["id"], v, err)
		}
		if _, ok := st["favoriteCount"]; ok {
			t.Errorf("%s: favoriteCount sent; VideoStatsStatistics has none", it["id"])
		}
	}
}

func TestI18nRegionsWithTheRealClient(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	res, err := fx.service(t).I18nRegions.List([]string{"snippet"}).Hl("en_US").Do()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, it := range res.Items {
		names[it.Id] = it.Snippet.Name
		if it.Snippet.Gl != it.Id {
			t.Errorf("%s: gl %q", it.Id, it.Snippet.Gl)
		}
	}
	for _, r := range regions.Default {
		if names[r] == "" {
			t.Errorf("region %s missing from i18nRegions", r)
		}
	}
	if got, want := fx.fake.ChargedByOp(key), map[string]int64{ingest.OpRegionsList: 1}; !maps.Equal(got, want) {
		t.Errorf("charged %v, want %v", got, want)
	}
}

func TestProtoDuration(t *testing.T) {
	t.Parallel()
	for iso, want := range map[string]string{"PT4M13S": "253s", "PT12M": "720s", "PT58S": "58s",
		"PT1H2M5S": "3725s", "PT2H1M": "7260s", "P1D": "0s"} {
		if got := protoDuration(iso); got != want {
			t.Errorf("protoDuration(%q) = %q, want %q", iso, got, want)
		}
	}
}

// TestBucketCaps spends each bucket in turn: calls of the other buckets do
// not count against it, the call that finds it spent gets that bucket's own
// error and is charged to it, and the other buckets go on.
func TestBucketCaps(t *testing.T) {
	t.Parallel()
	const (
		videos = "/youtube/v3/videos"
		search = "/youtube/v3/search"
		stats  = "/youtube/v3/videos:batchGetStats"
	)
	query := map[string]string{
		videos: chartQuery("US", ""),
		search: "key=" + key + "&part=id&type=video&regionCode=US",
		stats:  "key=" + key + "&part=statistics&id=x",
	}
	cases := []struct {
		bucket, path   string
		status         int
		reason, domain string
		msg            string
		others         []string
	}{
		{BucketDefault, videos, 403, "quotaExceeded", "youtube.quota", "quota", []string{search, stats}},
		{BucketSearch, search, 429, "rateLimitExceeded", "global",
			"Quota exceeded for quota metric 'Search Queries' and limit 'Search Queries per day' of service 'youtube.googleapis.com' for consumer 'project_number:",
			[]string{videos, stats}},
		{BucketStats, stats, 429, "rateLimitExceeded", "global", "per day", []string{videos, search}},
	}
	for _, tc := range cases {
		t.Run(tc.bucket, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			fx.fake.SetBucketQuota(tc.bucket, 2)
			// The other buckets' calls count against their own buckets only.
			for _, p := range append(tc.others, tc.others...) {
				if status, b := fx.get(t, p, query[p]); status != 200 {
					t.Fatalf("%s before %s is spent: %d %s", p, tc.bucket, status, b)
				}
			}
			for i := 1; i <= 2; i++ {
				if status, b := fx.get(t, tc.path, query[tc.path]); status != 200 {
					t.Fatalf("call %d under the cap: %d %s", i, status, b)
				}
			}
			status, b := fx.get(t, tc.path, query[tc.path])
			e := decodeErr(t, b)
			if status != tc.status || e.Error.Errors[0].Reason != tc.reason || e.Error.Errors[0].Domain != tc.domain {
				t.Errorf("over the cap: %d %s, want %d %s (%s)", status, b, tc.status, tc.reason, tc.domain)
			}
			if !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", e.Error.Message, tc.msg)
			}
			for _, p := range tc.others {
				if status, b := fx.get(t, p, query[p]); status != 200 {
					t.Errorf("%s with %s spent: %d %s", p, tc.bucket, status, b)
				}
			}
			if got := fx.fake.ChargedBuckets(key)[tc.bucket]; got != 3 {
				t.Errorf("%s charged %d, want 3 (the refused call too)", tc.bucket, got)
			}
			fx.fake.SetBucketQuota(tc.bucket, 0)
			if status, b := fx.get(t, tc.path, query[tc.path]); status != 200 {
				t.Errorf("cap removed: %d %s", status, b)
			}
		})
	}
}
