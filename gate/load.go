package gate

import (
	"fmt"

	"github.com/agent-shim/agent-shim/config"
	"github.com/agent-shim/agent-shim/matcher"
)

// LoadOptions reads a config.json (see package config) into the options it
// decides: Mode (agentShim.mode), Level (from agentShim.profile), Policy
// (the grants, managed ones matched by their rule's line), Tools
// (agentShim.tools, relative globs taken from projectRoot) and Scope
// (projectRoot, userRoot and agentShim.pathScope.allow). Dir is
// projectRoot. A missing file yields the defaults: ask mode,
// local-changes, no rules. Rules are compiled when a decision first needs
// them.
func LoadOptions(configPath, projectRoot, userRoot string) (Options, error) {
	f, err := config.Load(configPath)
	if err != nil {
		return Options{}, err
	}
	return optionsOf(f, projectRoot, userRoot)
}

// Load builds a gate from a config.json, as LoadOptions, with the rest of
// its options (Prompter, Persist, Audit, Now, Session) taken from opts.
// With opts.CacheDir set, an unchanged config.json is read from the compact
// copy kept there (see cache.go).
func Load(configPath, projectRoot, userRoot string, opts Options) (*Gate, error) {
	var o Options
	var err error
	if opts.CacheDir != "" {
		o, err = loadCached(configPath, opts.CacheDir, projectRoot, userRoot)
	} else {
		o, err = LoadOptions(configPath, projectRoot, userRoot)
	}
	if err != nil {
		return nil, err
	}
	o.Prompter, o.Persist, o.Audit, o.Now, o.Session = opts.Prompter, opts.Persist, opts.Audit, opts.Now, opts.Session
	if opts.Dir != "" {
		o.Dir = opts.Dir
	}
	return New(o), nil
}

func optionsOf(f *config.File, projectRoot, userRoot string) (Options, error) {
	var o Options
	var err error
	if o.Mode, err = ParseMode(f.Shim.Mode); err != nil {
		return o, fmt.Errorf("%s: agentShim.mode: %w", f.Path, err)
	}
	if o.Level, err = LevelOf(f.Shim.Profile); err != nil {
		return o, fmt.Errorf("%s: agentShim.profile: %w", f.Path, err)
	}
	o.Scope = NewScope(projectRoot, userRoot)
	for i, p := range f.Shim.PathScope.Allow {
		if err := o.Scope.Allow(p); err != nil {
			return o, fmt.Errorf("%s: agentShim.pathScope.allow[%d]: %w", f.Path, i, err)
		}
	}
	o.Dir = projectRoot
	if len(o.Scope.Roots()) > 0 && projectRoot != "" {
		o.Dir = o.Scope.Roots()[0] // resolved
	}
	if o.Tools, err = NewToolPolicy(o.Dir, f.Shim.Tools.Allow, f.Shim.Tools.Deny); err != nil {
		return o, fmt.Errorf("%s: agentShim.tools.%w", f.Path, err)
	}
	managed := make([]matcher.Managed, len(f.Shim.Rules))
	for i, r := range f.Shim.Rules {
		managed[i] = matcher.Managed{
			Line:   r.Line,
			Grants: r.Grants,
			Source: matcher.Source{Category: r.Category, Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line},
		}
	}
	o.Policy = matcher.FromGrants(f.Grants.Allow, f.Grants.Ask, f.Grants.Deny, managed)
	return o, nil
}
