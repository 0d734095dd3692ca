package main

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// searchURLEnv is --search-url's variable: one flag of publish and run
// (--publish) for one purpose.
const searchURLEnv = "INGEST_SEARCH_URL"

const searchURLUsage = "where a published site's search form points (a serve --public's https://charts.example.org/search); without it the published pages have no search"

type publishFlags struct {
	publicURL, publicURLFrom string
	searchURL, searchURLFrom string
	noThumbs                 bool
}

// bind declares publish's flags on cmd, the same for publish and run.
func (f *publishFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.searchURL, "search-url", "", searchURLUsage)
	envflag.With(cmd.Flags().Lookup("search-url"), searchURLEnv)
}

func newPublishCmd(s *settings) *cobra.Command {
	f := &publishFlags{}
	cmd := &cobra.Command{
		Use:   "publish DIR",
		Short: "Write the readers' site into DIR as files any static host serves",
		Long: `publish writes the readers' site over the database into DIR, as files
nginx or an object store behind a CDN serves: every chart's page, its JSON
and its feed, the worldwide page, the front page, the videos the pages link,
robots.txt, the sitemap (with --public-url), the stylesheet and images. Each
holds the bytes serve --public sends for its address: the pages are asked of
that site in the process. deploy/nginx/ingest-published.conf serves DIR.

A reader of DIR never finds a page linking a file that is not there yet:
each changed file is written beside its name and renamed over it, the files
a page links first; a file whose bytes did not change is not written, so a
sync to an object store uploads what moved; what no page links any more is
removed last. Only files a publish wrote are removed (DIR/.ingest-published
lists them). It spends no upstream quota. Search is not static: the form
points at --search-url, and is left out without it (docs/operations/readers.md,
"Publish").`,
		Example: `  ingest publish --db demo/ingest.db site/
  ingest publish --public-url https://charts.example.org/ --search-url https://charts.example.org/search /srv/charts`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.publicURLFrom = publicURLFrom(cmd)
			f.searchURLFrom = envflag.Given(cmd.Flags().Lookup("search-url"))
			return runPublish(cmd.Context(), s, f, args[0])
		},
	}
	f.bind(cmd)
	bindPublicURL(cmd, &f.publicURL)
	cmd.Flags().BoolVar(&f.noThumbs, "no-thumbnails", false, "show no thumbnails: the pages load nothing from YouTube's image host")
	return cmd
}

func runPublish(ctx context.Context, s *settings, f *publishFlags, dir string) error {
	p, err := f.settings("DIR", dir)
	if err != nil {
		return err
	}
	db, err := openExisting(ctx, s)
	if err != nil {
		return err
	}
	defer db.Close()
	k, _ := apiKey()
	p.Serve.QuotaKey, p.Serve.APIKey, p.Serve.Standing = s.quotaKey, k, s.standing
	logged := newProgressLog(s.logger, "publish: writing pages", s.clock.Now)
	p.Progress = func(done, known int) { logged.at(int64(done), int64(known)) }
	start := s.clock.Now()
	res, err := s.host().Publish(ctx, db, p)
	if err != nil {
		return err
	}
	s.logger.Info("published", "dir", dir, "files", res.Files, "bytes", res.Bytes, "written", res.Written,
		"written_bytes", res.WrittenBytes, "removed", res.Removed, "took", s.clock.Now().Sub(start).Round(time.Millisecond).String())
	return nil
}

// settings checks the flags and the directory (named by from: DIR, or
// --publish), before anything is read.
func (f *publishFlags) settings(from, dir string) (wiring.Publish, error) {
	if err := checkPublishDir(from, dir); err != nil {
		return wiring.Publish{}, err
	}
	pub, err := parsePublicURL(f.publicURLFrom, f.publicURL)
	if err != nil {
		return wiring.Publish{}, err
	}
	if err := checkSearchURL(f.searchURLFrom, f.searchURL); err != nil {
		return wiring.Publish{}, err
	}
	sch, err := (&scheduleFlags{every: time.Hour}).schedule()
	if err != nil {
		return wiring.Publish{}, err
	}
	return wiring.Publish{Dir: dir, SearchURL: f.searchURL,
		Serve: wiring.Serve{Schedule: sch, Web: web.Config{PublicURL: pub, NoThumbnails: f.noThumbs}}}, nil
}

// checkPublishDir wants a directory this process can write into, making
// it when it is missing; a usage error naming from otherwise.
func checkPublishDir(from, dir string) error {
	if dir == "" {
		return usageErrorf("%s: want a directory to publish into", from)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usageErrorf("%s %s: cannot make it: %v", from, dir, unwrapPath(err))
		}
	case err != nil:
		return usageErrorf("%s %s: %v", from, dir, unwrapPath(err))
	case !st.IsDir():
		return usageErrorf("%s %s: not a directory: give a directory for the site's files", from, dir)
	}
	probe, err := os.CreateTemp(dir, ".ingest-publish-probe-*")
	if err != nil {
		return usageErrorf("%s %s: cannot write into it: %v", from, dir, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// unwrapPath is err without the path os puts before it, which the
// message names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkSearchURL wants an absolute http or https URL, or nothing.
func checkSearchURL(from, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("%s: want an absolute http or https URL of a search such as https://charts.example.org/search, got %q", from, ingest.Redact(raw))
	}
	return nil
}
