package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// doctor checks that every agent found on this machine is guarded, and
// guarded so that it fails closed: the hook is installed for the events
// the shim needs, runs a program by an absolute path that exists, and
// answers a harmless self-test as expected (`rm -rf /` denied, `git
// status` answered), run the way the agent runs it (sh -c, stdin JSON) with
// a PATH that lacks agent-shim. It reports the policy in force and whether
// shell mode and the run-time layer are there. A check that fails names the
// command that fixes it; any failure is exit 1.

const doctorSynopsis = "agent-shim doctor [--config FILE] [--json]"

// selfTestTimeout bounds each self-test run of a hook.
const selfTestTimeout = 10 * time.Second

// Check statuses.
const (
	checkOK   = "ok"
	checkInfo = "info"
	checkWarn = "warn"
	checkFail = "fail"
)

type check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

type agentReport struct {
	Agent    string  `json:"agent"`
	Settings string  `json:"settings"`
	Checks   []check `json:"checks"`
}

type doctorReport struct {
	OK     bool          `json:"ok"`
	Policy []check       `json:"policy"`
	Agents []agentReport `json:"agents"`
}

// runtimeAvailable says whether shell mode's run-time layer (the
// supervisor: seccomp user notification and Landlock) works here.
var runtimeAvailable = func() (known, ok bool, detail string) {
	ok, why := supervisor.Available()
	if ok {
		return true, true, "available: every exec under shell mode and agent-shim run is decided, writes confined"
	}
	return true, false, "not available: " + why + "; the static check stands alone"
}

func (e *env) doctor(ctx context.Context, args []string) int {
	var cfgFlag string
	asJSON := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", doctorSynopsis)
			return exitOK
		case strings.HasPrefix(a, "-") && flag == "config":
			if !hasVal {
				if i+1 == len(args) {
					return e.exitCode(usagef("doctor: flag %s needs a file", a))
				}
				i++
				val = args[i]
			}
			cfgFlag = val
		case strings.HasPrefix(a, "-") && flag == "json" && !hasVal:
			asJSON = true
		default:
			return e.exitCode(usagef("doctor: unexpected argument %s", a))
		}
	}
	exe, err := self()
	if err != nil {
		return e.exitCode(err)
	}
	r := &doctorReport{OK: true}
	r.Policy = e.policyChecks(cfgFlag, exe)
	found := false
	for _, s := range setups {
		ar, ok := e.agentChecks(ctx, s, exe, cfgFlag)
		if !ok {
			continue
		}
		found = true
		r.Agents = append(r.Agents, *ar)
	}
	if !found {
		r.Agents = append(r.Agents, agentReport{Agent: "none", Checks: []check{{
			Name: "agents", Status: checkFail,
			Detail: "no agent settings found (~/.claude/settings.json, ~/.codex/hooks.json or config.toml, ~/.gemini/settings.json): nothing is guarded",
			Fix:    hooks.CommandLine([]string{exe, "install", "claude-code"}) + " (or codex, gemini-cli)",
		}}})
	}
	for _, c := range r.Policy {
		r.OK = r.OK && c.Status != checkFail
	}
	for _, a := range r.Agents {
		for _, c := range a.Checks {
			r.OK = r.OK && c.Status != checkFail
		}
	}
	if asJSON {
		data, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", data)
	} else {
		writeChecks(e, "", r.Policy)
		for _, a := range r.Agents {
			if a.Settings != "" {
				fmt.Fprintf(e.stdout, "%s (%s)\n", a.Agent, a.Settings)
			}
			writeChecks(e, "  ", a.Checks)
		}
	}
	if !r.OK {
		return exitError
	}
	return exitOK
}

func writeChecks(e *env, indent string, checks []check) {
	for _, c := range checks {
		st := c.Status
		if st == checkFail {
			st = "FAIL"
		}
		fmt.Fprintf(e.stdout, "%s%-4s  %s: %s\n", indent, st, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(e.stdout, "%s      fix: %s\n", indent, c.Fix)
		}
	}
}

