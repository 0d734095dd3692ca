// Package npmtest installs a package from npm for the tests that drive
// JavaScript: axe-core for the accessibility checks, the official YouTube
// client for the proxy's. A machine without npm skips the test, saying
// what needed it.
package npmtest

import (
	"os/exec"
	"testing"
)

// Install installs pkg (name@version, as npm takes it) into a directory of
// t's, whose node_modules then holds it, and returns the directory; it
// skips t when npm is missing, saying that why needs pkg.
func Install(t testing.TB, pkg, why string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm is not installed: %s needs %s from npm", why, pkg)
	}
	dir := t.TempDir()
	out, err := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("npm install %s: %v\n%s", pkg, err, out)
	}
	return dir
}
