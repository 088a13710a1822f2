//go:build race

package hooks

// raceDetector: this test binary runs under -race, which makes sync.Pool
// drop what is put back and so inflates what a request allocates; bounds on
// allocated bytes hold only without it (make test runs them so too).
const raceDetector = true