// policyChecks reports the policy in force and the run-time layer.
func (e *env) policyChecks(cfgFlag, exe string) []check {
	var out []check
	path, err := e.configPath(cfgFlag)
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return []check{{Name: "policy", Status: checkFail, Detail: err.Error()}}
	}
	setupCmd := "agents-setup"
	if p := filepath.Join(filepath.Dir(exe), "agents-setup"); isExecutable(p) {
		setupCmd = hooks.CommandLine([]string{p})
	}
	f, err := config.Load(path)
	switch {
	case err != nil:
		out = append(out, check{Name: "policy", Status: checkFail,
			Detail: fmt.Sprintf("%v: the hook blocks every call and shell mode refuses every line", err),
			Fix:    "fix the file, or " + setupCmd + " --rollback"})
	case !f.Exists:
		out = append(out, check{Name: "policy", Status: checkWarn,
			Detail: path + " does not exist: no rules, every command is left to the agent (the built-in never-allow list still holds)",
			Fix:    setupCmd + " --config " + hooks.CommandLine([]string{path})})
	default:
		profile, mode := f.Shim.Profile, f.Shim.Mode
		if profile == "" {
			profile = "local-changes"
		}
		if mode == "" {
			mode = "ask"
		}
		runtime := f.Shim.Runtime
		if runtime == "" {
			runtime = "on"
		}
		out = append(out, check{Name: "policy", Status: checkOK,
			Detail: fmt.Sprintf("%s: profile %s, mode %s, %d rules, requireHook %v, runtime %s",
				path, profile, mode, len(f.Shim.Rules), f.Shim.RequireHook, runtime)})
	}
	known, ok, detail := runtimeAvailable()
	st := checkInfo
	switch {
	case err == nil && f.Shim.Runtime == "off":
		detail = "off (agentShim.runtime): the static check stands alone; the kernel: " + detail
	case known && ok:
		st = checkOK
	case known && !ok && err == nil && f.Shim.Runtime == "require":
		st = checkFail // shell mode refuses every line
	case known && !ok:
		st = checkWarn
	}
	out = append(out, check{Name: "run-time layer", Status: st, Detail: detail})
	return out
}

