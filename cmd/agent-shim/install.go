package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/statefile"
	"mvdan.cc/sh/v3/syntax"
)

// install and uninstall put the shim's hook into an agent's user settings,
// and take it out again.
//
// The formats, as the agents document them (stored copies, read while
// writing this):
//
//   - Claude Code, https://docs.anthropic.com/en/docs/claude-code/hooks
//     ("Configuration"): ~/.claude/settings.json ($CLAUDE_CONFIG_DIR when
//     set), {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type":
//     "command", "command": …, "timeout": seconds}]}]}}; "*" matches every
//     tool. Its "env" key sets variables for the session, and
//     CLAUDE_CODE_SHELL the shell its Bash tool runs. Since 2.1.295 a
//     hook's "onFailure": "block" makes "a hook that can't start, times
//     out, or exits with an unexpected code" block the action instead of
//     letting it through (the changelog, as quoted in
//     https://dev.to/gabrielanhaia/a-claude-code-hook-that-times-out-lets-the-command-through-make-it-fail-closed-1g5k
//     and NVIDIA's https://docs.nvidia.com/nemo/guardrails/run-guardrailed-inference/using-hooks-server/claude-code):
//     install sets it on PreToolUse. "disableAllHooks" and
//     "allowManagedHooksOnly" turn user hooks off (doctor checks them).
//   - Codex, https://developers.openai.com/codex/hooks.md: hooks.json next
//     to config.toml in ~/.codex ($CODEX_HOME when set), the same shape
//     with "timeout" in seconds (and no matcher: every tool). "Hooks are
//     enabled by default … Use `hooks` as the canonical feature key.
//     `codex_hooks` still works as a deprecated alias": install sets
//     [features] hooks = true in config.toml all the same, for builds that
//     still have the flag off, and says so. Codex asks the person to review
//     and trust a new command hook before it runs it. Codex has no switch
//     that makes a failed hook block (openai/codex#41979 asks for one): a
//     hook that crashes or times out lets the call run.
//   - Gemini CLI, https://geminicli.com/docs/hooks/reference ("Configuration
//     schema"): ~/.gemini/settings.json, {"hooks": {"BeforeTool":
//     [{"matcher": regex, "hooks": [{"type": "command", "command": …,
//     "name": …, "timeout": milliseconds}]}]}}. Exit codes other than 0
//     and 2 are "a warning … the CLI continues": no fail-closed switch.
//
// Install merges one group per event into the file with the absolute path
// of this binary (symbolic links resolved): a hook that names a bare
// "agent-shim" fails with 127 where PATH lacks it, which every agent reads
// as "go ahead". Every other byte of the file is kept (see jsonedit.go);
// a run with nothing to change writes nothing. The write is atomic and
// goes to the file a symbolic link names (the link stays), under the lock
// statefile.Lock takes beside that file, after a copy of the old content
// in $XDG_STATE_HOME/agent-shim/backups/. What install added beyond its
// hook groups (a "hooks" or "env" object, the Codex flag, the shell link)
// is recorded in $XDG_STATE_HOME/agent-shim/installs.json, so that
// uninstall removes exactly that.

// hookTimeout is the hook's timeout: generous, since a hook killed on a
// timeout lets the call through.
const hookTimeout = 30 // seconds

type hookHandler struct {
	Type      string `json:"type"`
	Name      string `json:"name,omitempty"`
	Command   string `json:"command"`
	Timeout   int    `json:"timeout"`
	OnFailure string `json:"onFailure,omitempty"`
}

type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

// setup is how one agent is set up.
type setup struct {
	agent    string
	events   []string
	settings func(getenv func(string) string) (string, error)
	group    func(command, event string) hookGroup
}

