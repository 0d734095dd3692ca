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

// BenchmarkGeneratedChart is what the first read of a generated region's
// chart costs.
func BenchmarkGeneratedChart(b *testing.B) {
	fx := buildFixtures()
	for b.Loop() {
		generatedChart("MX", fx.generated["MX"].hits)
	}
}

// BenchmarkEveryGeneratedChart is what a lookup of an id no chart served
// costs the first time: every generated chart.
func BenchmarkEveryGeneratedChart(b *testing.B) {
	for b.Loop() {
		fx := buildFixtures()
		fx.video("no such id")
	}
}