// geminiDisabled reports whether Gemini CLI settings (data, parsed as
// root) list the agent-shim hook in hooksConfig.disabled.
func geminiDisabled(data []byte, root *jval) bool {
	list := root.member("hooksConfig").member("disabled")
	if list == nil {
		return false
	}
	for _, el := range list.elems {
		var name string
		if json.Unmarshal(data[el.start:el.end], &name) == nil && name == "agent-shim" {
			return true
		}
	}
	return false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// agentChecks checks one agent, if its settings are there.
func (e *env) agentChecks(ctx context.Context, s *setup, exe, cfgFlag string) (*agentReport, bool) {
	path, err := s.settings(e.getenv)
	if err != nil {
		return nil, false
	}
	fix := hooks.CommandLine([]string{exe, "install", s.agent})
	ar := &agentReport{Agent: s.agent, Settings: path}
	add := func(c check) { ar.Checks = append(ar.Checks, c) }
	data, err := os.ReadFile(path)
	present := err == nil
	var tomlData []byte
	if s.agent == "codex" {
		tomlData, _ = os.ReadFile(codexConfig(path))
		present = present || tomlData != nil
	}
	mpath := managedSettings(s.agent, e.getenv)
	mdata, mroot, managed, merr := managedHook(s, mpath)
	if !present && !managed && merr == nil {
		return nil, false
	}
	var root *jval
	if data != nil {
		if root, err = s.parse(path, data); err != nil {
			add(check{Name: "settings", Status: checkFail, Detail: err.Error() + ": the agent may ignore the file, hooks and all", Fix: "fix the file"})
			return ar, true
		}
	}
	// The tier that guards the agent: with the hook in the managed tier,
	// the checks below are of that file.
	switch {
	case merr != nil:
		add(check{Name: "tier", Status: checkFail, Detail: merr.Error() + ": the agent may ignore the file, hooks and all", Fix: "fix the file"})
	case managed && s.agent == "gemini-cli" && geminiDisabled(data, root):
		// Gemini CLI merges hooksConfig.disabled across its files: a user
		// file can switch the system tier's hook off by its name.
		add(check{Name: "tier", Status: checkFail,
			Detail: "managed: " + mpath + ", but " + path + " lists agent-shim in hooksConfig.disabled, which Gemini CLI merges across its settings files: the hook is off",
			Fix:    "remove \"agent-shim\" from hooksConfig.disabled in " + path})
	case managed && s.agent == "gemini-cli":
		add(check{Name: "tier", Status: checkOK, Detail: "managed: " + mpath + ": a user-level settings file cannot remove the hook, except by listing it in hooksConfig.disabled (Gemini CLI merges that list; doctor checks it)"})
	case managed:
		add(check{Name: "tier", Status: checkOK, Detail: "managed: " + mpath + ": a user-level settings file cannot remove the hook"})
	default:
		add(check{Name: "tier", Status: checkInfo,
			Detail: "user: " + path + ": the agent (in bypass or yolo mode) or anything it runs can edit this file and remove the hook",
			Fix:    "as root: " + hooks.CommandLine([]string{exe, "install", s.agent, "--managed"})})
	}
	if managed && merr == nil {
		path, data, root = mpath, mdata, mroot
		ar.Settings = mpath
	}
	if s.agent == "claude-code" {
		add(e.claudeVersion(ctx))
	}
	// The hook, for each event.
	var cmds []string
	failsClosed := map[string]bool{} // a command whose failure blocks the call
	for _, ev := range s.events {
		cmd, matcher, h, ok := findOurs(data, root, ev, s.agent)
		if !ok && ev == "PostToolUse" {
			add(check{Name: "hook " + ev, Status: checkWarn,
				Detail: "not installed: the approvals given in Claude's prompt are not logged", Fix: fix})
			continue
		}
		if !ok {
			add(check{Name: "hook " + ev, Status: checkFail,
				Detail: "not installed: the agent runs every tool unchecked", Fix: fix})
			continue
		}
		onFailure := ""
		if v := h.member("onFailure"); v != nil {
			onFailure, _ = decoded(data, v).(string)
		}
		_, _, guarded, _ := ourHook(cmd, s.agent)
		switch {
		case !catchAll(matcher):
			add(check{Name: "hook " + ev, Status: checkFail,
				Detail: fmt.Sprintf("matcher %q: tools it does not match are not checked", matcher), Fix: fix})
		case s.agent == "claude-code" && ev == "PreToolUse" && onFailure != "block":
			add(check{Name: "hook " + ev, Status: checkFail,
				Detail: cmd + `: without "onFailure": "block" a hook that dies, hangs or is missing lets the call through`, Fix: fix})
		case s.wrapped && !guarded:
			add(check{Name: "hook " + ev, Status: checkFail,
				Detail: cmd + ": not guarded: " + s.agent + " lets the call through when this command crashes, hangs or is missing", Fix: fix})
		default:
			add(check{Name: "hook " + ev, Status: checkOK, Detail: cmd})
		}
		if !slices.Contains(cmds, cmd) {
			cmds = append(cmds, cmd)
		}
		if ev == s.events[0] {
			failsClosed[cmd] = guarded || s.agent == "claude-code" && onFailure == "block"
		}
	}
	for _, cmd := range cmds {
		shim, cfg, guarded, _ := ourHook(cmd, s.agent)
		outcome := "the agent goes ahead"
		if failsClosed[cmd] {
			outcome = "the agent blocks every call"
		}
		switch {
		case !filepath.IsAbs(shim):
			add(check{Name: "command", Status: checkFail,
				Detail: fmt.Sprintf("%s is found by PATH: where PATH lacks it the hook exits 127, and %s", shim, outcome), Fix: fix})
			continue
		case !isExecutable(shim):
			add(check{Name: "command", Status: checkFail,
				Detail: fmt.Sprintf("%s is not an executable file: the hook fails, and %s", shim, outcome), Fix: fix})
			continue
		}
		add(check{Name: "command", Status: checkOK, Detail: shim + " is executable"})
		if managed {
			if who := userWritable(shim); who != "" {
				add(check{Name: "command", Status: checkWarn,
					Detail: fmt.Sprintf("%s can be replaced without root (%s): the agent could replace the guard of the managed tier", shim, who),
					Fix:    "install agent-shim where only root writes (such as /usr/local/bin), then as root: that agent-shim install " + s.agent + " --managed"})
			}
		}
		if guarded {
			add(e.guardTest(ctx, s.agent, cmd, shim, cfg, fix))
		}
		add(e.selfTest(ctx, s.agent, cmd, fix))
	}
	// Switches that turn hooks off.
	switch s.agent {
	case "claude-code":
		for _, k := range []string{"disableAllHooks", "allowManagedHooksOnly"} {
			if v := root.member(k); v != nil && string(data[v.start:v.end]) == "true" {
				add(check{Name: k, Status: checkFail, Detail: k + " is true: Claude Code runs no hook of yours", Fix: "remove " + k + " from " + path})
			}
		}
	case "codex":
		upath, _ := s.settings(e.getenv)
		udata, _ := os.ReadFile(upath)
		for _, c := range e.codexChecks(upath, udata, tomlData, fix, managed) {
			add(c)
		}
	case "gemini-cli":
		if hc := root.member("hooksConfig"); hc != nil {
			if en := hc.member("enabled"); en != nil && string(data[en.start:en.end]) == "false" {
				add(check{Name: "hooksConfig", Status: checkFail, Detail: "hooksConfig.enabled is false: Gemini CLI runs no hooks", Fix: "set hooksConfig.enabled to true in " + path})
			}
			if dis := hc.member("disabled"); dis != nil && dis.kind == '[' {
				for _, el := range dis.elems {
					if s, ok := decoded(data, el).(string); ok && s == "agent-shim" {
						add(check{Name: "hooksConfig", Status: checkFail, Detail: `hooksConfig.disabled lists "agent-shim"`, Fix: "remove it from hooksConfig.disabled in " + path})
					}
				}
			}
		}
	}
	// Shell mode.
	if s.agent == "claude-code" {
		c := e.claudeShell(ctx, path, data, root, exe)
		if c.Status == checkInfo && e.requireHook(cfgFlag) {
			c.Status = checkWarn
			c.Detail += "; agentShim.requireHook has no effect while Claude Code's commands do not run through shell mode"
		}
		add(c)
	} else {
		add(check{Name: "shell mode", Status: checkInfo, Detail: "this agent has no setting for its shell; the hook is the integration"})
	}
	return ar, true
}

// managedHook reads agent's managed tier at path: its settings as a JSON
// document of the hooks.json shape (requirements.toml's hooks, for
// Codex), and whether a hook of ours is in it.
func managedHook(s *setup, path string) (data []byte, root *jval, ours bool, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false, nil
	}
	data = raw
	if s.agent == "codex" {
		d, err := parseTOML(path, raw)
		if err != nil {
			return nil, nil, false, err
		}
		h, _ := lookup(d.value, "hooks")
		if data, err = json.Marshal(map[string]any{"hooks": h}); err != nil {
			return nil, nil, false, err
		}
	}
	if root, err = s.parse(path, data); err != nil {
		return nil, nil, false, err
	}
	_, _, _, ours = findOurs(data, root, s.events[0], s.agent)
	return data, root, ours, nil
}

