package matcher

import (
	"flag"
	"os"
	"testing"
)

// TestMain shortens Go's minimisation of new fuzz inputs to 5 s unless
// -fuzzminimizetime is given. The fuzzer minimises every new interesting
// input (default: up to 60 s each) before it counts or reports anything,
// so FuzzDecide looked stalled at 0 execs/s for most of a minute at a
// time; a shorter bound keeps it fuzzing and costs only corpus entries a
// little longer than they could be.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", "5s")
	}
	os.Exit(m.Run())
}
