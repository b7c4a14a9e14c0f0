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
	"runtime"
	"slices"
	"strings"

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
//     features.hooks = true in config.toml all the same, for builds that
//     still have the flag off (through the TOML editor, tomledit.go).
//     Codex runs a user hook only once it is trusted; install writes the
//     trust as Codex's /hooks does (codextrust.go). Codex has no switch
//     that makes a failed hook block (openai/codex#41979 asks for one): a
//     hook that crashes or times out lets the call run, so the command is
//     guarded (guardedCommand).
//   - Gemini CLI, https://geminicli.com/docs/hooks/reference ("Configuration
//     schema"): ~/.gemini/settings.json, {"hooks": {"BeforeTool":
//     [{"matcher": regex, "hooks": [{"type": "command", "command": …,
//     "name": …, "timeout": milliseconds}]}]}}, under $GEMINI_CLI_HOME
//     when set, read with comments. Exit 1 is "a warning … the CLI
//     continues", a timeout lets the call run: no fail-closed switch, so
//     the command is guarded (guardedCommand); exit 2 or more with output
//     that is not JSON denies (gemini-cli hookRunner.ts).
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
	// jsonc: the agent reads its settings with // and /* */ comments.
	jsonc bool
	// wrapped: the agent lets a call through when its hook fails, so the
	// hook command turns every failure into a block (see guardedCommand).
	wrapped bool
}

// parse reads the agent's settings file.
func (s *setup) parse(path string, data []byte) (*jval, error) {
	if s.jsonc {
		return parseDocComments(path, data)
	}
	return parseDoc(path, data)
}

// geminiSettings is Gemini CLI's user settings file: .gemini/settings.json
// under $GEMINI_CLI_HOME when that is set, else under the home directory
// (gemini-cli packages/core/src/utils/paths.ts homedir(), config/storage.ts
// getGlobalSettingsPath()).
func geminiSettings(getenv func(string) string) (string, error) {
	if d := getenv("GEMINI_CLI_HOME"); d != "" {
		return filepath.Join(d, ".gemini", "settings.json"), nil
	}
	return agentFile(getenv, "", ".gemini", "settings.json")
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
		wrapped: true,
	},
	{
		agent:    "gemini-cli",
		events:   []string{"BeforeTool"},
		settings: geminiSettings,
		jsonc:    true,
		group: func(cmd, _ string) hookGroup {
			return hookGroup{Matcher: ".*", Hooks: []hookHandler{{Type: "command", Name: "agent-shim", Command: cmd, Timeout: hookTimeout * 1000}}}
		},
		wrapped: true,
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

// hookCommand is the command line of agent's hook: the shim itself for
// Claude Code (whose "onFailure": "block" makes a failed hook block), and
// for Codex and Gemini CLI, which go ahead when a hook fails, the shim
// guarded so that any failure blocks (guardedCommand).
func hookCommand(exe, agent, cfg string) string {
	inner := plainCommand(exe, agent, cfg)
	if s := setupOf(agent); s != nil && s.wrapped {
		return guardedCommand(hookGuard(), inner)
	}
	return inner
}

// plainCommand is the shim's own command line for agent's hook.
func plainCommand(exe, agent, cfg string) string {
	argv := []string{exe, "hook", agent}
	if cfg != "" {
		argv = append(argv, "--config", cfg)
	}
	return hooks.CommandLine(argv)
}

// guardSeconds bounds the guarded shim's run: under the agents' own hook
// timeout (hookTimeout), so that the guard, not the agent, ends a hung
// shim, and the call is blocked instead of let through. (A variable for
// the tests that wait it out.)
var guardSeconds = 20

// The guards: how the hook command bounds the shim's time. Linux has
// coreutils' (or busybox's) timeout; macOS has none by default, but has
// perl, which forks the shim into a process group of its own, as timeout
// does, kills the group with SIGKILL past the time (a child left holding
// the output open would keep the hook waiting) and exits 124. (A Go
// program ignores the SIGALRM that perl's alarm alone would send it.)
func guardTimeout() string { return fmt.Sprintf("timeout -k 2 %d", guardSeconds) }

func guardPerl() string {
	return fmt.Sprintf(`perl -e 'defined($p=fork)or exit 125;if(!$p){setpgrp;exec@ARGV;exit 127}setpgrp $p,$p;$SIG{ALRM}=sub{kill 9,-$p;exit 124};alarm %d;waitpid $p,0;exit($?&127?128+($?&127):$?>>8)'`, guardSeconds)
}

// hookGuard is the guard hookCommand uses on this system.
var hookGuard = map[bool]func() string{true: guardPerl, false: guardTimeout}[runtime.GOOS == "darwin"]

// guardFailure is the message a guarded hook writes when the shim failed.
const guardFailure = "agent-shim failed: blocking"

// guardedCommand runs inner under guard and turns every failure — the
// shim missing (127), crashing, exiting non-zero, killed, or past its
// time — into exit 2 with a line of text on stderr: Codex blocks on exit
// 2, and Gemini CLI denies on an exit of 2 or more with output that is
// not JSON. The shim's stdout is kept back until it succeeded, so that a
// half-written answer of a failed run never reaches the agent; an exit 2
// of the shim's own (its blocking answer) stays exit 2.
func guardedCommand(guard, inner string) string {
	return "out=$(" + guard + " " + inner + `) && printf '%s\n' "$out" || { echo '` + guardFailure + `' >&2; exit 2; }`
}

// ourHook reads a hook command of agent-shim's for agent: the shim's
// path, its --config, and whether the command is guarded. A command is
// ours when it is the plain command line (any quoting) or exactly one of
// the guarded forms around it.
func ourHook(cmd, agent string) (exe, cfg string, guarded, ok bool) {
	if words := commandWords(cmd); words != nil {
		exe, cfg, ok = shimArgs(words, agent)
		return exe, cfg, false, ok
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "", "", false, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		call, isCall := n.(*syntax.CallExpr)
		if ok || !isCall {
			return !ok
		}
		words := literalWords(call.Args)
		for i := range words {
			if e, c, found := shimArgs(words[i:], agent); found {
				exe, cfg, ok = e, c, true
				return false
			}
		}
		return true
	})
	if !ok {
		return "", "", false, false
	}
	inner := plainCommand(exe, agent, cfg)
	for _, g := range []func() string{guardTimeout, guardPerl} {
		if cmd == guardedCommand(g(), inner) {
			return exe, cfg, true, true
		}
	}
	return "", "", false, false
}

