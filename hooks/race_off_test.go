//go:build !race

package hooks

// raceDetector: see race_on_test.go.
const raceDetector = false
