package agents

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/agent-shim/agent-shim/matcher"
)

// The answers of the agents' hook protocols, shared by the agents that
// speak them. Each agent's file says which it speaks and how it answers
// each verdict.

// permissionAnswer writes Claude Code's PreToolUse answer (which Codex
// reads too): {"hookSpecificOutput": {"hookEventName": "PreToolUse",
// "permissionDecision": decision, "permissionDecisionReason": "agent-shim:
// " + reason}} and a newline, byte for byte what encoding/json writes of
// the structs (TestPermissionAnswer), the object spelled out:
// encoding/json reads only the strings, which costs a hook process less
// than reflecting on the structs.
func permissionAnswer(w io.Writer, decision, reason string) error {
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(decision); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteString(`,"permissionDecisionReason":`)
	if err := enc.Encode("agent-shim: " + reason); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	b.WriteString("}}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// decisionAnswer writes Gemini CLI's answer: {"decision": decision,
// "reason": reason}, both left out when empty (`{}` decides nothing).
func decisionAnswer(w io.Writer, decision, reason string) error {
	v := struct {
		Decision string `json:"decision,omitempty"`
		Reason   string `json:"reason,omitempty"`
	}{decision, reason}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// needsApproval is the reason of a deny that answers an ask for an agent
// that cannot ask its person: why, and how to approve the call.
func needsApproval(a Answer) string {
	s := "needs approval (" + a.Reason + "), and this agent's hooks cannot ask"
	if a.Hint != "" {
		s += "; " + a.Hint
	}
	return s
}

// verdictWord is the protocols' word for a verdict that decides.
func verdictWord(v matcher.Decision) string {
	switch v {
	case matcher.Allow:
		return "allow"
	case matcher.Ask:
		return "ask"
	}
	return "deny"
}