var setups = []*setup{
	{
		agent:  "claude-code",
		events: []string{"PreToolUse", "PostToolUse"},
		settings: func(getenv func(string) string) (string, error) {
			return agentFile(getenv, "CLAUDE_CONFIG_DIR", ".claude", "settings.json")
		},
		group: func(cmd, event string) hookGroup {
			h := hookHandler{Type: "command", Command: cmd, Timeout: hookTimeout}
			if event == "PreToolUse" {
				h.OnFailure = "block" // a hook that dies or times out blocks the call
			}
			return hookGroup{Matcher: "*", Hooks: []hookHandler{h}}
		},
	},
	{
		agent:  "codex",
		events: []string{"PreToolUse"},
		settings: func(getenv func(string) string) (string, error) {
			return agentFile(getenv, "CODEX_HOME", ".codex", "hooks.json")
		},
		group: func(cmd, _ string) hookGroup {
			return hookGroup{Hooks: []hookHandler{{Type: "command", Command: cmd, Timeout: hookTimeout}}}
		},
	},
	{
		agent:  "gemini-cli",
		events: []string{"BeforeTool"},
		settings: func(getenv func(string) string) (string, error) {
			return agentFile(getenv, "", ".gemini", "settings.json")
		},
		group: func(cmd, _ string) hookGroup {
			return hookGroup{Matcher: ".*", Hooks: []hookHandler{{Type: "command", Name: "agent-shim", Command: cmd, Timeout: hookTimeout * 1000}}}
		},
	},
}

func setupOf(name string) *setup {
	for _, s := range setups {
		if s.agent == name {
			return s
		}
	}
	return nil
}

// agentFile is $<envDir>/<name> when envDir names a set variable, else
// ~/<dir>/<name>.
func agentFile(getenv func(string) string, envDir, dir, name string) (string, error) {
	if envDir != "" {
		if d := getenv(envDir); d != "" {
			return filepath.Join(d, name), nil
		}
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("finding the agent's settings: HOME is not set")
	}
	return filepath.Join(home, dir, name), nil
}

// shellLinkName is the link shell mode runs as: Claude Code wants "bash"
// or "zsh" in its shell's name.
const shellLinkName = "agent-shim-bash"

// self is the absolute path of this program, links resolved: what the
// hook command runs.
func self() (string, error) {
	exe, err := executable()
	if err != nil {
		return "", fmt.Errorf("finding agent-shim itself: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", fmt.Errorf("finding agent-shim itself: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}

// hookCommand is the command line of agent's hook.
func hookCommand(exe, agent, cfg string) string {
	argv := []string{exe, "hook", agent}
	if cfg != "" {
		argv = append(argv, "--config", cfg)
	}
	return hooks.CommandLine(argv)
}

// isOurCommand reports whether a hook command runs some agent-shim's hook
// for agent: its program is named agent-shim…, then "hook <agent>".
func isOurCommand(cmd, agent string) bool {
	words := commandWords(cmd)
	return len(words) >= 3 && strings.HasPrefix(filepath.Base(words[0]), "agent-shim") &&
		words[1] == "hook" && words[2] == agent
}

// commandWords splits a simple command line into its words, quotes
// removed; nil when it is not one simple command of literal words.
func commandWords(cmd string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 {
		return nil
	}
	var words []string
	for _, w := range call.Args {
		var sb strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				sb.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
			case *syntax.SglQuoted:
				sb.WriteString(p.Value)
			case *syntax.DblQuoted:
				if len(p.Parts) > 1 {
					return nil
				}
				if len(p.Parts) == 1 {
					l, ok := p.Parts[0].(*syntax.Lit)
					if !ok {
						return nil
					}
					sb.WriteString(l.Value)
				}
			default:
				return nil
			}
		}
		words = append(words, sb.String())
	}
	return words
}

// installRecord is what one install added besides its hook groups.
type installRecord struct {
	Agent    string `json:"agent"`
	Settings string `json:"settings"`
	// SettingsCreated: install created the settings file.
	SettingsCreated bool     `json:"settingsCreated,omitempty"`
	Created         []string `json:"created,omitempty"` // objects install created: "hooks", "hooks.PreToolUse", "env"
	// CLAUDE_CODE_SHELL in "env": what it was before, if anything.
	ShellEnv     bool    `json:"shellEnv,omitempty"`
	PrevShellEnv *string `json:"prevShellEnv,omitempty"`
	Link         string  `json:"link,omitempty"` // the shell link install made
	// Codex: config.toml, and what install did to it.
	Config        string  `json:"config,omitempty"`
	ConfigCreated bool    `json:"configCreated,omitempty"`
	FeaturesAdded bool    `json:"featuresAdded,omitempty"` // the [features] table
	FlagLine      string  `json:"flagLine,omitempty"`      // the line install wrote
	PrevFlagLine  *string `json:"prevFlagLine,omitempty"`  // the line it replaced
}

func recordKey(agent, settings string) string { return agent + " " + settings }

// records reads and updates installs.json under its lock.
func (e *env) records(ctx context.Context, change func(map[string]*installRecord) bool) error {
	dir, err := stateDir(e.getenv)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "installs.json")
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	m := map[string]*installRecord{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	default:
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if !change(m) {
		return nil
	}
	return statefile.WriteJSON(path, m, 0o600)
}

const installSynopsis = "agent-shim install claude-code|codex|gemini-cli [--settings FILE] [--config FILE] [--shell]"
const uninstallSynopsis = "agent-shim uninstall claude-code|codex|gemini-cli [--settings FILE]"

type installOptions struct {
	agent    *setup
	settings string
	config   string
	shell    bool
}

// parseInstallArgs reads install's and uninstall's arguments, flags before
// or after the agent.
func (e *env) parseInstallArgs(cmd string, args []string) (*installOptions, error) {
	synopsis := installSynopsis
	if cmd == "uninstall" {
		synopsis = uninstallSynopsis
	}
	var o installOptions
	name := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", synopsis)
			return nil, errHelp
		case strings.HasPrefix(a, "-") && (flag == "settings" || flag == "config" && cmd == "install"):
			if !hasVal {
				if i+1 == len(args) {
					return nil, usagef("%s: flag %s needs a file", cmd, a)
				}
				i++
				val = args[i]
			}
			if val == "" {
				return nil, usagef("%s: flag %s needs a file", cmd, a)
			}
			abs, err := filepath.Abs(val)
			if err != nil {
				return nil, err
			}
			if flag == "settings" {
				o.settings = abs
			} else {
				o.config = abs
			}
		case strings.HasPrefix(a, "-") && flag == "shell" && !hasVal && cmd == "install":
			o.shell = true
		case strings.HasPrefix(a, "-"):
			return nil, usagef("%s: unknown flag %s", cmd, a)
		case name != "":
			return nil, usagef("%s: one agent, got %q and %q", cmd, name, a)
		default:
			name = a
		}
	}
	if name == "" {
		return nil, usagef("%s: name the agent: %s", cmd, synopsis)
	}
	if o.agent = setupOf(name); o.agent == nil {
		return nil, usagef("%s: unknown agent %q (agents: claude-code, codex, gemini-cli)", cmd, name)
	}
	if o.settings == "" {
		p, err := o.agent.settings(e.getenv)
		if err != nil {
			return nil, err
		}
		o.settings = p
	}
	return &o, nil
}

