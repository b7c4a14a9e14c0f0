//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setJSON sets key to v in the JSON file at path (written plain).
func (w *world) setJSON(path string, edit func(map[string]any)) {
	w.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		w.t.Fatalf("%s: %v", path, err)
	}
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.write(path, string(out)+"\n")
}

// dropSecondLine takes away the second line install placed in the
// agent's user tier: for the controls that see what the hook alone does
// (the second line would refuse their forced push).
func (w *world) dropSecondLine(agent string) {
	w.t.Helper()
	switch agent {
	case "claude-code":
		w.setJSON(filepath.Join(w.home, ".claude", "settings.json"), func(d map[string]any) { delete(d, "permissions") })
	case "codex":
		if err := os.Remove(filepath.Join(w.home, ".codex", "rules", "agent-shim.rules")); err != nil {
			w.t.Fatal(err)
		}
	case "gemini-cli":
		if err := os.Remove(filepath.Join(w.geminiHome(), ".gemini", "policies", "agent-shim.toml")); err != nil {
			w.t.Fatal(err)
		}
	default:
		w.t.Fatalf("dropSecondLine: unknown agent %q", agent)
	}
}

// TestSecondLineHooksOff: with the hook installed and then turned off in
// the user's settings by the agent's own switch (Claude Code's
// disableAllHooks, Codex's [features] hooks = false, Gemini CLI's
// hooksConfig.enabled false), the second line install placed beside it
// still refuses a forced push to the world's bare repository, in the
// agent's most permissive mode. The control takes the second line away
// too: then the push runs, so the hook was off and the rules are what
// held. The hook's decision log stays empty in both.
func TestSecondLineHooksOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		agent string
		// world sets up the agent against m with the hook installed;
		// off turns its hooks off; run runs it.
		world func(*testing.T, *modelServer) *world
		off   func(*world)
		run   func(*world, *modelServer) string
		call  func(string) toolCall
	}{
		{"claude-code",
			func(t *testing.T, _ *modelServer) *world { w := newWorld(t); w.install("claude-code"); return w },
			func(w *world) {
				w.setJSON(filepath.Join(w.home, ".claude", "settings.json"), func(d map[string]any) { d["disableAllHooks"] = true })
			},
			func(w *world, m *modelServer) string { return w.claude(m, "--permission-mode", "bypassPermissions") },
			bashCall},
		{"codex",
			func(t *testing.T, m *modelServer) *world { return codexWorld(t, m) },
			func(w *world) {
				p := filepath.Join(w.home, ".codex", "config.toml")
				data, err := os.ReadFile(p)
				if err != nil || !strings.Contains(string(data), "[features]\nhooks = true\n") {
					w.t.Fatalf("%s: %v: no [features] hooks = true to turn off:\n%s", p, err, data)
				}
				w.write(p, strings.Replace(string(data), "[features]\nhooks = true\n", "[features]\nhooks = false\n", 1))
			},
			func(w *world, m *modelServer) string { return w.codex(m, "--dangerously-bypass-approvals-and-sandbox") },
			shellCall},
		{"gemini-cli",
			func(t *testing.T, _ *modelServer) *world { return geminiWorld(t) },
			func(w *world) {
				w.setJSON(filepath.Join(w.geminiHome(), ".gemini", "settings.json"), func(d map[string]any) {
					d["hooksConfig"] = map[string]any{"enabled": false}
				})
			},
			func(w *world, m *modelServer) string { return w.gemini(m, "--yolo") },
			runShellCall},
	} {
		for _, control := range []bool{false, true} {
			name := tc.agent
			if control {
				name += "-control"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m := newModelServer(t, tc.call(deniedLine))
				w := tc.world(t, m)
				tc.off(w)
				if control {
					w.dropSecondLine(tc.agent)
				}
				out := tc.run(w, m)
				w.mustHaveCalled(m, out)
				if strings.Contains(w.decisions(), `"hook"`) {
					t.Errorf("the hook ran although it is turned off:\n%s", w.decisions())
				}
				if control {
					if !w.pushMoved() {
						t.Errorf("with hooks off and no second line, git push --force did not run: the test's premise is gone (tool results: %q)", m.Results())
					}
					return
				}
				if w.pushMoved() {
					t.Errorf("with hooks off, git push --force ran: the second line did not hold (tool results: %q)", m.Results())
				}
				if w.exists(filepath.Join(w.project, deniedCanary)) {
					t.Errorf("with hooks off, the line ran: %s exists", deniedCanary)
				}
			})
		}
	}
}

// managedRulesDropped takes away the second line install --managed placed
// in the agent's managed tier (as seen from outside the namespace).
func (w *world) managedRulesDropped(agent string) {
	w.t.Helper()
	switch agent {
	case "claude-code":
		w.setJSON(filepath.Join(w.dir, "etc", "claude-code", "managed-settings.d", "agent-shim.json"), func(d map[string]any) { delete(d, "permissions") })
	case "codex":
		if err := os.Remove(filepath.Join(w.dir, "etc", "codex", "rules", "agent-shim.rules")); err != nil {
			w.t.Fatal(err)
		}
	case "gemini-cli":
		if err := os.Remove(filepath.Join(w.dir, "etc", "gemini-cli", "policies", "agent-shim.toml")); err != nil {
			w.t.Fatal(err)
		}
	default:
		w.t.Fatalf("managedRulesDropped: unknown agent %q", agent)
	}
}

// TestManagedSecondLine: install --managed places the second line in the
// tier users cannot override (Claude Code's drop-in's permissions,
// /etc/codex/rules, /etc/gemini-cli/policies). With the managed hook
// silent, as if it were not there, the user's settings saying "no hooks",
// the agent's own engine still refuses the forced push. The control takes
// the managed second line away: then the push runs.
func TestManagedSecondLine(t *testing.T) {
	t.Parallel()
	for _, c := range managedCases {
		for _, control := range []bool{false, true} {
			name := c.name
			if control {
				name += "-control"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w, m, _ := c.world(t, true)
				w.breakShim("exit 0") // the hook answers nothing: no hook at all
				if control {
					w.managedRulesDropped(c.name)
				}
				out := c.run(w, m)
				w.mustHaveCalled(m, out)
				if control {
					if !w.pushMoved() {
						t.Errorf("with the managed hook silent and no second line, git push --force did not run: the test's premise is gone (tool results: %q)", m.Results())
					}
					return
				}
				if w.pushMoved() {
					t.Errorf("with the managed hook silent, git push --force ran: the managed second line did not hold (tool results: %q)", m.Results())
				}
			})
		}
	}
}
