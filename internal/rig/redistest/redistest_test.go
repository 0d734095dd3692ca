package redistest

import "testing"

func TestStartAndCluster(t *testing.T) {
	s := Start(t)
	if got, err := Do(s.Addr, "SET", "k", "v"); err != nil || got != "+OK" {
		t.Fatalf("SET: got %q, %v; want +OK", got, err)
	}
	s.Restart(t)
	if got, _ := Do(s.Addr, "EXISTS", "k"); got != ":0" {
		t.Fatalf("EXISTS after restart: got %q, want :0 (empty server)", got)
	}
	c := StartCluster(t)
	if got, err := Do(c.Nodes[0].Addr, "CLUSTER", "KEYSLOT", "{q}a"); err != nil || got == "" {
		t.Fatalf("CLUSTER KEYSLOT: got %q, %v", got, err)
	}
}
