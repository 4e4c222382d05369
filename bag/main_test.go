package bag

import (
	"flag"
	"os"
	"testing"
)

// TestMain bounds the fuzzer's minimization of each new input to 200 runs
// unless -fuzzminimizetime is given. Its default (60 s per input) made
// FuzzMCAP and FuzzMetadata run ~14 inputs in 45 s: their inputs are
// kilobytes of YAML or MCAP taking a millisecond a run, and the minimizer's
// byte-subset pass is quadratic in the input's length, so every input that
// found new coverage held the worker for the full minute.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", "200x"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
