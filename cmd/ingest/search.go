package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
)

type searchFlags struct {
	region   string
	language string
	limit    int
	json     bool
}

func newSearchCmd(s *settings) *cobra.Command {
	f := &searchFlags{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the stored videos (costs no quota)",
		Long: `search looks through every stored video's title, description, tags and
channel name, best match first (a title match weighs most). It reads only
the local database: it never calls the upstream or spends quota.

Words match whatever their accents (muller finds Müller). End a word with *
for a prefix (foot*), put words in double quotes for a phrase ("world cup").
Any other punctuation is taken literally.`,
		Example: `  ingest search football
  ingest search '"world cup"' --region BR --limit 5
  ingest search cricket --region IN --language hi
  ingest search muller --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usageErrorf("search: give a QUERY, e.g. ingest search football")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSearch(cmd.Context(), cmd.OutOrStdout(), s, f, strings.Join(args, " "))
		},
	}
	cmd.Flags().StringVar(&f.region, "region", "", "only videos seen in this region (ISO 3166-1 alpha-2)")
	cmd.Flags().StringVar(&f.language, "language", "", "only videos in this language (BCP-47: hi, en-US, zxx): their audio's or their text's,\nor a narrower form of it (hi keeps hi-IN)")
	cmd.Flags().IntVar(&f.limit, "limit", 20, "at most this many results (1-1000)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print a JSON array: id, title, channel, audio_language, language, snippet, regions, views, score")
	return cmd
}

func runSearch(ctx context.Context, out io.Writer, s *settings, f *searchFlags, query string) error {
	region, err := parseRegion("--region", f.region)
	if err != nil {
		return err
	}
	if f.limit < 1 || f.limit > 1000 {
		return usageErrorf("--limit: want 1 to 1000, got %d", f.limit)
	}
	language, err := store.Language(f.language)
	if err != nil {
		return usageErrorf("--language: %q is not a BCP-47 language tag (hi, en-US, zxx)", f.language)
	}
	db, err := openExisting(ctx, s)
	if errors.Is(err, store.ErrNoDatabase) {
		s.noneYet() // no database reads as an empty one
		return printSearch(out, nil, f.json)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	hits, err := db.Search(ctx, query, store.SearchOptions{Region: region, Language: language, Limit: f.limit})
	if errors.Is(err, store.ErrBadQuery) {
		return usageErrorf("search %q: %w", query, err)
	}
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	return printSearch(out, hits, f.json)
}

func printSearch(out io.Writer, hits []store.Hit, asJSON bool) error {
	if asJSON {
		return writeJSON(out, web.Hits(hits))
	}
	web.WriteHits(out, hits)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