// codexChecks checks config.toml: the hooks feature, and the trust Codex
// needs before it runs our hook.
func (e *env) codexChecks(path string, data, tomlData []byte, fix string, managed bool) []check {
	cpath := codexConfig(path)
	d, err := parseTOML(cpath, tomlData)
	if err != nil {
		return []check{{Name: "config.toml", Status: checkFail, Detail: err.Error() + ": Codex does not start", Fix: "fix the file"}}
	}
	var out []check
	if off := codexHooksOff(d.value); off != "" {
		out = append(out, check{Name: "hooks feature", Status: checkFail,
			Detail: off + " in config.toml: Codex runs no hooks", Fix: fix})
	}
	if managed {
		return append(out, check{Name: "trust", Status: checkOK, Detail: "managed hooks need no trust"})
	}
	key, hash, ok := codexTrust(e.getenv, path, data)
	if !ok {
		return out
	}
	state, _ := lookup(d.value, "hooks", "state", key)
	st, _ := state.(map[string]any)
	trusted, _ := st["trusted_hash"].(string)
	switch {
	case st["enabled"] == false:
		out = append(out, check{Name: "trust", Status: checkFail,
			Detail: fmt.Sprintf("[hooks.state.%s] enabled = false in %s: Codex skips the hook", tomlQuote(key), cpath), Fix: "remove that line, then " + fix})
	case trusted == "":
		out = append(out, check{Name: "trust", Status: checkFail,
			Detail: fmt.Sprintf("the hook is not trusted (no [hooks.state.%s] trusted_hash in %s): Codex skips it without a word", tomlQuote(key), cpath), Fix: fix})
	case trusted != hash:
		out = append(out, check{Name: "trust", Status: checkFail,
			Detail: fmt.Sprintf("the hook changed since it was trusted (trusted_hash %s, the hook's is %s): Codex skips it", trusted, hash), Fix: fix})
	default:
		out = append(out, check{Name: "trust", Status: checkOK,
			Detail: fmt.Sprintf("trusted in %s: [hooks.state.%s] trusted_hash = %q", cpath, tomlQuote(key), hash)})
	}
	return out
}

