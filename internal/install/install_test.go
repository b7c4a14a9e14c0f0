package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// options is an install of a's hook into settings, with the state in a
// temporary directory.
func options(t *testing.T, a *agents.Agent, settings string) Options {
	dir := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(dir, "home")}
	return Options{Agent: a, Settings: settings, Exe: "/usr/local/bin/agent-shim", StateDir: filepath.Join(dir, "state"),
		Getenv: func(k string) string { return env[k] }}
}

// TestDuplicateHooksKey: a settings file with "hooks" twice is refused,
// naming the file and both lines, and not a byte of it changes: the
// agents read the last "hooks", and an edit of the first would install a
// hook nobody runs. Uninstall refuses it too.
func TestDuplicateHooksKey(t *testing.T) {
	for _, a := range agents.All {
		t.Logf("agent: %s", a.Name)
		path := filepath.Join(t.TempDir(), "settings.json")
		const in = "{\n  \"hooks\": {},\n  \"model\": \"x\",\n  \"hooks\": {\"Other\": []}\n}\n"
		if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		o := options(t, a, path)
		for _, do := range []func(context.Context, Options) (*Report, error){Install, Uninstall} {
			r, err := do(context.Background(), o)
			if err == nil || !errors.Is(err, fileedit.ErrDuplicateKey) || !strings.HasPrefix(err.Error(), path+":4:3: ") || !strings.Contains(err.Error(), "first at line 2") {
				t.Errorf("got %v (%q), want %s:4:3: duplicate key \"hooks\" (first at line 2)", err, r.Notes, path)
			}
			if got, _ := os.ReadFile(path); string(got) != in {
				t.Errorf("the file changed:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(o.StateDir, "backups")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a backup was made of a file left alone: %v", err)
			}
		}
	}
}

// TestInstallUninstall: an install into a file of the person's own adds
// only the hook groups, a second install changes nothing, and uninstall
// gives back every byte.
func TestInstallUninstall(t *testing.T) {
	for _, a := range agents.All {
		t.Logf("agent: %s", a.Name)
		path := filepath.Join(t.TempDir(), "settings.json")
		const in = "{\n  \"model\": \"x\", \"hooks\": {\"Other\": [1]}\n}\n"
		if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		if a.Companion() != nil {
			continue // the file beside it (Codex's config.toml): install_codex.txtar
		}
		o := options(t, a, path)
		if _, err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		root, err := a.Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range a.Events() {
			if h, ok := a.FindHook(data, root, ev); !ok || h.Command != a.HookCommand(o.Exe, "") {
				t.Errorf("%s: hook %+v, %v", ev, h, ok)
			}
		}
		r, err := Install(context.Background(), o)
		if again, _ := os.ReadFile(path); err != nil || string(again) != string(data) || !strings.Contains(strings.Join(r.Notes, "\n"), "already installed") {
			t.Errorf("a second install: %v, %q\n%s", err, r.Notes, again)
		}
		if _, err := Uninstall(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if back, _ := os.ReadFile(path); string(back) != in {
			t.Errorf("uninstall gave\n%s\nwant\n%s", back, in)
		}
	}
}

// userWritable finds who other than root could replace the shim a
// managed hook runs.
func TestUserWritable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "agent-shim")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		if got := UserWritable(exe); !strings.Contains(got, "belongs to uid") {
			t.Errorf("userWritable = %q for a file of uid %d", got, os.Getuid())
		}
		return
	}
	if got := UserWritable(exe); got != "" {
		t.Errorf("userWritable = %q, want nothing: root owns the tree (a sticky /tmp included)", got)
	}
	if err := os.Chmod(exe, 0o757); err != nil {
		t.Fatal(err)
	}
	if got := UserWritable(exe); got != exe+" is writable by everyone" {
		t.Errorf("userWritable = %q", got)
	}
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if got := UserWritable(exe); got != dir+" belongs to uid 1000" {
		t.Errorf("userWritable = %q", got)
	}
}