// install is `agent-shim install`.
func (e *env) install(ctx context.Context, args []string) error {
	o, err := e.parseInstallArgs("install", args)
	if err != nil {
		return err
	}
	exe, err := self()
	if err != nil {
		return err
	}
	cmd := hookCommand(exe, o.agent.agent, o.config)
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	rec := &installRecord{Agent: o.agent.agent, Settings: o.settings}
	key := recordKey(o.agent.agent, o.settings)
	if err := e.records(ctx, func(m map[string]*installRecord) bool {
		if r := m[key]; r != nil {
			rec = r
		}
		return false
	}); err != nil {
		return err
	}
	link := ""
	if o.shell && o.agent.agent == "claude-code" {
		if link, err = e.shellLink(exe, rec); err != nil {
			return err
		}
	}
	if _, err := os.Stat(o.settings); errors.Is(err, fs.ErrNotExist) {
		rec.SettingsCreated = true
	}
	changed, err := e.editSettings(ctx, o.settings, func(data []byte) ([]byte, error) {
		data, err := installGroups(o.settings, data, o.agent, cmd, rec)
		if err != nil || link == "" {
			return data, err
		}
		return setShellEnv(o.settings, data, link, rec)
	})
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(e.stdout, "agent-shim: installed the %s hook in %s (%s): %s\n", o.agent.agent, o.settings, strings.Join(o.agent.events, ", "), cmd)
	} else {
		fmt.Fprintf(e.stdout, "agent-shim: the %s hook is already installed in %s\n", o.agent.agent, o.settings)
	}
	if o.agent.agent == "codex" {
		if err := e.codexFlag(ctx, o.settings, rec); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "agent-shim: Codex asks you to review and trust a new hook before it runs it: do so in Codex's /hooks\n")
	}
	if o.shell {
		switch o.agent.agent {
		case "claude-code":
			fmt.Fprintf(e.stdout, "agent-shim: Claude Code's Bash tool now runs through shell mode: env.CLAUDE_CODE_SHELL=%s\n", link)
		default:
			fmt.Fprintf(e.stdout, "agent-shim: %s has no setting for the shell it runs commands with; an agent that runs $SHELL -c can be started as\n  SHELL=%s %s\n", o.agent.agent, hooks.CommandLine([]string{linkPath(e.getenv)}), map[string]string{"codex": "codex", "gemini-cli": "gemini"}[o.agent.agent])
		}
	}
	return e.records(ctx, func(m map[string]*installRecord) bool {
		if reflect2(m[key], rec) {
			return false
		}
		m[key] = rec
		return true
	})
}

