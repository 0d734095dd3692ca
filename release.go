package ingest

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var release string

// Release is the version this source is released as: the file VERSION,
// the one place it is written. The binary embeds it, so that any build
// (make, a plain go build, the Dockerfile) names itself; the Makefile tags
// the image with it, and CHANGELOG.md's latest released section and the
// Kubernetes image's tag are held equal to it by deploy/'s tests.
func Release() string { return strings.TrimSpace(release) }
