package main

import (
	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/internal/envflag"
	"github.com/ingestworks/ingest/web"
)

// cacheControlEnv is --cache-control's variable: one flag of serve and run
// for one purpose (docs/contract.md, Settings).
const cacheControlEnv = "INGEST_CACHE_CONTROL"

const cacheControlUsage = "how long browsers (max-age) and the caches in front (s-maxage, stale-while-revalidate, stale-if-error) may keep a --public listener's answers to anonymous readers, in seconds; a directive left out keeps its default (docs/operations.md, Readers behind a cache)"

// bindCacheControl declares --cache-control on cmd.
func bindCacheControl(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "cache-control", web.DefaultCachePolicy.Flag(), cacheControlUsage)
	envflag.With(cmd.Flags().Lookup("cache-control"), cacheControlEnv)
}

// cacheControlFrom names where --cache-control came from, for its errors.
func cacheControlFrom(cmd *cobra.Command) string {
	return envflag.Given(cmd.Flags().Lookup("cache-control"))
}

// parseCacheControl reads --cache-control (a usage error naming from).
func parseCacheControl(from, raw string) (*web.CachePolicy, error) {
	p, err := web.ParseCachePolicy(raw)
	if err != nil {
		return nil, usageErrorf("%s: %v", from, err)
	}
	return &p, nil
}
