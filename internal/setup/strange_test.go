package setup

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStrangeFiles: a FIFO or a link to /dev/zero at any file agents-setup
// reads (config.json, state.json, the journal, adhoc.json, a manifest, an
// --allow-list file) is an error naming the file, never a hang holding the
// config's lock, and nothing is written.
func TestStrangeFiles(t *testing.T) {
	files := []struct {
		name string
		path func(e *env) string
		op   func(*Options)
	}{
		{"config.json", func(e *env) string { return e.cfg }, applyA},
		{"state.json", func(e *env) string { return filepath.Join(e.state, "state.json") }, applyA},
		{"pending.json", func(e *env) string { return filepath.Join(e.state, journalFile) }, applyA},
		{"adhoc.json", func(e *env) string { return filepath.Join(e.state, adhocFile) }, applyA},
		{"read_only.txt", func(e *env) string {
			return filepath.Join(e.root, ".agents", "config", "permissions", "read_only.txt")
		}, applyA},
		{"list.txt", func(e *env) string { return filepath.Join(e.home, "list.txt") }, func(o *Options) {
			applyA(o)
			o.AllowLists = []string{filepath.Join(filepath.Dir(o.StateDir), "list.txt")}
		}},
	}
	for _, f := range files {
		for _, kind := range []string{"fifo", "dev-zero"} {
			t.Run(f.name+"/"+kind, func(t *testing.T) {
				e := newEnv(t)
				e.mustRun(t, e.opts(applyB))
				statePath := filepath.Join(e.state, "state.json")
				st0 := readFile(t, statePath)
				path := f.path(e)
				os.Remove(path)
				var err error
				if kind == "fifo" {
					err = syscall.Mkfifo(path, 0o600)
				} else {
					err = os.Symlink("/dev/zero", path)
				}
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { _, err := e.run(t, e.opts(f.op)); done <- err }()
				select {
				case err := <-done:
					t.Logf("error: %v", err)
					if err == nil || !strings.Contains(err.Error(), f.name) {
						t.Errorf("got %v, want an error naming %s", err, f.name)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("agents-setup hung")
				}
				if path != statePath && readFile(t, statePath) != st0 {
					t.Error("state.json written")
				}
			})
		}
	}
}
