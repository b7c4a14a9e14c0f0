package gate

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
)

// Load builds a gate from a config.json (see package config): its mode
// (agentShim.mode), level (from agentShim.profile), command policy (the
// grants, managed ones matched by their rule's line), tool patterns
// (agentShim.tools) and path scope patterns (agentShim.pathScope.allow). A
// missing file yields the defaults: ask mode, local-changes, no rules.
// Rules are compiled when a decision first needs them.
//
// Every field of opts is either used or refused:
//   - Mode and Level are the file's; a non-zero value is an error.
//   - Policy's rules and Tools' patterns are added to the file's.
//   - Scope gives the roots (and any patterns) of the scope; the file's
//     pathScope.allow is added to a copy of it, relative patterns taken
//     from its first root. Nil is a scope without roots.
//   - Dir, Prompter, Persist, Audit, Now, Session, Decisions and Agent are
//     used as given.
//   - CacheDir keeps a compact copy of the file's policy there (see
//     cache.go). Name a directory the agent's processes cannot write,
//     as they cannot write config.json: the copy decides as the file
//     does. The gate protects it as it protects config.json.
func Load(configPath string, opts Options) (*Gate, error) {
	if err := checkLoadOptions(opts); err != nil {
		return nil, err
	}
	var o built
	var err error
	if opts.CacheDir != "" {
		o, err = loadCached(configPath, opts.CacheDir, opts.Scope)
	} else {
		o, err = loadOptions(configPath, opts.Scope)
	}
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(configPath); err == nil {
		o.protected = append(o.protected, abs)
	}
	return finish(o, opts), nil
}

// Parse builds a gate from the bytes of a config.json, as Load builds it
// from the file; name names it in errors (and is protected as Load
// protects the file it reads). opts are taken as Load takes them;
// CacheDir is refused, as there is no file to keep a copy of.
func Parse(name string, data []byte, opts Options) (*Gate, error) {
	if err := checkLoadOptions(opts); err != nil {
		return nil, err
	}
	if opts.CacheDir != "" {
		return nil, errors.New("building the gate: Options.CacheDir is for Load")
	}
	f, err := config.Parse(name, data)
	if err != nil {
		return nil, err
	}
	o, err := optionsOf(f, opts.Scope)
	if err != nil {
		return nil, err
	}
	return finish(o, opts), nil
}

func checkLoadOptions(opts Options) error {
	switch {
	case opts.Mode != ModeAsk:
		return errors.New("loading the gate: Options.Mode is config.json's agentShim.mode; leave it zero")
	case opts.Level != 0:
		return errors.New("loading the gate: Options.Level is config.json's agentShim.profile; leave it zero")
	}
	return nil
}

// finish adds to o, the options of a config file, what the caller gave in
// opts (see Load), and builds the gate.
func finish(o built, opts Options) *Gate {
	if opts.Policy != nil {
		for _, r := range opts.Policy.Rules() {
			o.Policy.Add(r.Decision, r.Text, r.Source)
		}
	}
	o.ownPolicy = true // built by the caller, for this gate only
	o.Tools.merge(opts.Tools)
	o.Prompter, o.Persist, o.Audit, o.Now, o.Session = opts.Prompter, opts.Persist, opts.Audit, opts.Now, opts.Session
	o.Decisions, o.Agent = opts.Decisions, opts.Agent
	o.Secrets, o.Layer = opts.Secrets, opts.Layer
	if opts.Dir != "" {
		o.Dir = opts.Dir
	}
	if opts.CacheDir != "" {
		if abs, err := filepath.Abs(opts.CacheDir); err == nil {
			o.protected = append(o.protected, abs)
		}
	}
	return newGate(o)
}

// loadOptions reads config.json into the options it decides.
func loadOptions(configPath string, scope *Scope) (built, error) {
	f, err := loadConfig(configPath)
	if err != nil {
		return built{}, err
	}
	return optionsOf(f, scope)
}

// usePrograms merges config.json's agentShim.programs (the overlays'
// program facts agents-setup copied there) into the built-in table for
// o's decisions. A fact that cannot be read is an error: the grants were
// expanded with it, and deciding without it could be less strict.
func (o *built) usePrograms(f *config.File) error {
	if len(f.Shim.Programs) == 0 {
		return nil
	}
	files := make([]programs.File, len(f.Shim.Programs))
	for i, pf := range f.Shim.Programs {
		files[i] = programs.File{Name: pf.File, Data: []byte(pf.Text)}
	}
	tbl, err := programs.WithOverlays(files...)
	if err != nil {
		return fmt.Errorf("%s: agentShim.programs: %w", f.Path, err)
	}
	o.programs = tbl
	o.Policy.SetPrograms(tbl)
	return nil
}

// optionsOf builds the options of a config file: scope gives the roots.
func optionsOf(f *config.File, scope *Scope) (built, error) {
	var o built
	var err error
	if o.Mode, err = parseMode(f.Shim.Mode); err != nil {
		return o, fmt.Errorf("%s: agentShim.mode: %w", f.Path, err)
	}
	if o.Level, err = LevelOf(f.Shim.Profile); err != nil {
		return o, fmt.Errorf("%s: agentShim.profile: %w", f.Path, err)
	}
	// The compact copy carries the host's settings too, so a gate
	// knows them however it was loaded.
	o.host, o.shimKnown = Host{Shell: f.Shim.Shell, Runtime: f.Shim.Runtime, RequireHook: f.Shim.RequireHook, Secrets: f.Shim.Secrets}, true
	o.Scope = scope.clone()
	for i, p := range f.Shim.PathScope.Allow {
		if err := o.Scope.allow(p); err != nil {
			return o, fmt.Errorf("%s: agentShim.pathScope.allow[%d]: %w", f.Path, i, err)
		}
	}
	o.Dir = o.Scope.base()
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
	if err := o.usePrograms(f); err != nil {
		return o, err
	}
	return o, nil
}
