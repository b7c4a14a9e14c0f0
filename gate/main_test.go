package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain pins HOME and the XDG directories to a temporary directory: no
// test reads or writes the real ones.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gate-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	os.Setenv("HOME", filepath.Join(dir, "home"))
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		os.Setenv(v, filepath.Join(dir, v))
	}
	return m.Run()
}
