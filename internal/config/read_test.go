package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
)

// TestLoadStrange: config.json that is a FIFO or a link to /dev/zero is an
// error naming it, from Load and LoadSettings alike, never a hang or an
// unbounded read.
func TestLoadStrange(t *testing.T) {
	for _, kind := range []string{"fifo", "dev-zero"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(path, 0o600)
			} else {
				err = os.Symlink("/dev/zero", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, load := range map[string]func(string) (*File, error){"Load": Load, "LoadSettings": LoadSettings} {
				done := make(chan error, 1)
				go func() { _, err := load(path); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, statefile.ErrNotRegular) || !strings.Contains(err.Error(), path) {
						t.Errorf("%s: got %v, want ErrNotRegular naming %s", name, err, path)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s hung", name)
				}
			}
		})
	}
}

// TestReadersValidate: what agents-setup refuses (Validate), the shim's
// readers refuse too: a hand grant whose regex does not parse, an unknown
// mode or runtime. LoadSettings checks the settings it reads.
func TestReadersValidate(t *testing.T) {
	tests := []struct {
		in       string
		want     string
		settings bool // LoadSettings refuses it too
	}{
		{`{"userSettings": {"globalPermissionGrants": {"deny": ["command(ok)", "command(regex:([a-z)"]}}}`,
			`userSettings.globalPermissionGrants.deny[1]: grant "command(regex:([a-z)": error parsing regexp: missing closing ]`, false},
		{`{"userSettings": {"globalPermissionGrants": {"allow": ["command(regex:a**)"]}}}`,
			`invalid nested repetition operator`, false},
		{`{"agentShim": {"runtime": "sometimes"}}`, `agentShim.runtime: unknown value "sometimes" (allowed: on, off, require)`, true},
		{`{"agentShim": {"mode": "Ask"}}`, `agentShim.mode: unknown value "Ask"`, true},
		{`{"agentShim": {"secrets": ["~/ok", "x/y"]}}`, `agentShim.secrets[1]: "x/y" is neither absolute nor in the home directory (~/)`, true},
		{`{"agentShim": {"secrets": ["~x"]}}`, `agentShim.secrets[0]: "~x" is neither absolute`, true},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("Load: got %v, want %q", err, tc.want)
		}
		_, err := LoadSettings(path)
		if tc.settings && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("LoadSettings: got %v, want %q", err, tc.want)
		}
		if !tc.settings && err != nil {
			t.Errorf("LoadSettings: %v (it does not read the grants)", err)
		}
	}
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"agentShim": {"mode": "yolo", "runtime": "require"}, "userSettings": {"globalPermissionGrants": {"allow": ["command(regex:^git status$)"]}}}`), 0o600)
	if _, err := Load(path); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}