// reflect2 reports whether two records are equal.
func reflect2(a, b *installRecord) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// uninstall is `agent-shim uninstall`.
func (e *env) uninstall(ctx context.Context, args []string) error {
	o, err := e.parseInstallArgs("uninstall", args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	key := recordKey(o.agent.agent, o.settings)
	rec := &installRecord{Agent: o.agent.agent, Settings: o.settings}
	if err := e.records(ctx, func(m map[string]*installRecord) bool {
		if r := m[key]; r != nil {
			rec = r
		}
		return false
	}); err != nil {
		return err
	}
	if _, err := os.Stat(o.settings); err == nil {
		changed, err := e.editSettings(ctx, o.settings, func(data []byte) ([]byte, error) {
			data, err := uninstallGroups(o.settings, data, o.agent, rec)
			if err != nil {
				return nil, err
			}
			return unsetShellEnv(o.settings, data, e.getenv, rec)
		})
		if err != nil {
			return err
		}
		if data, err := os.ReadFile(o.settings); err == nil && rec.SettingsCreated && string(bytes.TrimSpace(data)) == "{}" {
			if err := os.Remove(o.settings); err != nil {
				return err
			}
		}
		if changed {
			fmt.Fprintf(e.stdout, "agent-shim: removed the %s hook from %s\n", o.agent.agent, o.settings)
		} else {
			fmt.Fprintf(e.stdout, "agent-shim: no %s hook in %s\n", o.agent.agent, o.settings)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else {
		fmt.Fprintf(e.stdout, "agent-shim: no %s hook in %s\n", o.agent.agent, o.settings)
	}
	if rec.Link != "" {
		if fi, err := os.Lstat(rec.Link); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(rec.Link); err == nil && strings.HasPrefix(filepath.Base(t), "agent-shim") {
				if err := os.Remove(rec.Link); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "agent-shim: removed %s\n", rec.Link)
			}
		}
	}
	if o.agent.agent == "codex" && rec.Config != "" {
		if err := e.uncodexFlag(ctx, rec); err != nil {
			return err
		}
	}
	return e.records(ctx, func(m map[string]*installRecord) bool {
		if m[key] == nil {
			return false
		}
		delete(m, key)
		return true
	})
}

// editSettings applies change to the settings file at path (an absent
// file is an empty object) under its lock, and writes the result
// atomically when it differs, after a backup. The file a symbolic link
// names is the one written.
func (e *env) editSettings(ctx context.Context, path string, change func([]byte) ([]byte, error)) (bool, error) {
	target := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		target = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	} else if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("%s is a symbolic link to nothing: not replacing the link with a file", path)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return false, err
	}
	unlock, err := statefile.Lock(ctx, target)
	if err != nil {
		return false, err
	}
	defer unlock()
	old, err := os.ReadFile(target)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	data := old
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	data, err = change(data)
	if err != nil {
		return false, err
	}
	if existed && bytes.Equal(data, old) {
		return false, nil
	}
	if existed {
		if err := e.backup(target, old); err != nil {
			return false, err
		}
	}
	return true, statefile.WriteAtomic(target, data, 0o600)
}

