//go:build !race

package pace_test

const raceEnabled = false
