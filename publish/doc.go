// Package publish writes a site as files a static host serves (nginx, an
// object store behind a CDN): it asks the site's own handler for each
// page, in the process, so that a file holds the bytes the server sends,
// and follows the links the pages hold to every page a reader can reach
// from the seeds it is given.
//
// A path is a file by one rule a host can follow without rewriting a
// byte (File): a path whose last segment has an extension is that file
// (/static/style.3f2a9c1b.css, /robots.txt, /sitemap.xml); any other is
// the index of a directory of its name, named by what it holds
// (/charts/US is charts/US/index.html, /charts/US/feed
// charts/US/feed/index.atom, /api/v1/charts/US
// api/v1/charts/US/index.json), since a path such as /charts/US is both a
// page and the parent of its feed. deploy/nginx/ingest-published.conf
// serves the layout with one try_files.
//
// The directory is replaced for a reader one file at a time, and never
// shows a page linking a file that is not there yet: each changed file is
// written beside its name, synced, and renamed over it, the files a page
// links before the page (the stylesheet and images, the JSON, the videos,
// the charts, then the pages that lead to them, the feeds last); a file
// whose bytes did not change is left as it is, so its time stays and a
// sync to an object store carries only what moved. What no current page
// links any more is removed last, after every page that linked it was
// replaced. Only files a publish wrote are ever removed: the directory's
// list of them (ManifestName) is written after the rest.
//
// Pages whose links run both ways (a chart and its videos, a page and its
// feed) cannot all come after one another: the order above puts the
// targets first, so only a page new in this publish can be linked before
// it is there, and only from a page of an earlier kind (a new chart's
// page from its videos' pages, written just before it).
package publish
