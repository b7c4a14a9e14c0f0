//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is every regular file and link under dirs, by path: content,
// or the link's target.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				files[p] = "link -> " + target
			case d.Type().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files[p] = string(data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// diffSnapshots lists the files added, removed or changed between a and b.
func diffSnapshots(a, b map[string]string) []string {
	var d []string
	for p, x := range a {
		y, ok := b[p]
		switch {
		case !ok:
			d = append(d, "removed "+p)
		case x != y:
			d = append(d, "changed "+p+":\n--- before\n"+x+"\n--- after\n"+y)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	return d
}

// TestUninstallRestores: uninstall after install leaves every file of each
// agent's directory byte for byte as it was (files the person wrote, in
// their own spelling, with their own hooks), and removes what install
// created; the person's own hook stays.
func TestUninstallRestores(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gemini := filepath.Join(w.dir, "gemini-home")
	w.env = append(w.env, "GEMINI_CLI_HOME="+gemini, "CODEX_HOME="+filepath.Join(w.home, ".codex"))
	w.write(filepath.Join(w.home, ".claude", "settings.json"), `{
    "permissions" : { "allow": ["Bash(git status)"] },
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/my-own-hook"}]}]},
  "env": {"FOO": "bar"}
}`)
	w.write(filepath.Join(w.home, ".codex", "config.toml"), `# my codex
model = "e2e-model"   # chosen by hand

[model_providers.e2e]
name = "e2e"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
`)
	w.write(filepath.Join(gemini, ".gemini", "settings.json"), "{\n\t\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n\t\"ui\": {\"theme\": \"GitHub\"}\n}\n")
	dirs := []string{filepath.Join(w.home, ".claude"), filepath.Join(w.home, ".codex"), filepath.Join(gemini, ".gemini"),
		filepath.Join(w.home, ".gemini", "settings.json"), filepath.Join(w.home, ".local", "bin")}
	before := snapshot(t, dirs...)
	for _, agent := range []struct {
		name string
		args []string
	}{
		{"claude-code", []string{"--shell"}},
		{"codex", nil},
		{"gemini-cli", nil},
	} {
		t.Log(w.install(agent.name, agent.args...))
	}
	installed := snapshot(t, dirs...)
	for _, f := range []string{filepath.Join(w.home, ".claude", "settings.json"), filepath.Join(w.home, ".codex", "config.toml"),
		filepath.Join(gemini, ".gemini", "settings.json")} {
		if installed[f] == before[f] {
			t.Errorf("install did not change %s, the file the agent reads", f)
		}
	}
	for _, agent := range []string{"claude-code", "codex", "gemini-cli"} {
		t.Log(w.run(w.project, w.shim, "uninstall", agent))
	}
	after := snapshot(t, dirs...)
	// The lock beside a file stays: removing a lock others may be waiting
	// on would let two writers in at once. A lock beside a file uninstall
	// removed (one install created) is litter, checked on its own below.
	var litter []string
	for p, data := range after {
		if _, ok := before[p]; ok || !strings.HasSuffix(p, ".lock") || data != "" {
			continue
		}
		if _, locked := after[strings.TrimSuffix(p, ".lock")]; !locked {
			litter = append(litter, p)
		}
		delete(after, p)
	}
	for _, d := range diffSnapshots(before, after) {
		t.Errorf("after install and uninstall: %s", d)
	}
	t.Run("no-lock-left-beside-a-removed-file", func(t *testing.T) {
		for _, p := range litter {
			t.Errorf("after install and uninstall: added %s, the lock of a file uninstall removed", p)
		}
	})
}

// TestDoctorFailsWhenFailingOpen: doctor passes on a fresh install and
// exits 1 once the hook it would run fails (a shim that exits 127).
func TestDoctorFailsWhenFailingOpen(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude-code", "codex", "gemini-cli"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.env = append(w.env, "GEMINI_CLI_HOME="+filepath.Join(w.dir, "gemini-home"), "CODEX_HOME="+filepath.Join(w.home, ".codex"))
			w.install(agent)
			if code, out := w.doctor(); code != 0 {
				t.Errorf("doctor after install: exit %d, want 0\n%s", code, out)
			}
			w.breakShim("exit 127")
			if code, out := w.doctor(); code != 1 {
				t.Errorf("doctor with a hook that exits 127: exit %d, want 1\n%s", code, out)
			}
		})
	}
}

// doctor runs a healthy agent-shim's doctor in the world.
func (w *world) doctor() (int, string) {
	w.t.Helper()
	cmd := exec.Command(shimBin, "doctor")
	cmd.Dir = w.project
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return 0, strings.TrimSpace(out.String())
}

// TestDoctorClaudeVersion: doctor asks the claude on PATH its version:
// the pinned 2.1.332 honours onFailure; 2.1.197 (what a plain npm install
// on Node 20 got) ignores it and fails open, so doctor exits 1.
func TestDoctorClaudeVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want int
	}{
		{"2.1.332", 0},
		{"2.1.197", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			bin := filepath.Join(w.dir, "claude-bin")
			if tc.name == "2.1.332" {
				if err := os.MkdirAll(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(agentBin(t, "claude"), filepath.Join(bin, "claude")); err != nil {
					t.Fatal(err)
				}
			} else {
				w.write(filepath.Join(bin, "claude"), "#!/bin/sh\necho '"+tc.name+" (Claude Code)'\n")
				if err := os.Chmod(filepath.Join(bin, "claude"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for i, kv := range w.env {
				if strings.HasPrefix(kv, "PATH=") {
					w.env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
				}
			}
			w.install("claude-code")
			code, out := w.doctor()
			if code != tc.want {
				t.Errorf("doctor with Claude Code %s: exit %d, want %d\n%s", tc.name, code, tc.want, out)
			}
			if !strings.Contains(out, tc.name) {
				t.Errorf("doctor does not say which version it found (%s):\n%s", tc.name, out)
			}
		})
	}
}