// backup keeps a copy of a file's content before install changes it.
func (e *env) backup(path string, data []byte) error {
	dir, err := stateDir(e.getenv)
	if err != nil {
		return err
	}
	bdir := filepath.Join(dir, "backups")
	if err := os.MkdirAll(bdir, 0o700); err != nil {
		return err
	}
	var nonce [4]byte
	rand.Read(nonce[:])
	p := filepath.Join(bdir, fmt.Sprintf("%s-%s-%x", readableName(path), ticketNow().UTC().Format("20060102T150405"), nonce))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return fmt.Errorf("backing up %s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, "agent-shim: backup of %s: %s\n", path, p)
	return nil
}

// readableName names a backup after the last two elements of path.
func readableName(path string) string {
	s := filepath.Base(filepath.Dir(path)) + "-" + filepath.Base(path)
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "_"), "._-")
}

// objectAt returns the object at key of obj, creating it (and recording
// name as created) when absent.
func objectAt(path string, data []byte, root, obj *jval, key, name string, rec *installRecord, create bool) ([]byte, *jval, bool, error) {
	v := obj.member(key)
	if v == nil {
		if !create {
			return data, nil, false, nil
		}
		data, err := appendItem(data, root, obj, key, map[string]any{})
		if err != nil {
			return nil, nil, false, err
		}
		if !slices.Contains(rec.Created, name) {
			rec.Created = append(rec.Created, name)
		}
		return data, nil, true, nil
	}
	if v.kind != '{' {
		line, col := lineCol(data, v.start)
		return nil, nil, false, fmt.Errorf("%s:%d:%d: %s is not an object", path, line, col, name)
	}
	return data, v, false, nil
}

// installGroups makes the hook groups of s in data exactly one group per
// event running cmd: an equal group is kept, other groups of ours (an
// older path, other flags) are replaced.
func installGroups(path string, data []byte, s *setup, cmd string, rec *installRecord) ([]byte, error) {
	for _, ev := range s.events {
		want := s.group(cmd, ev)
		for range 8 { // each round changes one thing and scans again
			root, err := parseDoc(path, data)
			if err != nil {
				return nil, err
			}
			if root.kind != '{' {
				return nil, fmt.Errorf("%s:1:1: the settings are not a JSON object", path)
			}
			d, hooksObj, again, err := objectAt(path, data, root, root, "hooks", "hooks", rec, true)
			if err != nil {
				return nil, err
			}
			if again {
				data = d
				continue
			}
			arr := hooksObj.member(ev)
			if arr == nil {
				if data, err = appendItem(data, root, hooksObj, ev, []any{}); err != nil {
					return nil, err
				}
				rec.Created = append(rec.Created, "hooks."+ev)
				continue
			}
			if arr.kind != '[' {
				line, col := lineCol(data, arr.start)
				return nil, fmt.Errorf("%s:%d:%d: hooks.%s is not an array", path, line, col, ev)
			}
			// Is exactly one group of ours there, equal to want?
			equal, ours := -1, 0
			for i, g := range arr.elems {
				if n := oursIn(data, g, s.agent); n > 0 {
					ours++
					if sameJSON(data, g, want) {
						equal = i
					}
				}
			}
			if ours == 0 {
				data, err = appendItem(data, root, arr, "", want)
				if err != nil {
					return nil, err
				}
				continue
			}
			if ours == 1 && equal >= 0 {
				break
			}
			// Remove one group or handler of ours that is not want.
			data = removeOurs(data, arr, s.agent, equal)
		}
	}
	return data, nil
}

// oursIn counts the handlers of ours in hook group g.
func oursIn(data []byte, g *jval, agent string) int {
	hs := g.member("hooks")
	if hs == nil || hs.kind != '[' {
		return 0
	}
	n := 0
	for _, h := range hs.elems {
		if c := h.member("command"); c != nil && c.kind == '"' {
			var s string
			json.Unmarshal(data[c.start:c.end], &s)
			if isOurCommand(s, agent) {
				n++
			}
		}
	}
	return n
}

// removeOurs removes, from the groups of arr other than keep, the first
// group all of whose handlers are ours, or else the first handler of ours.
func removeOurs(data []byte, arr *jval, agent string, keep int) []byte {
	for i, g := range arr.elems {
		if i == keep {
			continue
		}
		n := oursIn(data, g, agent)
		if n == 0 {
			continue
		}
		hs := g.member("hooks")
		if n == len(hs.elems) {
			return removeItem(data, arr, i)
		}
		for j, h := range hs.elems {
			if c := h.member("command"); c != nil && c.kind == '"' {
				var s string
				json.Unmarshal(data[c.start:c.end], &s)
				if isOurCommand(s, agent) {
					return removeItem(data, hs, j)
				}
			}
		}
	}
	return data
}

