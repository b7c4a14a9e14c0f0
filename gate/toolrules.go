package gate

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agent-shim/agent-shim/matcher"
)

// decideByArgs decides a call of a tool that is neither a shell nor a file
// tool (an MCP server's) by the policy's tool rules, which condition on
// its arguments (matcher.Policy.DecideTool); ok is false when none
// matches, and the call is decided by the tool patterns and the level.
// A deny of a rule or of a tool pattern wins; an ask asks, unless the
// person approved this exact call for the session.
func (g *Gate) decideByArgs(t toolID, c *Call) (d Decision, ok bool) {
	root := ""
	if r := g.scope.Roots(); len(r) > 0 {
		root = r[0]
	}
	home, _ := os.UserHomeDir()
	input := make(map[string]any, len(c.ToolInput))
	for k, raw := range c.ToolInput {
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			x = raw // not JSON: no pattern holds for it
		}
		input[k] = x
	}
	v := g.policy.DecideTool(t.name, input, matcher.ToolPaths{
		Abs: func(p string) string {
			a := g.absIn(c.Cwd, p)
			if a == "" {
				return ""
			}
			return filepath.Clean(a)
		},
		Root: root, Home: home,
	})
	if v.Decision == matcher.Default {
		return Decision{}, false
	}
	key := c.Key()
	if v.Decision == Deny {
		return Decision{Verdict: Deny, Reason: v.Reason, Rule: v.Rule}, true
	}
	if byPattern := g.decide(t, key); byPattern.Verdict == Deny {
		return byPattern, true
	}
	if v.Decision == Allow {
		return Decision{Verdict: Allow, Reason: v.Reason, Rule: v.Rule}, true
	}
	if g.sessionExact(t, key) {
		return Decision{Verdict: Allow, Reason: "approved", Approved: true}, true
	}
	if g.needs(Ask) == Allow {
		return Decision{Verdict: Allow, Reason: v.Reason + "; " + g.mode.String() + " mode", Rule: v.Rule}, true
	}
	return Decision{Verdict: Ask, Reason: v.Reason, Rule: v.Rule, Covers: &Approval{Tool: t.name, Key: key},
		Request: &Request{Kind: KindOther, Tool: t.name, Key: key, Reason: v.Reason}}, true
}
