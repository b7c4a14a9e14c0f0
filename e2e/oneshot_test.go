//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oneShotLine is asked by the policy (git push) and counts its runs in the
// checkout, so that a second run shows.
const (
	oneShotLine   = "git push origin HEAD:refs/heads/e2e-once; echo ran >> once-canary"
	oneShotCanary = "once-canary"
)

// pendingIDs lists the calls waiting for agent-shim approve, as the person
// sees them from a terminal of their own (this test, which no agent runs).
func (w *world) pendingIDs() []string {
	w.t.Helper()
	var pending []struct{ ID, Key string }
	if err := json.Unmarshal([]byte(w.run(w.project, w.shim, "approve", "--json")), &pending); err != nil {
		w.t.Fatalf("agent-shim approve --json: %v", err)
	}
	var ids []string
	for _, p := range pending {
		ids = append(ids, p.ID)
	}
	return ids
}

// personApproves is call, made once the person approved the one pending
// call: the model's retry comes after the person ran agent-shim approve.
func (w *world) personApproves(call toolCall, approved *string) toolCall {
	return toolCall{Tools: call.Tools, Args: func(tool string) map[string]any {
		ids := w.pendingIDs()
		if len(ids) != 1 {
			w.t.Errorf("pending calls when the person looks: %q, want one", ids)
		} else {
			cmd := exec.Command(w.shim, "approve", ids[0])
			cmd.Dir, cmd.Env = w.dir, w.env
			out, err := cmd.CombinedOutput()
			if err != nil {
				w.t.Errorf("agent-shim approve %s: %v\n%s", ids[0], err, out)
			}
			*approved = ids[0]
		}
		return call.Args(tool)
	}}
}

// agentApproves is the model calling agent-shim approve itself on the
// pending call, through the agent's shell tool made by mk.
func (w *world) agentApproves(mk func(string) toolCall, forged *string) toolCall {
	return toolCall{Tools: mk("").Tools, Args: func(tool string) map[string]any {
		ids := w.pendingIDs()
		if len(ids) != 1 {
			w.t.Errorf("pending calls when the agent looks: %q, want one", ids)
			ids = append(ids, "none")
		}
		*forged = ids[0]
		return mk("agent-shim approve " + ids[0]).Args(tool)
	}}
}

// runs returns how many times the one-shot line ran.
func (w *world) oneShotRuns() int {
	data, err := os.ReadFile(filepath.Join(w.project, oneShotCanary))
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "ran\n")
}

// TestOneShotApproval: where the agent cannot ask its person (Codex, Gemini
// CLI in yolo mode), the hook refuses an asked call with an id; the person
// runs agent-shim approve <id> from a terminal of their own; the agent's
// retry of that exact call runs, once: a third try is refused again. The
// agent cannot approve itself: its own call of agent-shim approve is
// refused, and its retry then does not run.
func TestOneShotApproval(t *testing.T) {
	t.Parallel()
	agents := []struct {
		name string
		mk   func(string) toolCall
		run  func(t *testing.T, calls func(*world) []toolCall) (*world, *modelServer, string)
	}{
		{"codex", shellCall, func(t *testing.T, calls func(*world) []toolCall) (*world, *modelServer, string) {
			m := newModelServer(t)
			w := codexWorld(t, m)
			w.session = true
			m.SetCalls(calls(w)...)
			return w, m, w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
		}},
		{"gemini-yolo", runShellCall, func(t *testing.T, calls func(*world) []toolCall) (*world, *modelServer, string) {
			w := geminiWorld(t)
			w.session = true
			m := newModelServer(t, calls(w)...)
			return w, m, w.gemini(m, "--yolo")
		}},
	}
	for _, a := range agents {
		t.Run(a.name+"/person", func(t *testing.T) {
			t.Parallel()
			var approved string
			w, m, out := a.run(t, func(w *world) []toolCall {
				return []toolCall{a.mk(oneShotLine), w.personApproves(a.mk(oneShotLine), &approved), a.mk(oneShotLine)}
			})
			w.mustHaveCalled(m, out)
			if approved == "" {
				t.Fatalf("nothing was approved; tool results: %q", m.Results())
			}
			if !m.ResultContains("agent-shim approve " + approved) {
				t.Errorf("the refusal did not name agent-shim approve %s; tool results: %q", approved, m.Results())
			}
			if n := w.oneShotRuns(); n != 1 {
				t.Errorf("the approved call ran %d times, want once; tool results: %q", n, m.Results())
			}
			if refs := w.git(w.bare, "for-each-ref", "refs/heads/e2e-once"); refs == "" {
				t.Errorf("the approved push did not reach origin")
			}
		})
		t.Run(a.name+"/agent", func(t *testing.T) {
			t.Parallel()
			var forged string
			w, m, out := a.run(t, func(w *world) []toolCall {
				return []toolCall{a.mk(oneShotLine), w.agentApproves(a.mk, &forged), a.mk(oneShotLine)}
			})
			w.mustHaveCalled(m, out)
			if n := w.oneShotRuns(); n != 0 {
				t.Errorf("the call ran %d times after the agent approved it itself; tool results: %q", n, m.Results())
			}
			if refs := w.git(w.bare, "for-each-ref", "refs/heads/e2e-once"); refs != "" {
				t.Errorf("the push reached origin: %s", refs)
			}
			if ids := w.pendingIDs(); len(ids) != 1 || ids[0] != forged {
				t.Errorf("after the agent's approve the pending calls are %q, want %q still pending", ids, forged)
			}
		})
	}
}
