//go:build !race

package initcost_test

// raceAllocs is 0 without the race detector; see race_test.go.
const raceAllocs = 0
