package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFindsALogAttributeWithNoKey(t *testing.T) {
	const calm = `time=2026-10-25T05:00:00.000Z level=INFO msg=pass region=US status=completed pages=1 videos=50 units=1 duration=0s
time=2026-10-25T05:00:01.000Z level=WARN msg="upstream attempt failed; retrying" op=videos.list attempt=2 delay=512ms err="HTTP 503 \"a=b\" x"
`
	for _, c := range []struct {
		name, log, want string
	}{
		{"the house's keys", calm, ""},
		{"a value where the key goes", calm + `time=2026-10-25T05:00:02.000Z level=INFO msg="a call Redis admitted after this worker gave up on it was given back" videos.list=op id=1761368400000-3
`, `1 log attributes have a key that is no plain identifier (a value, or !BADKEY, where a key goes): key "videos.list" in daemon.log`},
		{"an odd argument", calm + `time=2026-10-25T05:00:02.000Z level=INFO msg=pass region=US !BADKEY=50
`, `key "!BADKEY"`},
		{"a quoted key", calm + `time=2026-10-25T05:00:02.000Z level=INFO msg=pass "the region"=US
`, `key "\"the region\""`},
	} {
		h := &History{}
		h.Dir = t.TempDir()
		h.Log = filepath.Join(h.Dir, "daemon.log")
		if err := os.WriteFile(h.Log, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		f := checkLogKeys(h)
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}