// uninstallGroups removes every group and handler of ours, then the event
// arrays and the hooks object install created, if they are empty.
func uninstallGroups(path string, data []byte, s *setup, rec *installRecord) ([]byte, error) {
	for {
		root, err := parseDoc(path, data)
		if err != nil {
			return nil, err
		}
		hooksObj := root.member("hooks")
		if root.kind != '{' || hooksObj == nil || hooksObj.kind != '{' {
			return data, nil
		}
		changed := false
		for _, ev := range s.events {
			arr := hooksObj.member(ev)
			if arr == nil || arr.kind != '[' {
				continue
			}
			if d := removeOurs(data, arr, s.agent, -1); !bytes.Equal(d, data) {
				data, changed = d, true
				break
			}
			if len(arr.elems) == 0 && slices.Contains(rec.Created, "hooks."+ev) {
				data, changed = removeItem(data, hooksObj, hooksObj.memberIndex(ev)), true
				break
			}
		}
		if changed {
			continue
		}
		if len(hooksObj.members) == 0 && slices.Contains(rec.Created, "hooks") {
			return removeItem(data, root, root.memberIndex("hooks")), nil
		}
		return data, nil
	}
}

// linkPath is where the shell link goes: ~/.local/bin/agent-shim-bash.
func linkPath(getenv func(string) string) string {
	return filepath.Join(getenv("HOME"), ".local", "bin", shellLinkName)
}

// shellLink makes ~/.local/bin/agent-shim-bash a link to exe (making the
// directory on a fresh home). A file there that is not a link to an
// agent-shim is left alone, and install fails.
func (e *env) shellLink(exe string, rec *installRecord) (string, error) {
	if e.getenv("HOME") == "" {
		return "", errors.New("making the shell link: HOME is not set")
	}
	link := linkPath(e.getenv)
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return "", fmt.Errorf("making the shell link: %s exists and is not a link (move it away and run install again)", link)
		}
		t, err := os.Readlink(link)
		if err != nil {
			return "", err
		}
		if t == exe {
			return link, nil
		}
		if !strings.HasPrefix(filepath.Base(t), "agent-shim") {
			return "", fmt.Errorf("making the shell link: %s links to %s, not to agent-shim (move it away and run install again)", link, t)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	tmp := link + ".tmp-agent-shim"
	os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	rec.Link = link
	fmt.Fprintf(e.stdout, "agent-shim: %s -> %s\n", link, exe)
	return link, nil
}

// setShellEnv sets env.CLAUDE_CODE_SHELL to link in Claude Code's settings.
func setShellEnv(path string, data []byte, link string, rec *installRecord) ([]byte, error) {
	for range 4 {
		root, err := parseDoc(path, data)
		if err != nil {
			return nil, err
		}
		d, envObj, again, err := objectAt(path, data, root, root, "env", "env", rec, true)
		if err != nil {
			return nil, err
		}
		if again {
			data = d
			continue
		}
		v := envObj.member("CLAUDE_CODE_SHELL")
		if v == nil {
			rec.ShellEnv = true
			return appendItem(data, root, envObj, "CLAUDE_CODE_SHELL", link)
		}
		var cur string
		if v.kind == '"' {
			json.Unmarshal(data[v.start:v.end], &cur)
		}
		if cur == link {
			return data, nil
		}
		if !rec.ShellEnv {
			prev := string(data[v.start:v.end])
			rec.PrevShellEnv = &prev
		}
		rec.ShellEnv = true
		q, _ := encodeAt(link, "", "")
		return splice(data, v.start, v.end, q), nil
	}
	return data, nil
}

