package wiring_test

import (
	"context"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/wiring"
)

// The ledger wiring gives the limiters keeps a decision of unknown outcome
// in the store's table, every field, until it is resolved.
func TestLedgerKeepsUnknownsInTheStore(t *testing.T) {
	ctx := context.Background()
	d, err := wiring.Open(ctx, filepath.Join(t.TempDir(), "ingest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	led, err := d.QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(time.Now().UnixMilli()).UTC()
	u := ingest.Unknown{QuotaKey: "q", Instance: "i1", Token: 7, Op: ingest.OpVideosList, At: at,
		Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
	if err := led.Unknowns.RecordUnknown(ctx, u); err != nil {
		t.Fatal(err)
	}
	got, err := led.Unknowns.Unknowns(ctx, "q")
	if err != nil || len(got) != 1 {
		t.Fatalf("unknowns: got %+v, %v; want the one recorded", got, err)
	}
	got[0].At = got[0].At.UTC()
	if !reflect.DeepEqual(got[0], u) {
		t.Fatalf("unknown read back: got %+v, want %+v", got[0], u)
	}
	if err := led.Unknowns.ResolveUnknown(ctx, u, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := led.Unknowns.Unknowns(ctx, "q"); err != nil || len(got) != 0 {
		t.Fatalf("after resolving: got %+v, %v; want none", got, err)
	}
}

// Nothing imports wiring but the command, the simulation (which builds
// the daemon as the command does, its edges swapped) and tests: it sits
// just below cmd.
func TestOnlyCmdImportsWiring(t *testing.T) {
	const path = "github.com/ingestworks/ingest/wiring"
	err := filepath.WalkDir("..", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		for _, builder := range []string{"../cmd/", "../wiring/", "../internal/rig/sim/"} {
			if strings.HasPrefix(filepath.ToSlash(p), builder) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if v, _ := strconv.Unquote(imp.Path.Value); v == path {
				t.Errorf("%s imports wiring: only cmd and the simulation may", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
