package supervisor

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// The test binary is the supervisor: Run re-executes it in the child
	// mode.
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(Child(os.Stderr))
	}
	os.Exit(m.Run())
}
