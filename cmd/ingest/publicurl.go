package main

import (
	"net/url"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/util/envflag"
)

// publicURLEnv is --public-url's variable: one flag of serve and run for
// one purpose (docs/contract.md, Settings).
const publicURLEnv = "INGEST_PUBLIC_URL"

const publicURLUsage = "the site's address as its readers reach it, behind any proxy (https://charts.example.org/): feeds link absolutely under it, pages name it as their canonical address, and /sitemap.xml is served; never taken from a request's Host (docs/operations/readers.md)"

// bindPublicURL declares --public-url on cmd.
func bindPublicURL(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "public-url", "", publicURLUsage)
	envflag.With(cmd.Flags().Lookup("public-url"), publicURLEnv)
}

// publicURLFrom names where --public-url came from, for its errors.
func publicURLFrom(cmd *cobra.Command) string { return envflag.Given(cmd.Flags().Lookup("public-url")) }

// parsePublicURL reads --public-url: nil when it is not set, else an
// absolute http or https URL of the site's root, with no credentials,
// query or fragment (a usage error naming from otherwise). The pages link
// from the root, so a path below it would give links that lead nowhere.
func parsePublicURL(from, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, usageErrorf("%s: not a URL: %q", from, ingest.Redact(raw))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return nil, usageErrorf("%s: want an absolute http or https URL such as https://charts.example.org/, got %q", from, ingest.Redact(raw))
	case u.User != nil:
		return nil, usageErrorf("%s: a public address carries no user or password, got one in %q", from, ingest.Redact(raw))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "":
		return nil, usageErrorf("%s: want the site's address without a query or fragment, got %q", from, ingest.Redact(raw))
	case u.Path != "" && u.Path != "/":
		return nil, usageErrorf("%s: ingest serves its pages from the root of its address: want %s://%s/, without the path %q (a proxy that serves it under a path is not supported)",
			from, u.Scheme, u.Host, u.Path)
	}
	u.Path = "/"
	return u, nil
}
