package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
)

// approveEnv is a checkout and a policy that asks about git push, for
// agents that cannot ask: the hook's pending approvals name a process
// that is none of the test's (its hook and approve run in one process).
func approveEnv(t *testing.T) string {
	t.Helper()
	dir, _ := testEnv(t, `{"userSettings": {"globalPermissionGrants": {"allow": ["command(git status)"], "ask": ["command(git push)"], "deny": []}},
 "agentShim": {"version": 1, "profile": "local-changes", "rules": []}}`)
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := hookProcs
	t.Cleanup(func() { hookProcs = old })
	hookProcs = func() []approvals.Proc { return []approvals.Proc{{PID: 1 << 30, Start: "1"}} }
	return proj
}

// hookRun answers one pre-tool-use call of ag for command in dir.
func hookRun(t *testing.T, ag *agents.Agent, session, dir, command string) (code int, stdout, stderr string) {
	t.Helper()
	in := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":%q,"tool_name":%q,"tool_input":{"command":%q}}`, session, dir, ag.Pre, ag.ShellTool, command)
	var out, errb bytes.Buffer
	code = run(context.Background(), []string{"agent-shim", "hook", ag.Name}, strings.NewReader(in), &out, &errb)
	return code, out.String(), errb.String()
}

func cli(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"agent-shim"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

var approveID = regexp.MustCompile("agent-shim approve ([a-z0-9]+)")

// Ask reaches a person on every agent: Codex and Gemini CLI cannot ask
// through their hooks, so the hook refuses the call with an id; the person
// approves it (agent-shim approve <id>, listed by agent-shim approve); the
// agent's retry of that exact call, and only it, runs once.
func TestOneShotApproval(t *testing.T) {
	for _, ag := range []*agents.Agent{agents.Codex, agents.Gemini} {
		t.Run(ag.Name, func(t *testing.T) {
			proj := approveEnv(t)
			const line = "git push origin main"
			code, out, _ := hookRun(t, ag, "s1", proj, line)
			m := approveID.FindStringSubmatch(out)
			if code != 0 || !strings.Contains(out, `"deny"`) || m == nil {
				t.Fatalf("first call: exit %d, %s; want a deny naming agent-shim approve <id>", code, out)
			}
			id := m[1]
			// Asked again before approval: the same id, still refused.
			if _, out2, _ := hookRun(t, ag, "s1", proj, line); !strings.Contains(out2, "agent-shim approve "+id) {
				t.Errorf("second call before approval: %s; want the same id %s", out2, id)
			}
			code, list, stderr := cli("approve")
			if code != 0 || !strings.Contains(list, id) || !strings.Contains(list, line) {
				t.Errorf("agent-shim approve lists: exit %d\n%s%s", code, list, stderr)
			}
			if code, _, stderr := cli("approve", id); code != 0 {
				t.Fatalf("approve %s: exit %d: %s", id, code, stderr)
			}
			// Another call, session or directory is not the call approved.
			for _, other := range []struct{ session, dir, line string }{
				{"s1", proj, line + " --force-with-lease=x"},
				{"s1", proj, "git push origin other"},
				{"s2", proj, line},
				{"s1", filepath.Dir(proj), line},
			} {
				if _, out, _ := hookRun(t, ag, other.session, other.dir, other.line); !strings.Contains(out, `"deny"`) {
					t.Errorf("%+v after approving %q: %s; want deny", other, line, out)
				}
			}
			code, out, _ = hookRun(t, ag, "s1", proj, line)
			if code != 0 || strings.Contains(out, `"deny"`) {
				t.Fatalf("the retry after approval: exit %d, %s; want it to run", code, out)
			}
			if _, out, _ := hookRun(t, ag, "s1", proj, line); !strings.Contains(out, `"deny"`) {
				t.Errorf("a second retry: %s; want deny (the approval is spent)", out)
			}
			logPath, _ := approvals.Path(os.Getenv)
			if got, err := approvals.ReadFile(logPath); err != nil || len(got) != 1 || got[0].Key != line || got[0].Decision != "once" {
				t.Errorf("approval log: %+v, %v", got, err)
			}
		})
	}
}

// Approvals and session answers are listed with ids and can be revoked:
// a revoked one-shot approval lets nothing run.
func TestApprovalsRevoke(t *testing.T) {
	proj := approveEnv(t)
	t.Setenv("AGENT_SHIM_SESSION", "rv")
	_, out, _ := hookRun(t, agents.Codex, "rv", proj, "git push origin main")
	m := approveID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no id in %s", out)
	}
	if code, _, stderr := cli("approve", m[1]); code != 0 {
		t.Fatal(stderr)
	}
	code, js, stderr := cli("approvals", "--json")
	var got struct {
		Once     []approvals.OneShot
		Sessions []json.RawMessage
	}
	if code != 0 || json.Unmarshal([]byte(js), &got) != nil || len(got.Once) != 1 || got.Once[0].ID != m[1] || got.Once[0].Pending() {
		t.Fatalf("approvals: exit %d %s %s", code, js, stderr)
	}
	if code, _, stderr := cli("revoke", m[1]); code != 0 {
		t.Fatalf("revoke: %s", stderr)
	}
	if _, out, _ := hookRun(t, agents.Codex, "rv", proj, "git push origin main"); !strings.Contains(out, `"deny"`) {
		t.Errorf("after revoke: %s; want deny", out)
	}
	if code, _, _ := cli("approve", "nosuchid"); code == 0 {
		t.Error("approving an unknown id succeeded")
	}
}
