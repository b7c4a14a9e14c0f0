package secondline

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// Tool rules (an MCP tool's, see matcher's tool rules) reach the second
// line where the agent's own rules can say them: Claude Code's
// permissions name a tool whole, so a rule of every call of a tool is
// compiled there; a rule on a tool's arguments, and every deny tool rule
// for Codex and Gemini CLI (which compile no ask rule), is noted as left
// out, each for itself.
func TestToolRules(t *testing.T) {
	p := Compile([]Rule{
		{Text: "mcp__github__delete_repo(*)", Decision: Deny, Source: "never_allow.txt:1"},
		{Text: "mcp__github__merge_pull_request(*)", Decision: Ask, Source: "external_changes.txt:1"},
		{Text: "mcp__github__create_issue(repo=acme/secret)", Decision: Deny, Source: "never_allow.txt:2"},
		{Text: "mcp__github__create_issue(repo=acme/other)", Decision: Deny, Source: "never_allow.txt:3"},
	}, programs.Builtin())
	out := Claude(p)
	var doc struct{ Permissions struct{ Deny, Ask []string } }
	if err := json.Unmarshal(out.Text, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Permissions.Deny, []string{"mcp__github__delete_repo"}) || !slices.Equal(doc.Permissions.Ask, []string{"mcp__github__merge_pull_request"}) {
		t.Errorf("claude: deny %q, ask %q", doc.Permissions.Deny, doc.Permissions.Ask)
	}
	notes := func(o Output) string {
		var b strings.Builder
		for _, n := range o.Notes {
			b.WriteString(n.Rule.Text + ": " + n.Missing + "\n")
		}
		return b.String()
	}
	for _, want := range []string{"acme/secret): a rule on the arguments", "acme/other): a rule on the arguments"} {
		if !strings.Contains(notes(out), want) {
			t.Errorf("claude notes lack %q:\n%s", want, notes(out))
		}
	}
	for name, o := range map[string]Output{"codex": Codex(p), "gemini": Gemini(p)} {
		n := notes(o)
		// Their ask rules are not compiled at all; each deny is noted.
		for _, r := range []string{"delete_repo(*): every call", "acme/secret): a rule on the arguments", "acme/other): a rule on the arguments"} {
			if !strings.Contains(n, r) {
				t.Errorf("%s: no note %q:\n%s", name, r, n)
			}
		}
		if strings.Contains(string(o.Text), "mcp__") {
			t.Errorf("%s: a tool rule compiled:\n%s", name, o.Text)
		}
	}
}