// unsetShellEnv undoes setShellEnv: CLAUDE_CODE_SHELL pointing at the
// shell link goes (or gets back its old value), and the env object with
// it when install created it and it is empty.
func unsetShellEnv(path string, data []byte, getenv func(string) string, rec *installRecord) ([]byte, error) {
	root, err := parseDoc(path, data)
	if err != nil {
		return nil, err
	}
	envObj := root.member("env")
	if envObj == nil || envObj.kind != '{' {
		return data, nil
	}
	i := envObj.memberIndex("CLAUDE_CODE_SHELL")
	if i < 0 {
		return data, nil
	}
	v := envObj.members[i].val
	var cur string
	json.Unmarshal(data[v.start:v.end], &cur)
	if !rec.ShellEnv && filepath.Base(cur) != shellLinkName || rec.ShellEnv && cur != rec.Link && cur != linkPath(getenv) {
		return data, nil // not ours
	}
	if rec.PrevShellEnv != nil {
		return splice(data, v.start, v.end, *rec.PrevShellEnv), nil
	}
	data = removeItem(data, envObj, i)
	if len(envObj.members) == 1 && slices.Contains(rec.Created, "env") {
		root, err := parseDoc(path, data)
		if err != nil {
			return nil, err
		}
		data = removeItem(data, root, root.memberIndex("env"))
	}
	return data, nil
}

// Codex's feature flag, in config.toml beside hooks.json.
var (
	tableRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[`) })
	featuresRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*features\s*\]\s*(#.*)?$`) })
	hooksKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(hooks|"hooks")\s*=\s*([a-z]+)\s*(#.*)?$`) })
)

// featureLine returns the index of the first line of config.toml's
// [features] table for which match holds, or -1.
func featureLine(lines []string, match func(string) bool) int {
	in := false
	for i, l := range lines {
		switch {
		case featuresRE().MatchString(l):
			in = true
		case tableRE().MatchString(l):
			in = false
		case in && match(l):
			return i
		}
	}
	return -1
}

const flagLine = "hooks = true"

// codexFlag sets [features] hooks = true in the config.toml beside
// hooks.json, recording what it changed.
func (e *env) codexFlag(ctx context.Context, hooksPath string, rec *installRecord) error {
	path := filepath.Join(filepath.Dir(hooksPath), "config.toml")
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	lines := strings.SplitAfter(string(old), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if i := featureLine(lines, hooksKeyRE().MatchString); i >= 0 {
		if hooksKeyRE().FindStringSubmatch(lines[i])[2] == "true" {
			return nil
		}
		prev := strings.TrimRight(lines[i], "\n")
		if rec.FlagLine == "" {
			rec.PrevFlagLine = &prev
		}
		lines[i] = flagLine + "\n"
	} else {
		at := -1
		for i, l := range lines {
			if featuresRE().MatchString(l) {
				at = i
				break
			}
		}
		if at >= 0 {
			lines = slices.Insert(lines, at+1, flagLine+"\n")
		} else {
			if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
				lines[len(lines)-1] += "\n"
			}
			if len(lines) > 0 {
				lines = append(lines, "\n")
			}
			lines = append(lines, "[features]\n", flagLine+"\n")
			rec.FeaturesAdded = true
		}
	}
	rec.Config, rec.FlagLine, rec.ConfigCreated = path, flagLine, rec.ConfigCreated || !existed
	if existed {
		if err := e.backup(path, old); err != nil {
			return err
		}
	}
	if err := statefile.WriteAtomic(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "agent-shim: set [features] %s in %s\n", flagLine, path)
	return nil
}

// uncodexFlag undoes codexFlag.
func (e *env) uncodexFlag(ctx context.Context, rec *installRecord) error {
	path := rec.Config
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if rec.ConfigCreated && string(old) == "[features]\n"+flagLine+"\n" {
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "agent-shim: removed %s\n", path)
		return nil
	}
	lines := strings.SplitAfter(string(old), "\n")
	if i := featureLine(lines, func(l string) bool { return strings.TrimSpace(l) == flagLine }); i >= 0 {
		if rec.PrevFlagLine != nil {
			lines[i] = *rec.PrevFlagLine + "\n"
		} else {
			lines = slices.Delete(lines, i, i+1)
			// The table install added, now empty, goes too.
			if rec.FeaturesAdded && i >= 1 && featuresRE().MatchString(lines[i-1]) &&
				(i == len(lines) || lines[i] == "" || tableRE().MatchString(lines[i])) {
				lines = slices.Delete(lines, i-1, i)
				if i-2 >= 0 && lines[i-2] == "\n" {
					lines = slices.Delete(lines, i-2, i-1)
				}
			}
		}
		if err := e.backup(path, old); err != nil {
			return err
		}
		if err := statefile.WriteAtomic(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "agent-shim: undid [features] %s in %s\n", flagLine, path)
		return nil
	}
	return nil
}
