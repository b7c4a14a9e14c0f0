package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-shim/agent-shim/statefile"
)

// TestRunSweepsDeadTemp: a hook run killed while it wrote the fingerprint
// left its temporary file; the next run removes it, even one that finds
// nothing to do, and keeps a live writer's.
func TestRunSweepsDeadTemp(t *testing.T) {
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprint("unchanged=", same), func(t *testing.T) {
			state := t.TempDir()
			fpPath := filepath.Join(state, fingerprintFile)
			if same {
				writeFile(t, fpPath, "fp1\n", 0o600)
			}
			dead := filepath.Join(state, statefile.TempPrefix(fpPath)+"999999999-1")
			live := filepath.Join(state, statefile.TempPrefix(fpPath)+fmt.Sprint(os.Getppid())+"-2")
			writeFile(t, dead, "fp0", 0o600)
			writeFile(t, live, "fp0", 0o600)
			err := Run(context.Background(), RunOptions{
				Args: []string{"0"}, StateDir: state,
				Fingerprint: func() (string, error) { return "fp1", nil },
				Apply:       func(context.Context) error { return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dead); err == nil {
				t.Error("a dead run's temporary file was left")
			}
			if _, err := os.Stat(live); err != nil {
				t.Errorf("a live writer's temporary file was removed: %v", err)
			}
		})
	}
}
