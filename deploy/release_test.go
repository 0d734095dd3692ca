package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// release is the file VERSION at the repository's root: the one place the
// release is written.
func release(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(data))
	if !pinnedTag.MatchString(v) {
		t.Fatalf("VERSION holds %q, want a release's version", v)
	}
	return v
}

// latestReleased is the version of CHANGELOG.md's first section after
// Unreleased.
var latestReleased = regexp.MustCompile(`(?m)^## v?([0-9]+\.[0-9]+\.[0-9]+)\b`)

// TestReleaseIsNamedOnce: CHANGELOG.md's latest released section, the
// image's tag, the tag `make image` builds and the binary inside agree
// with VERSION. The binary embeds the file, so the Dockerfile's build
// names it as long as the file reaches the build and no build argument
// claims another version.
func TestReleaseIsNamedOnce(t *testing.T) {
	v := release(t)
	changelog, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.SplitN(string(changelog), "\n## ", 2)[1], "Unreleased") {
		t.Errorf("CHANGELOG.md: the first section is not Unreleased")
	}
	if m := latestReleased.FindSubmatch(changelog); m == nil || string(m[1]) != v {
		t.Errorf("CHANGELOG.md's latest released section is %q, VERSION %s", m, v)
	}
	image := kustomizedImage(t)
	if _, tag, _ := strings.Cut(image, ":"); strings.TrimPrefix(tag, "v") != v {
		t.Errorf("%s: the image's tag is %q, VERSION %s", imageComponent, tag, v)
	}
	if mk, err := exec.LookPath("make"); err == nil {
		// At the release's own clean commit the tag is the release; past
		// it, or with uncommitted changes, never the tag the manifests pin.
		for _, c := range []struct{ since, dirty, tag string }{
			{"0", "", ":" + v + " "},
			{"3", "", ":" + v + "_3.g0123456789ab "},
			{"0", "true", ":" + v + "_dirty "},
			{"", "", ":" + v + "_unknown "},
		} {
			out, err := exec.Command(mk, "-s", "-n", "-C", "..", "image",
				"REVISION=0123456789ab", "SINCE="+c.since, "DIRTY="+c.dirty).CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.tag) || strings.Contains(string(out), "VERSION") {
				t.Errorf("make -n image SINCE=%q DIRTY=%q does not tag %s, or passes a version of its own: %v\n%s", c.since, c.dirty, c.tag, err, out)
			}
		}
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"main.version", "ARG VERSION"} {
		if strings.Contains(string(dockerfile), bad) {
			t.Errorf("Dockerfile sets the version itself (%s): the binary reads VERSION", bad)
		}
	}
	if !regexp.MustCompile(`(?m)^COPY \. \.$`).Match(dockerfile) {
		t.Errorf("Dockerfile does not copy the whole source, VERSION with it, into its build")
	}
	ignore, _ := os.ReadFile("../.dockerignore")
	for _, line := range strings.Fields(string(ignore)) {
		if ok, _ := regexp.MatchString("^/?"+strings.ReplaceAll(regexp.QuoteMeta(line), `\*`, ".*")+"$", "VERSION"); ok {
			t.Errorf(".dockerignore leaves VERSION out of the build (%s)", line)
		}
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(makefile), "main.version") {
		t.Errorf("Makefile sets the version itself: the binary reads VERSION")
	}
}

// TestPodsRequestResources: every container that any kustomization
// renders, and the CronJob kept beside them, asks for the CPU and memory
// it needs and is held to a memory limit, so that a scheduler places it
// and a quota admits it.
func TestPodsRequestResources(t *testing.T) {
	for _, k := range kustomizations {
		for name, pod := range pods(render(t, ".", k)) {
			for _, c := range pod.Containers {
				r := c.Resources
				if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
					t.Errorf("%s: %s container %s: resources %+v; want cpu and memory requests and a memory limit", k, name, c.Name, r)
				}
			}
		}
	}
}
