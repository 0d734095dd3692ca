package fakeyt

import "testing"

// BenchmarkFixtures is what the first fake of a test process pays: the
// handcrafted regions' fixtures, built once and shared by every fake.
func BenchmarkFixtures(b *testing.B) {
	for b.Loop() {
		buildFixtures()
	}
}

// BenchmarkNew is what every further fake costs.
func BenchmarkNew(b *testing.B) {
	New()
	for b.Loop() {
		New()
	}
}