// shimArgs reads "<…/agent-shim…> hook <agent> [--config FILE]".
func shimArgs(words []string, agent string) (exe, cfg string, ok bool) {
	if len(words) < 3 || !strings.HasPrefix(filepath.Base(words[0]), "agent-shim") || words[1] != "hook" || words[2] != agent {
		return "", "", false
	}
	if len(words) == 5 && words[3] == "--config" {
		cfg = words[4]
	}
	return words[0], cfg, true
}

// isOurCommand reports whether a hook command runs some agent-shim's hook
// for agent, plain or guarded.
func isOurCommand(cmd, agent string) bool {
	_, _, _, ok := ourHook(cmd, agent)
	return ok
}

// commandWords splits a simple command line into its words, quotes
// removed; nil when it is not one simple command of literal words.
func commandWords(cmd string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || f.Stmts[0].Redirs != nil {
		return nil
	}
	return literalWords(call.Args)
}

// literalWords returns the words, quotes removed; nil when one is not
// literal.
func literalWords(args []*syntax.Word) []string {
	var words []string
	for _, w := range args {
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
	FlagLine      string  `json:"flagLine,omitempty"`      // set when install set features.hooks
	PrevFlag      string  `json:"prevFlag,omitempty"`      // the value it replaced
	PrevFlagLine  *string `json:"prevFlagLine,omitempty"`  // an older install's: the line it replaced
	// The trust install wrote for the hook: hooks.state key, hash, and
	// the trusted_hash it replaced.
	TrustKey  string `json:"trustKey,omitempty"`
	TrustHash string `json:"trustHash,omitempty"`
	PrevTrust string `json:"prevTrust,omitempty"`
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

const installSynopsis = "agent-shim install claude-code|codex|gemini-cli [--settings FILE] [--config FILE] [--shell] [--managed]"
const uninstallSynopsis = "agent-shim uninstall claude-code|codex|gemini-cli [--settings FILE] [--managed]"

type installOptions struct {
	agent    *setup
	settings string
	config   string
	shell    bool
	managed  bool // the agent's managed tier (managed.go)
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
		case strings.HasPrefix(a, "-") && flag == "managed" && !hasVal:
			o.managed = true
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
	if o.managed && o.shell {
		return nil, usagef("%s: --shell changes the user's settings; it does not go with --managed", cmd)
	}
	if o.shell && o.agent.agent != "claude-code" {
		// Codex 0.169 runs /bin/bash whatever $SHELL says; Gemini CLI
		// runs bash from PATH for its shell tool and its hooks alike, so
		// shell mode in bash's place would refuse the hook itself. The
		// hook guards them; `agent-shim run -- codex` (or gemini) puts the
		// whole agent under the run-time layer.
		return nil, usagef("%s: --shell is for Claude Code only: %s runs its own choice of bash, not a shell it can be given; the hook guards it, and `agent-shim run -- %s` runs it under the run-time layer",
			cmd, o.agent.agent, map[string]string{"codex": "codex", "gemini-cli": "gemini"}[o.agent.agent])
	}
	if o.settings == "" && o.managed {
		o.settings = managedSettings(o.agent.agent, e.getenv)
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
	if o.agent.agent == "codex" && !o.managed {
		// config.toml is edited after hooks.json (the trust names the
		// hook's place there): a config.toml that cannot be edited stops
		// install before anything is written.
		if err := codexPrecheck(codexConfig(o.settings)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(o.settings); errors.Is(err, fs.ErrNotExist) {
		rec.SettingsCreated = true
	}
	mode := fs.FileMode(0o600)
	if o.managed {
		mode = 0o644 // read by the agent, as the user
	}
	var changed bool
	if o.managed && o.agent.agent == "codex" {
		_, changed, err = e.editTOML(ctx, o.settings, mode, func(data []byte) ([]byte, error) {
			return setCodexManaged(o.settings, data, cmd)
		})
	} else {
		changed, err = e.editSettings(ctx, o.settings, mode, func(data []byte) ([]byte, error) {
			data, err := installGroups(o.settings, data, o.agent, cmd, rec)
			if err == nil && o.managed && o.agent.agent == "gemini-cli" {
				data, err = pinGeminiHooks(o.settings, data, rec) // managed.go
			}
			if err != nil || link == "" {
				return data, err
			}
			return setShellEnv(o.settings, data, link, rec)
		})
	}
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(e.stdout, "agent-shim: installed the %s hook in %s (%s): %s\n", o.agent.agent, o.settings, strings.Join(o.agent.events, ", "), cmd)
	} else {
		fmt.Fprintf(e.stdout, "agent-shim: the %s hook is already installed in %s\n", o.agent.agent, o.settings)
	}
	if o.managed {
		caveat := ""
		if o.agent.agent == "gemini-cli" {
			caveat = " (but Gemini CLI merges hooksConfig.disabled across its files: a user file listing agent-shim there switches it off; doctor checks it)"
		}
		fmt.Fprintf(e.stdout, "agent-shim: %s is %s's managed tier: a user-level settings file cannot remove the hook%s\n", o.settings, o.agent.agent, caveat)
		if who := userWritable(exe); who != "" {
			fmt.Fprintf(e.stderr, "agent-shim: warning: %s can be replaced without root (%s): the agent could replace the guard itself; install agent-shim where only root writes (such as /usr/local/bin) and run install --managed from there\n", exe, who)
		}
	}
	if o.agent.agent == "codex" && !o.managed {
		if err := e.codexConfigure(ctx, o.settings, rec); err != nil {
			return err
		}
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
		var changed bool
		if o.managed && o.agent.agent == "codex" {
			_, changed, err = e.editTOML(ctx, o.settings, 0o644, func(data []byte) ([]byte, error) {
				return unsetCodexManaged(o.settings, data)
			})
		} else {
			changed, err = e.editSettings(ctx, o.settings, 0o600, func(data []byte) ([]byte, error) {
				data, err := uninstallGroups(o.settings, data, o.agent, rec)
				if err == nil && o.managed && o.agent.agent == "gemini-cli" {
					data, err = unpinGeminiHooks(o.settings, data, rec) // managed.go
				}
				if err != nil || o.agent.agent != "claude-code" {
					return data, err
				}
				return unsetShellEnv(o.settings, data, e.getenv, rec)
			})
		}
		if err != nil {
			return err
		}
		if data, err := os.ReadFile(o.settings); err == nil && rec.SettingsCreated && (string(bytes.TrimSpace(data)) == "{}" || o.managed && o.agent.agent == "codex" && len(bytes.TrimSpace(data)) == 0) {
			if err := os.Remove(o.settings); err != nil {
				return err
			}
			// The lock beside it goes too: install made both.
			if err := os.Remove(statefile.LockPath(o.settings)); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	if o.agent.agent == "codex" && rec.Config != "" && !o.managed {
		if err := e.uncodexConfigure(ctx, rec); err != nil {
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
func (e *env) editSettings(ctx context.Context, path string, mode fs.FileMode, change func([]byte) ([]byte, error)) (bool, error) {
	target := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		target = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	} else if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("%s is a symbolic link to nothing: not replacing the link with a file", path)
	}
	if err := os.MkdirAll(filepath.Dir(target), dirMode(mode)); err != nil {
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
	if existed {
		if fi, err := os.Stat(target); err == nil {
			mode = fi.Mode().Perm() // a file keeps its mode
		}
	}
	return true, statefile.WriteAtomic(target, data, mode)
}

// dirMode is the mode of a directory made for a file of mode: others may
// enter it when they may read the file.
func dirMode(mode fs.FileMode) fs.FileMode {
	if mode&0o044 != 0 {
		return 0o755
	}
	return 0o700
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
			root, err := s.parse(path, data)
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
		root, err := s.parse(path, data)
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

// codexConfig is the config.toml beside Codex's hooks.json.
func codexConfig(hooksPath string) string {
	return filepath.Join(filepath.Dir(hooksPath), "config.toml")
}

// codexKeyPath is hooks.json's path as Codex names it in its trust keys:
// with CODEX_HOME set, Codex canonicalizes it (links resolved).
func codexKeyPath(getenv func(string) string, hooksPath string) string {
	if getenv("CODEX_HOME") == "" {
		return hooksPath
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(hooksPath)); err == nil {
		return filepath.Join(dir, filepath.Base(hooksPath))
	}
	return hooksPath
}

// codexTrust is the trust Codex needs for our PreToolUse handler in
// hooks.json: its hooks.state key and trusted_hash. ok is false when the
// file holds no handler of ours.
func codexTrust(getenv func(string) string, hooksPath string, data []byte) (key, hash string, ok bool) {
	root, err := parseDoc(hooksPath, data)
	if err != nil {
		return "", "", false
	}
	arr := root.member("hooks").member("PreToolUse")
	if arr == nil || arr.kind != '[' {
		return "", "", false
	}
	for gi, g := range arr.elems {
		hs := g.member("hooks")
		if hs == nil || hs.kind != '[' {
			continue
		}
		for hi, h := range hs.elems {
			var x struct {
				Type          string  `json:"type"`
				Command       string  `json:"command"`
				Timeout       *int64  `json:"timeout"`
				Async         bool    `json:"async"`
				StatusMessage *string `json:"statusMessage"`
			}
			if json.Unmarshal(data[h.start:h.end], &x) != nil || x.Type != "command" || !isOurCommand(x.Command, "codex") {
				continue
			}
			var matcher *string
			if m := g.member("matcher"); m != nil {
				var ms string
				if json.Unmarshal(data[m.start:m.end], &ms) == nil {
					matcher = &ms
				}
			}
			return codexHookKey(codexKeyPath(getenv, hooksPath), "PreToolUse", gi, hi),
				codexHookHash("PreToolUse", matcher, codexHandler{x.Command, x.Timeout, x.Async, x.StatusMessage}), true
		}
	}
	return "", "", false
}

// codexPrecheck makes, without writing them, the edits codexConfigure
// will make to config.toml.
func codexPrecheck(path string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if data, _, _, err = setFeatureHooks(path, data); err != nil {
		return err
	}
	_, _, err = setTrust(path, data, codexHookKey(filepath.Join(filepath.Dir(path), "hooks.json"), "PreToolUse", 0, 0), "sha256:")
	return err
}

// editTOML applies change to the TOML file at path (absent: empty) under
// its lock, and writes the result atomically when it differs, after a
// backup.
func (e *env) editTOML(ctx context.Context, path string, mode fs.FileMode, change func([]byte) ([]byte, error)) (existed, changed bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), dirMode(mode)); err != nil {
		return false, false, err
	}
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return false, false, err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	existed = err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, false, fmt.Errorf("reading %s: %w", path, err)
	}
	data, err := change(old)
	if err != nil || bytes.Equal(data, old) {
		return existed, false, err
	}
	if existed {
		if err := e.backup(path, old); err != nil {
			return existed, false, err
		}
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm() // a file keeps its mode
		}
	}
	return existed, true, statefile.WriteAtomic(path, data, mode)
}

// codexConfigure sets features.hooks = true in the config.toml beside
// hooks.json and trusts our hook there as Codex's /hooks would, recording
// what it changed.
func (e *env) codexConfigure(ctx context.Context, hooksPath string, rec *installRecord) error {
	data, err := os.ReadFile(hooksPath)
	if err != nil {
		return fmt.Errorf("reading %s: %w", hooksPath, err)
	}
	key, hash, ok := codexTrust(e.getenv, hooksPath, data)
	if !ok {
		return fmt.Errorf("%s: no agent-shim hook to trust", hooksPath)
	}
	path := codexConfig(hooksPath)
	var flagSet, trustSet bool
	existed, changed, err := e.editTOML(ctx, path, 0o600, func(data []byte) ([]byte, error) {
		out, prev, added, err := setFeatureHooks(path, data)
		if err != nil {
			return nil, err
		}
		if flagSet = !bytes.Equal(out, data); flagSet && rec.FlagLine == "" {
			rec.FlagLine, rec.PrevFlag, rec.FeaturesAdded = flagLine, prev, added
		}
		before := out
		out, prev, err = setTrust(path, out, key, hash)
		if err != nil {
			return nil, err
		}
		if trustSet = !bytes.Equal(out, before); trustSet {
			if rec.TrustKey != key {
				rec.PrevTrust = prev
			}
			rec.TrustKey, rec.TrustHash = key, hash
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	rec.Config, rec.ConfigCreated = path, rec.ConfigCreated || !existed
	if flagSet {
		fmt.Fprintf(e.stdout, "agent-shim: set features.%s in %s\n", flagLine, path)
	}
	if trustSet {
		fmt.Fprintf(e.stdout, "agent-shim: trusted the hook in %s, as Codex's /hooks does: [hooks.state.%s] trusted_hash = %q\n", path, tomlQuote(key), hash)
	}
	return nil
}

const flagLine = "hooks = true"

// uncodexConfigure undoes codexConfigure.
func (e *env) uncodexConfigure(ctx context.Context, rec *installRecord) error {
	path := rec.Config
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, changed, err := e.editTOML(ctx, path, 0o600, func(data []byte) ([]byte, error) {
		var err error
		if rec.TrustKey != "" {
			if data, err = unsetTrust(path, data, rec.TrustKey, rec.TrustHash, rec.PrevTrust); err != nil {
				return nil, err
			}
		}
		if rec.FlagLine != "" {
			prev := rec.PrevFlag
			if prev == "" && rec.PrevFlagLine != nil { // an older install's record
				_, prev, _ = strings.Cut(*rec.PrevFlagLine, "=")
				prev, _, _ = strings.Cut(strings.TrimSpace(prev), " ")
			}
			if data, err = unsetFeatureHooks(path, data, prev, rec.FeaturesAdded); err != nil {
				return nil, err
			}
		}
		return data, nil
	})
	if err != nil {
		return err
	}
	if data, err := os.ReadFile(path); err == nil && rec.ConfigCreated && len(bytes.TrimSpace(data)) == 0 {
		if err := os.Remove(path); err != nil {
			return err
		}
		if err := os.Remove(statefile.LockPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		fmt.Fprintf(e.stdout, "agent-shim: removed %s\n", path)
		return nil
	}
	if changed {
		fmt.Fprintf(e.stdout, "agent-shim: undid features.%s and the hook's trust in %s\n", flagLine, path)
	}
	return nil
}
