package main

import (
	"github.com/agent-shim/agent-shim/config"
	"github.com/agent-shim/agent-shim/matcher"
)

// configPath returns --config, else the agent's default config.json.
func (e *env) configPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return config.DefaultPath(e.getenv)
}

// policyOf builds the matcher policy of a loaded config.json: grants that a
// managed rule stands for are matched by the rule's manifest line.
func policyOf(f *config.File) *matcher.Policy {
	managed := make([]matcher.Managed, len(f.Shim.Rules))
	for i, r := range f.Shim.Rules {
		managed[i] = matcher.Managed{
			Line:   r.Line,
			Grants: r.Grants,
			Source: matcher.Source{
				Category: r.Category,
				Overlay:  r.Source.Overlay,
				File:     r.Source.File,
				Line:     r.Source.Line,
			},
		}
	}
	return matcher.FromGrants(f.Grants.Allow, f.Grants.Ask, f.Grants.Deny, managed)
}
