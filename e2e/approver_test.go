//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The person, for Claude Code headless: an MCP server (this test binary,
// run again with E2E_MCP_APPROVER set to a log file) whose one tool,
// approve, Claude Code asks through --permission-prompt-tool whenever a
// call needs permission. It approves every call and logs each question.

// mcpApprover serves MCP over stdin and stdout (JSON-RPC 2.0, one message
// a line) until stdin ends.
func mcpApprover(logPath string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Arguments       struct {
					ToolName string          `json:"tool_name"`
					Input    json.RawMessage `json:"input"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil || msg.ID == nil {
			continue // a notification
		}
		var result any
		switch msg.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": msg.Params.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo":   map[string]any{"name": "e2e-approver", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "approve", "description": "approves a tool call, as a person would",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
					"tool_name": map[string]any{"type": "string"}, "input": map[string]any{"type": "object"}}},
			}}}
		case "tools/call":
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintf(f, "%s %s\n", msg.Params.Arguments.ToolName, msg.Params.Arguments.Input)
				f.Close()
			}
			answer, _ := json.Marshal(map[string]any{"behavior": "allow", "updatedInput": msg.Params.Arguments.Input})
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(answer)}}}
		case "ping":
			result = map[string]any{}
		default:
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
				"error": map[string]any{"code": -32601, "message": "method not found: " + msg.Method}})
			continue
		}
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	}
	return 0
}

// approverArgs are claude's flags that make the approver its person; the
// approver logs each question to the returned file.
func (w *world) approverArgs() ([]string, string) {
	w.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		w.t.Fatal(err)
	}
	log := filepath.Join(w.dir, "approver.log")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"approver": map[string]any{
		"type": "stdio", "command": exe, "args": []string{}, "env": map[string]string{"E2E_MCP_APPROVER": log}}}})
	return []string{"--mcp-config", string(cfg), "--permission-prompt-tool", "mcp__approver__approve"}, log
}

// TestClaudeApprovedAskRuns: where a person answers (Claude Code's
// permission prompt tool, here an MCP approver), the line the policy asks
// about is asked, approved, and runs through shell mode with Claude's real
// wrapper (the hook's ask left a ticket, requireHook on), and the approval
// is logged as the person's.
func TestClaudeApprovedAskRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.install("claude-code", "--shell")
	w.setShim("requireHook", true)
	m := newModelServer(t, bashCall(askLine))
	args, log := w.approverArgs()
	out := w.claude(m, append([]string{"--permission-mode", "default"}, args...)...)
	w.mustHaveCalled(m, out)
	asked, _ := os.ReadFile(log)
	if !strings.Contains(string(asked), "Bash") {
		t.Fatalf("the approver was never asked; approver log:\n%s\ntool results: %q", asked, m.Results())
	}
	if refs := w.git(w.bare, "for-each-ref", "refs/heads/e2e-ask"); refs == "" {
		t.Errorf("the approved line did not push; tool results: %q", m.Results())
	}
	if !w.exists(filepath.Join(w.project, askCanary)) {
		t.Errorf("the approved line did not run: no %s; tool results: %q", askCanary, m.Results())
	}
	approvals, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "agent-shim", "approvals.jsonl"))
	if !strings.Contains(string(approvals), "git push") {
		t.Errorf("the person's approval was not logged; approvals.jsonl:\n%s", approvals)
	}
}
