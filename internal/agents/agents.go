// Package agents holds what agent-shim knows of each AI coding agent it
// guards: one file per agent (claude.go, codex.go, gemini.go) declares one
// Agent value, and All lists them. Everything that differs between agents
// is a field of Agent; nothing outside this package branches on an
// agent's name.
//
// Adding an agent takes one new file declaring its Agent and one entry in
// All; TestAllComplete checks that every field a consumer reads is set.
package agents

// Agent is one agent, as agent-shim meets it.
type Agent struct {
	// Name is the agent's name on agent-shim's command line
	// ("claude-code").
	Name string

	// unwrap recognises the line the agent hands its shell around a
	// command (see wrapper.go); nil when the agent has no wrapper.
	unwrap func(l *wrapperLine) (Wrapped, bool)
}

// All is every agent, in the order agent-shim lists them.
var All = []*Agent{Claude, Codex, Gemini}

// ByName returns the agent named name, or nil.
func ByName(name string) *Agent {
	for _, a := range All {
		if a.Name == name {
			return a
		}
	}
	return nil
}
