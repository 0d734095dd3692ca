package main

import (
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/web/edge"
)

// cacheControlEnv is --cache-control's variable: one flag of serve and run
// for one purpose (docs/contract.md, Settings).
const cacheControlEnv = "INGEST_CACHE_CONTROL"

var cacheControlUsage = "how long browsers (max-age) and the caches in front (s-maxage, stale-while-revalidate, stale-if-error) may keep a --public listener's answers to anonymous readers, in seconds; a directive left out keeps its default, " +
	strings.ReplaceAll(edge.DefaultPolicy.Flag(), ",", ", ") + "; with --purge-url " +
	strings.ReplaceAll(edge.PurgedPolicy.Flag(), ",", ", ") + " (docs/operations/readers.md, Readers behind a cache)"

// bindCacheControl declares --cache-control on cmd.
func bindCacheControl(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "cache-control", "", cacheControlUsage)
	envflag.With(cmd.Flags().Lookup("cache-control"), cacheControlEnv)
}

// cacheControlFrom names where --cache-control came from, for its errors.
func cacheControlFrom(cmd *cobra.Command) string {
	return envflag.Given(cmd.Flags().Lookup("cache-control"))
}

// parseCacheControl reads --cache-control (a usage error naming from),
// its defaults those of a site purged on each landing when purged.
func parseCacheControl(from, raw string, purged bool) (*edge.Policy, error) {
	base := edge.DefaultPolicy
	if purged {
		base = edge.PurgedPolicy
	}
	p, err := base.With(raw)
	if err != nil {
		return nil, usageErrorf("%s: %v", from, err)
	}
	return &p, nil
}

// purgeURLEnv is --purge-url's variable: one flag of serve and run for one
// purpose (docs/contract.md, Settings).
const purgeURLEnv = "INGEST_PURGE_URL"

const purgeURLUsage = "the caches in front (http://127.0.0.1:6081/,...), each sent PURGE with the keys of the answers a landing changed, in Surrogate-Key and xkey-purge (docs/operations/readers.md, Readers behind a cache)"

// bindPurgeURL declares --purge-url on cmd.
func bindPurgeURL(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "purge-url", "", purgeURLUsage)
	envflag.With(cmd.Flags().Lookup("purge-url"), purgeURLEnv)
}

// purgeURLFrom names where --purge-url came from, for its errors.
func purgeURLFrom(cmd *cobra.Command) string { return envflag.Given(cmd.Flags().Lookup("purge-url")) }

// parsePurgeURLs reads --purge-url: absolute http or https URLs, comma
// separated (a usage error naming from otherwise); none when it is empty.
func parsePurgeURLs(from, raw string) ([]*url.URL, error) {
	var out []*url.URL
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageErrorf("%s: want absolute http or https URLs such as http://127.0.0.1:6081/, comma separated, got %q", from, ingest.Redact(part))
		}
		out = append(out, u)
	}
	return out, nil
}
