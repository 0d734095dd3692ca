package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/util/envflag"
)

// bindCategories binds run's --categories, INGEST_RUN_CATEGORIES by the
// rule of util/envflag; INGEST_CATEGORIES is the name it had before.
func bindCategories(cmd *cobra.Command, into *string) {
	cmd.Flags().StringVar(into, "categories", "", "also fetch these categories' charts in every region: ids or names, comma-separated\n(music, gaming, film, movies, sports, news...); each is a pass of its own")
	envflag.Old(cmd.Flags().Lookup("categories"), "INGEST_CATEGORIES")
}

// parseCategories reads --categories: the unfiltered chart ("") first,
// then each category asked for once, by id.
func parseCategories(s string) ([]string, error) {
	out := []string{""}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		id, err := ingest.CategoryID(part)
		if err != nil {
			return nil, usageErrorf("--categories: %v", err)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}