// claudeOnFailure is the first Claude Code release known to honour a
// hook's "onFailure": "block": 2.1.332 was seen to block a missing,
// crashing, exiting-127 and hanging hook; 2.1.197 ignores the setting and
// lets the call through. (Which release between them brought it is not
// known here: the npm package carries no changelog, and the one report of
// 2.1.295 could not be checked.)
var claudeOnFailure = [3]int{2, 1, 332}

// claudeVersionOutput runs `claude --version`; a test seam.
var claudeVersionOutput = func(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, selfTestTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "claude", "--version").Output()
	return string(out), err
}

// claudeVersion checks that the claude on PATH honours onFailure.
func (e *env) claudeVersion(ctx context.Context) check {
	want := fmt.Sprintf("%d.%d.%d", claudeOnFailure[0], claudeOnFailure[1], claudeOnFailure[2])
	fix := "npm install -g @anthropic-ai/claude-code@latest (" + want + " or later)"
	out, err := claudeVersionOutput(ctx)
	if err != nil {
		return check{Name: "version", Status: checkWarn,
			Detail: fmt.Sprintf("`claude --version`: %v: not checked; a Claude Code older than %s ignores onFailure and lets the call through when the hook fails", err, want), Fix: fix}
	}
	m := regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`).FindStringSubmatch(out)
	if m == nil {
		return check{Name: "version", Status: checkFail,
			Detail: fmt.Sprintf("`claude --version` said %q: cannot tell whether it honours onFailure", strings.TrimSpace(out)), Fix: fix}
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	if slices.Compare(v[:], claudeOnFailure[:]) < 0 {
		return check{Name: "version", Status: checkFail,
			Detail: fmt.Sprintf("Claude Code %s ignores onFailure: a hook that fails lets the call through (%s or later blocks)", m[0], want), Fix: fix}
	}
	return check{Name: "version", Status: checkOK, Detail: fmt.Sprintf("Claude Code %s (`claude --version`) honours onFailure (%s or later)", m[0], want)}
}

// guardTest runs the installed guard around a shim that is not there,
// through sh -c as the agent does: it must answer exit 2 with text that is
// not JSON, which both Codex and Gemini CLI read as a block.
func (e *env) guardTest(ctx context.Context, agent, cmd, shim, cfg, fix string) check {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return check{Name: "guard", Status: checkFail, Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	inner := plainCommand(shim, agent, cfg)
	missing := plainCommand(filepath.Join(dir, "agent-shim"), agent, cfg)
	probe := strings.Replace(cmd, inner, missing, 1)
	ctx, cancel := context.WithTimeout(ctx, selfTestTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", probe)
	c.Dir = dir
	c.Stdin = strings.NewReader("{}")
	c.Env = []string{"PATH=/usr/bin:/bin"}
	var stdout bytes.Buffer
	c.Stdout = &stdout
	err = c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return check{Name: "guard", Status: checkFail, Detail: err.Error(), Fix: fix}
	}
	if code != exitBlock || stdout.Len() > 0 {
		return check{Name: "guard", Status: checkFail,
			Detail: fmt.Sprintf("with the shim missing the hook command exits %d (%q): the agent goes ahead", code, stdout.String()), Fix: fix}
	}
	return check{Name: "guard", Status: checkOK,
		Detail: "the hook command run with the shim missing exits 2, nothing on stdout: the agent blocks the call"}
}

// findOurs returns the first hook command of ours for event, with its
// group's matcher.
func findOurs(data []byte, root *jval, event, agent string) (cmd, matcher string, handler *jval, ok bool) {
	arr := root.member("hooks").member(event)
	if arr == nil || arr.kind != '[' {
		return "", "", nil, false
	}
	for _, g := range arr.elems {
		hs := g.member("hooks")
		if hs == nil || hs.kind != '[' {
			continue
		}
		for _, h := range hs.elems {
			cv := h.member("command")
			if cv == nil {
				continue
			}
			c, _ := decoded(data, cv).(string)
			if !isOurCommand(c, agent) {
				continue
			}
			m := ""
			if mv := g.member("matcher"); mv != nil {
				m, _ = decoded(data, mv).(string)
			}
			return c, m, h, true
		}
	}
	return "", "", nil, false
}

// catchAll reports whether a matcher matches every tool.
func catchAll(m string) bool { return m == "" || m == "*" || m == ".*" }

// selfTest runs the hook command as the agent would, through sh -c with
// the call on stdin and a PATH without agent-shim, for a call the policy
// must deny (`rm -rf /`, on the built-in never-allow list) and one it
// must answer without blocking (`git status`). Nothing runs either
// command: they are only data for the hook.
func (e *env) selfTest(ctx context.Context, agent, cmd, fix string) check {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return check{Name: "self-test", Status: checkFail, Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	ev, tool := "PreToolUse", "Bash"
	if agent == "gemini-cli" {
		ev, tool = "BeforeTool", "run_shell_command"
	}
	call := func(command string) (string, int, error) {
		in, _ := json.Marshal(map[string]any{
			"session_id": "agent-shim-doctor", "cwd": dir, "hook_event_name": ev,
			"tool_name": tool, "tool_input": map[string]string{"command": command},
		})
		ctx, cancel := context.WithTimeout(ctx, selfTestTimeout)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
		c.Dir = dir
		c.Stdin = bytes.NewReader(in)
		var out bytes.Buffer
		c.Stdout = &out
		c.Env = []string{"PATH=/usr/bin:/bin"}
		for _, k := range []string{"HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GEMINI_CONFIG_DIR", "GEMINI_HOME", "GEMINI_CLI_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
			if v := e.getenv(k); v != "" {
				c.Env = append(c.Env, k+"="+v)
			}
		}
		err := c.Run()
		if ctx.Err() != nil {
			return "", 0, fmt.Errorf("no answer in %v: the agent kills the hook and goes ahead", selfTestTimeout)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode(), nil
		}
		return out.String(), 0, err
	}
	start := time.Now()
	out, code, err := call("rm -rf /")
	if err != nil {
		return check{Name: "self-test", Status: checkFail, Detail: err.Error(), Fix: fix}
	}
	denied := code == exitBlock || code == 0 && denies(out)
	if !denied {
		return check{Name: "self-test", Status: checkFail,
			Detail: fmt.Sprintf("`rm -rf /` was not denied (exit %d, %q): the agent would run it", code, strings.TrimSpace(out)), Fix: fix}
	}
	_, code, err = call("git status")
	if err != nil {
		return check{Name: "self-test", Status: checkFail, Detail: err.Error(), Fix: fix}
	}
	if code != 0 {
		return check{Name: "self-test", Status: checkFail,
			Detail: fmt.Sprintf("`git status` was blocked (exit %d): the hook blocks every call; run it by hand to see why", code), Fix: fix}
	}
	return check{Name: "self-test", Status: checkOK,
		Detail: fmt.Sprintf("`rm -rf /` denied, `git status` answered (%d ms)", time.Since(start).Milliseconds())}
}

// denies reports whether a hook's stdout is a deny in any of the three
// protocols.
func denies(out string) bool {
	var v struct {
		Decision string `json:"decision"`
		HSO      struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	return json.Unmarshal([]byte(out), &v) == nil && (v.Decision == "deny" || v.HSO.PermissionDecision == "deny")
}

// codexHooksOff says which features flag of config.toml turns hooks off
// ("hooks" wins over its deprecated alias "codex_hooks"), or "".
func codexHooksOff(v map[string]any) string {
	if on, set := codexFeature(v, "hooks"); set {
		if !on {
			return "features.hooks = false"
		}
		return ""
	}
	if on, set := codexFeature(v, "codex_hooks"); set && !on {
		return "features.codex_hooks = false"
	}
	return ""
}

// requireHook reports whether the policy sets agentShim.requireHook.
func (e *env) requireHook(cfgFlag string) bool {
	path, err := e.configPath(cfgFlag)
	if err != nil {
		return false
	}
	f, err := config.Load(path)
	return err == nil && f.Shim.RequireHook
}

// claudeShell checks Claude Code's shell mode: env.CLAUDE_CODE_SHELL, and
// that it runs a command the way Claude Code calls its shell.
func (e *env) claudeShell(ctx context.Context, path string, data []byte, root *jval, exe string) check {
	fix := hooks.CommandLine([]string{exe, "install", "claude-code", "--shell"})
	v := root.member("env").member("CLAUDE_CODE_SHELL")
	if v == nil {
		return check{Name: "shell mode", Status: checkInfo, Detail: "off (env.CLAUDE_CODE_SHELL is not set)", Fix: fix}
	}
	sh, _ := decoded(data, v).(string)
	r, err := filepath.EvalSymlinks(sh)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return check{Name: "shell mode", Status: checkFail, Detail: fmt.Sprintf("env.CLAUDE_CODE_SHELL is %s, which does not exist", sh), Fix: fix}
		}
		return check{Name: "shell mode", Status: checkFail, Detail: err.Error(), Fix: fix}
	}
	if !sameFile(r, exe) && !strings.HasPrefix(filepath.Base(r), "agent-shim") {
		return check{Name: "shell mode", Status: checkInfo, Detail: fmt.Sprintf("off (env.CLAUDE_CODE_SHELL is %s, not agent-shim)", sh), Fix: fix}
	}
	if err := e.shellProbe(ctx, r); err != nil {
		return check{Name: "shell mode", Status: checkFail,
			Detail: fmt.Sprintf("env.CLAUDE_CODE_SHELL=%s refuses Claude Code's command wrapper around `true` (%v): every Bash call fails", sh, err),
			Fix:    "remove env.CLAUDE_CODE_SHELL from " + path + ", or upgrade agent-shim"}
	}
	return check{Name: "shell mode", Status: checkOK, Detail: "on: env.CLAUDE_CODE_SHELL=" + sh + "; Claude Code's command wrapper around `true` ran"}
}

// shellProbe runs `true` through shell as Claude Code runs every command
// (bash -c -l and its wrapper: shopt, unalias/unset of which, eval of
// the command, the working directory written to a file under TMPDIR),
// in a temporary directory with no terminal, and wants exit 0 and the
// file written. shell is the link's target, run by its own name (as
// `agent-shim -c` is shell mode under any name).
func (e *env) shellProbe(ctx context.Context, shell string) error {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cwdFile := filepath.Join(dir, "claude-d0c7-cwd")
	wrapper := `\builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && eval 'true' < /dev/null && pwd -P >| ` + cwdFile
	ctx, cancel := context.WithTimeout(ctx, selfTestTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, shell, "-c", "-l", wrapper)
	c.Dir = dir
	c.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir}
	for _, k := range []string{"HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GEMINI_CONFIG_DIR", "GEMINI_HOME", "CLAUDE_CONFIG_DIR"} {
		if v := e.getenv(k); v != "" {
			c.Env = append(c.Env, k+"="+v)
		}
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err = c.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("no end in %v", selfTestTimeout)
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Errorf("%v: %s", err, msg)
	}
	if _, err := os.Stat(cwdFile); err != nil {
		return errors.New("exit 0, but the working directory was not written")
	}
	return nil
}
