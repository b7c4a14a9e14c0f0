// Package doctor checks that every agent found on this machine is
// guarded, and guarded so that it fails closed: the hook is installed for
// the events the shim needs, in a settings file the agent reads as one
// document, runs a program by an absolute path that exists, and answers a
// harmless self-test as expected (`rm -rf /` denied, `git status`
// answered), run the way the agent runs it (sh -c, stdin JSON) with a
// PATH that lacks agent-shim. It reports the policy in force and whether
// shell mode and the run-time layer are there. A check that fails names
// the command that fixes it.
package doctor

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

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/install"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// SelfTestTimeout bounds each run of a hook, a guard, a shell or an
// agent's --version.
const SelfTestTimeout = 10 * time.Second

// exitBlock is the hooks' blocking exit status.
const exitBlock = 2

// Options say what doctor checks with.
type Options struct {
	// Exe is this shim's absolute path.
	Exe string
	// Config is the config.json in force, or the error finding it.
	Config    string
	ConfigErr error
	Getenv    func(string) string
	// Runtime says whether the run-time layer works here; nil: not
	// known.
	Runtime func() (ok bool, why string)
	// Version runs `program --version`; nil runs it from PATH.
	Version func(ctx context.Context, program string) (string, error)
}

// Report is what doctor found.
type Report struct {
	OK     bool           `json:"ok"`
	Policy []agents.Check `json:"policy"`
	Agents []AgentReport  `json:"agents"`
}

// AgentReport is one agent's checks.
type AgentReport struct {
	Agent    string         `json:"agent"`
	Settings string         `json:"settings"`
	Checks   []agents.Check `json:"checks"`
}

// Run checks the policy and every agent whose settings are there.
func Run(ctx context.Context, o Options) *Report {
	r := &Report{OK: true}
	r.Policy = o.policyChecks()
	for _, a := range agents.All {
		if ar, ok := o.agentChecks(ctx, a); ok {
			r.Agents = append(r.Agents, *ar)
		}
	}
	if len(r.Agents) == 0 {
		r.Agents = append(r.Agents, AgentReport{Agent: "none", Checks: []agents.Check{{
			Name: "agents", Status: agents.Fail,
			Detail: "no agent settings found (" + settingsList() + "): nothing is guarded",
			Fix:    hooks.CommandLine([]string{o.Exe, "install", agents.All[0].Name}) + " (or " + strings.Join(names(agents.All[1:]), ", ") + ")",
		}}})
	}
	for _, c := range r.Policy {
		r.OK = r.OK && c.Status != agents.Fail
	}
	for _, a := range r.Agents {
		for _, c := range a.Checks {
			r.OK = r.OK && c.Status != agents.Fail
		}
	}
	return r
}

// settingsList names the agents' user settings under ~.
func settingsList() string {
	tilde := func(k string) string { return map[string]string{"HOME": "~"}[k] }
	var l []string
	for _, a := range agents.All {
		p, _ := a.User.Path(tilde)
		if c := a.Companion(); c != nil {
			p += " or " + filepath.Base(c.Path(p))
		}
		l = append(l, p)
	}
	return strings.Join(l, ", ")
}

func names(as []*agents.Agent) []string {
	var n []string
	for _, a := range as {
		n = append(n, a.Name)
	}
	return n
}

// policyChecks reports the policy in force and the run-time layer.
func (o *Options) policyChecks() []agents.Check {
	var out []agents.Check
	path, err := o.Config, o.ConfigErr
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return []agents.Check{{Name: "policy", Status: agents.Fail, Detail: err.Error()}}
	}
	setupCmd := "agents-setup"
	if p := filepath.Join(filepath.Dir(o.Exe), "agents-setup"); isExecutable(p) {
		setupCmd = hooks.CommandLine([]string{p})
	}
	f, err := config.Load(path)
	switch {
	case err != nil:
		out = append(out, agents.Check{Name: "policy", Status: agents.Fail,
			Detail: fmt.Sprintf("%v: the hook blocks every call and shell mode refuses every line", err),
			Fix:    "fix the file, or " + setupCmd + " --rollback"})
	case !f.Exists:
		out = append(out, agents.Check{Name: "policy", Status: agents.Warn,
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
		out = append(out, agents.Check{Name: "policy", Status: agents.OK,
			Detail: fmt.Sprintf("%s: profile %s, mode %s, %d rules, requireHook %v, runtime %s",
				path, profile, mode, len(f.Shim.Rules), f.Shim.RequireHook, runtime)})
	}
	st, detail := agents.Info, "not known"
	if o.Runtime != nil {
		ok, why := o.Runtime()
		detail = "available: every exec under shell mode and agent-shim run is decided, writes confined"
		st = agents.OK
		switch {
		case !ok && err == nil && f.Shim.Runtime == "require":
			st, detail = agents.Fail, "not available: "+why+"; the static check stands alone" // shell mode refuses every line
		case !ok:
			st, detail = agents.Warn, "not available: "+why+"; the static check stands alone"
		}
	}
	if err == nil && f.Shim.Runtime == "off" {
		st, detail = agents.Info, "off (agentShim.runtime): the static check stands alone; the kernel: "+detail
	}
	out = append(out, agents.Check{Name: "run-time layer", Status: st, Detail: detail})
	return append(out, o.telemetryCheck(path))
}

// telemetryCheck checks the export of decisions as doctor reads its
// settings (config.json's agentShim.telemetry, the OTEL_ variables of
// doctor's own environment): a setting the exporter refuses, or an
// exporter that is not beside agent-shim, silently stops the export, and
// fails here.
func (o *Options) telemetryCheck(configPath string) agents.Check {
	fail := func(detail, fix string) agents.Check {
		return agents.Check{Name: "telemetry", Status: agents.Fail,
			Detail: detail + ": no decision reaches the collector (the local log keeps them)", Fix: fix}
	}
	t, err := config.ReadTelemetry(configPath)
	if err != nil {
		return fail(err.Error(), "fix agentShim.telemetry in "+configPath)
	}
	s := telemetry.Resolve(o.Getenv, t)
	if !s.Enabled {
		return agents.Check{Name: "telemetry", Status: agents.Info, Detail: "off: decisions stay in the local log"}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := o.Getenv(k); v != "" && !config.HTTPURL(v) {
			return fail(fmt.Sprintf("%s=%q is not an http:// or https:// URL", k, v), "set "+k+" to the collector's base URL")
		}
	}
	if s.Protocol != "http/protobuf" && s.Protocol != "grpc" {
		return fail(fmt.Sprintf("protocol %q is not supported (http/protobuf or grpc)", s.Protocol), "set OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_LOGS_PROTOCOL) to http/protobuf or grpc")
	}
	if v := strings.TrimSpace(o.Getenv("OTEL_BLRP_SCHEDULE_DELAY")); v != "" {
		ms, err := strconv.Atoi(v)
		if d := time.Duration(ms) * time.Millisecond; err != nil || d < config.MinTelemetryInterval || d > config.MaxTelemetryInterval {
			return agents.Check{Name: "telemetry", Status: agents.Fail,
				Detail: fmt.Sprintf("OTEL_BLRP_SCHEDULE_DELAY=%q is not milliseconds from %d to %d: ignored, the export starts every %v",
					v, config.MinTelemetryInterval.Milliseconds(), config.MaxTelemetryInterval.Milliseconds(), s.Interval),
				Fix: "set OTEL_BLRP_SCHEDULE_DELAY to milliseconds from 1000 to 3600000, or unset it"}
		}
	}
	if o.Exe != "" {
		if prog := filepath.Join(filepath.Dir(o.Exe), telemetry.ExporterName); !isExecutable(prog) {
			return fail(prog+" is not there: hook calls cannot start the export", "install it beside agent-shim: go install -tags urfave_cli_no_docs ./cmd/...")
		}
	}
	to := s.Endpoint
	if to == "" {
		to = "the endpoint of the OTEL_EXPORTER_OTLP_ variables"
	}
	return agents.Check{Name: "telemetry", Status: agents.OK, Detail: fmt.Sprintf("on: to %s (%s), at most every %v", to, s.Protocol, s.Interval)}
}

// requireHook reports whether the policy sets agentShim.requireHook.
func (o *Options) requireHook() bool {
	if o.ConfigErr != nil {
		return false
	}
	f, err := config.Load(o.Config)
	return err == nil && f.Shim.RequireHook
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// agentChecks checks one agent, if its settings are there.
func (o *Options) agentChecks(ctx context.Context, a *agents.Agent) (*AgentReport, bool) {
	path, err := a.User.Path(o.Getenv)
	if err != nil {
		return nil, false
	}
	fix := hooks.CommandLine([]string{o.Exe, "install", a.Name})
	ar := &AgentReport{Agent: a.Name, Settings: path}
	add := func(c ...agents.Check) { ar.Checks = append(ar.Checks, c...) }
	data, err := os.ReadFile(path)
	present := err == nil
	var compData []byte
	if c := a.Companion(); c != nil {
		compData, _ = os.ReadFile(c.Path(path))
		present = present || compData != nil
	}
	mpath, _ := a.Managed.Path(o.Getenv)
	mdata, mroot, managed, merr := managedHook(a, mpath)
	if !present && !managed && merr == nil {
		return nil, false
	}
	var root *fileedit.Value
	if data != nil {
		if root, err = a.Parse(path, data); errors.Is(err, fileedit.ErrDuplicateKey) {
			add(agents.Check{Name: "settings", Status: agents.Fail, Detail: err.Error(), Fix: "merge the two into one, then: " + fix})
			return ar, true
		} else if err != nil {
			add(agents.Check{Name: "settings", Status: agents.Fail, Detail: err.Error() + ": the agent may ignore the file, hooks and all", Fix: "fix the file"})
			return ar, true
		}
	}
	// The tier that guards the agent: with the hook in the managed tier,
	// the checks below are of that file.
	why, dfix := a.Managed.Disabled(path, data)
	switch {
	case merr != nil:
		add(agents.Check{Name: "tier", Status: agents.Fail, Detail: merr.Error() + ": the agent may ignore the file, hooks and all", Fix: "fix the file"})
	case managed && why != "":
		add(agents.Check{Name: "tier", Status: agents.Fail, Detail: "managed: " + mpath + ", but " + path + " " + why, Fix: dfix})
	case managed:
		detail := a.Managed.OKDetail
		if detail == "" {
			detail = "a user-level settings file cannot remove the hook"
		}
		add(agents.Check{Name: "tier", Status: agents.OK, Detail: "managed: " + mpath + ": " + detail})
	default:
		add(agents.Check{Name: "tier", Status: agents.Info,
			Detail: "user: " + path + ": the agent (in bypass or yolo mode) or anything it runs can edit this file and remove the hook",
			Fix:    "as root: " + hooks.CommandLine([]string{o.Exe, "install", a.Name, "--managed"})})
	}
	found := &agents.Found{Path: path, Data: data, Root: root, UserPath: path, UserData: data, Managed: managed, Fix: fix, Getenv: o.Getenv}
	if managed && merr == nil {
		found.Path, found.Data, found.Root = mpath, mdata, mroot
		ar.Settings = mpath
	}
	out, verr := o.agentVersion(ctx, a)
	if !a.Floor.IsZero() {
		add(o.versionCheck(a, out, verr))
	}
	add(provenCheck(o.Exe, a, out, verr))
	add(o.hookChecks(ctx, a, found)...)
	add(a.Off(found)...)
	if c := a.Companion(); c != nil {
		add(c.Checks(found, compData)...)
	}
	add(o.secondLineCheck(a, found))
	// Shell mode.
	if a.ShellEnv != "" {
		c := o.shellCheck(ctx, a, found)
		if c.Status == agents.Info && o.requireHook() {
			c.Status = agents.Warn
			c.Detail += "; agentShim.requireHook has no effect while " + a.Title + "'s commands do not run through shell mode"
		}
		add(c)
	} else {
		add(agents.Check{Name: "shell mode", Status: agents.Info, Detail: "this agent has no setting for its shell; the hook is the integration"})
	}
	return ar, true
}

// hookChecks checks the hook of each event in f, and each command of
// ours: there, guarded as the agent needs, and answering.
func (o *Options) hookChecks(ctx context.Context, a *agents.Agent, f *agents.Found) []agents.Check {
	var out []agents.Check
	var cmds []string
	failsClosed := map[string]bool{} // a command whose failure blocks the call
	for _, ev := range a.Events() {
		h, ok := a.FindHook(f.Data, f.Root, ev)
		switch {
		case !ok && ev == a.Post:
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.Warn,
				Detail: "not installed: the approvals given in " + a.Title + "'s prompt are not logged", Fix: f.Fix})
			continue
		case !ok:
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.Fail,
				Detail: "not installed: the agent runs every tool unchecked", Fix: f.Fix})
			continue
		}
		onFailure := ""
		if v := h.Handler.Member("onFailure"); v != nil {
			onFailure = fileedit.String(f.Data, v)
		}
		_, _, guarded, _ := a.Ours(h.Command)
		switch {
		case !agents.CatchAll(h.Matcher):
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.Fail,
				Detail: fmt.Sprintf("matcher %q: tools it does not match are not checked", h.Matcher), Fix: f.Fix})
		case a.OnFailure && ev == a.Pre && onFailure != "block":
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.Fail,
				Detail: h.Command + `: without "onFailure": "block" a hook that dies, hangs or is missing lets the call through`, Fix: f.Fix})
		case a.FailsOpen && !guarded:
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.Fail,
				Detail: h.Command + ": not guarded: " + a.Name + " lets the call through when this command crashes, hangs or is missing", Fix: f.Fix})
		default:
			out = append(out, agents.Check{Name: "hook " + ev, Status: agents.OK, Detail: h.Command})
		}
		if !slices.Contains(cmds, h.Command) {
			cmds = append(cmds, h.Command)
		}
		if ev == a.Pre {
			failsClosed[h.Command] = guarded || a.OnFailure && onFailure == "block"
		}
	}
	for _, cmd := range cmds {
		shim, cfg, guarded, _ := a.Ours(cmd)
		outcome := "the agent goes ahead"
		if failsClosed[cmd] {
			outcome = "the agent blocks every call"
		}
		switch {
		case !filepath.IsAbs(shim):
			out = append(out, agents.Check{Name: "command", Status: agents.Fail,
				Detail: fmt.Sprintf("%s is found by PATH: where PATH lacks it the hook exits 127, and %s", shim, outcome), Fix: f.Fix})
			continue
		case !isExecutable(shim):
			out = append(out, agents.Check{Name: "command", Status: agents.Fail,
				Detail: fmt.Sprintf("%s is not an executable file: the hook fails, and %s", shim, outcome), Fix: f.Fix})
			continue
		}
		out = append(out, agents.Check{Name: "command", Status: agents.OK, Detail: shim + " is executable"})
		if f.Managed {
			if who := install.UserWritable(shim); who != "" {
				out = append(out, agents.Check{Name: "command", Status: agents.Warn,
					Detail: fmt.Sprintf("%s can be replaced without root (%s): the agent could replace the guard of the managed tier", shim, who),
					Fix:    "install agent-shim where only root writes (such as /usr/local/bin), then as root: that agent-shim install " + a.Name + " --managed"})
			}
		}
		if guarded {
			out = append(out, o.guardTest(ctx, a, cmd, shim, cfg, f.Fix))
		}
		out = append(out, o.selfTest(ctx, a, cmd, f.Fix))
	}
	return out
}

// managedHook reads an agent's managed tier at path: its settings as a
// JSON document of the hooks.json shape, and whether a hook of ours is
// in it.
func managedHook(a *agents.Agent, path string) (data []byte, root *fileedit.Value, ours bool, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false, nil
	}
	data = raw
	if a.Managed.TOML() {
		if data, err = a.Managed.HooksJSON(path, raw); err != nil {
			return nil, nil, false, err
		}
	}
	if root, err = a.Parse(path, data); err != nil {
		return nil, nil, false, err
	}
	_, ours = a.FindHook(data, root, a.Pre)
	return data, root, ours, nil
}

// agentVersion runs `program --version` for the agent on PATH.
func (o *Options) agentVersion(ctx context.Context, a *agents.Agent) (string, error) {
	run := o.Version
	if run == nil {
		run = func(ctx context.Context, program string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, SelfTestTimeout)
			defer cancel()
			out, err := exec.CommandContext(ctx, program, "--version").Output()
			return string(out), err
		}
	}
	return run(ctx, a.Program)
}

// versionCheck checks that the agent on PATH (which said out to
// --version, or failed with err) is at or past its floor.
func (o *Options) versionCheck(a *agents.Agent, out string, err error) agents.Check {
	want := a.Floor.String()
	fix := a.Upgrade + " (" + want + " or later)"
	q := "`" + a.Program + " --version`"
	if err != nil {
		return agents.Check{Name: "version", Status: agents.Warn,
			Detail: fmt.Sprintf("%s: %v: not checked; a %s older than %s ignores %s and lets the call through when the hook fails", q, err, a.Title, want, a.FloorWhat), Fix: fix}
	}
	m := regexp.MustCompile(`\b\d+\.\d+\.\d+\b`).FindString(out)
	v, ok := agents.ParseVersion(m)
	if !ok {
		return agents.Check{Name: "version", Status: agents.Fail,
			Detail: fmt.Sprintf("%s said %q: cannot tell whether it honours %s", q, strings.TrimSpace(out), a.FloorWhat), Fix: fix}
	}
	if v.Less(a.Floor) {
		return agents.Check{Name: "version", Status: agents.Fail,
			Detail: fmt.Sprintf("%s %s ignores %s: a hook that fails lets the call through (%s or later blocks)", a.Title, m, a.FloorWhat, want), Fix: fix}
	}
	return agents.Check{Name: "version", Status: agents.OK, Detail: fmt.Sprintf("%s %s (%s) honours %s (%s or later)", a.Title, m, q, a.FloorWhat, want)}
}

// guardTest runs the installed guard around a shim that is not there,
// through sh -c as the agent does: it must answer exit 2 with text that is
// not JSON, which both Codex and Gemini CLI read as a block.
func (o *Options) guardTest(ctx context.Context, a *agents.Agent, cmd, shim, cfg, fix string) agents.Check {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return agents.Check{Name: "guard", Status: agents.Fail, Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	inner := a.PlainCommand(shim, cfg)
	missing := a.PlainCommand(filepath.Join(dir, "agent-shim"), cfg)
	probe := strings.Replace(cmd, inner, missing, 1)
	ctx, cancel := context.WithTimeout(ctx, SelfTestTimeout)
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
		return agents.Check{Name: "guard", Status: agents.Fail, Detail: err.Error(), Fix: fix}
	}
	if code != exitBlock || stdout.Len() > 0 {
		return agents.Check{Name: "guard", Status: agents.Fail,
			Detail: fmt.Sprintf("with the shim missing the hook command exits %d (%q): the agent goes ahead", code, stdout.String()), Fix: fix}
	}
	return agents.Check{Name: "guard", Status: agents.OK,
		Detail: "the hook command run with the shim missing exits 2, nothing on stdout: the agent blocks the call"}
}

// passEnv are the variables a self-test passes on: where the agents
// keep their files and, through GEMINI_CONFIG_DIR and GEMINI_HOME, where
// config.json is. The probe's state is its own (state: XDG_STATE_HOME,
// and no export): its decisions, tickets and session files are not the
// person's, and stay out of their decision log and their collector. It
// is how doctor runs the probe that keeps it apart, not a mark in the
// call that a line could set too.
func passEnv(getenv func(string) string, state string, extra ...string) []string {
	env := []string{"PATH=/usr/bin:/bin", "XDG_STATE_HOME=" + state, "OTEL_SDK_DISABLED=true"}
	keys := []string{"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GEMINI_CONFIG_DIR", "GEMINI_HOME"}
	for _, a := range agents.All {
		keys = append(keys, a.Env...)
	}
	for _, k := range keys {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// selfTest runs the hook command as the agent would, through sh -c with
// the call on stdin and a PATH without agent-shim, for a call the policy
// must deny (`rm -rf /`, on the built-in never-allow list) and one it
// must answer without blocking (`git status`). Nothing runs either
// command: they are only data for the hook.
func (o *Options) selfTest(ctx context.Context, a *agents.Agent, cmd, fix string) agents.Check {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return agents.Check{Name: "self-test", Status: agents.Fail, Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	state, err := os.MkdirTemp("", "agent-shim-doctor-state-")
	if err != nil {
		return agents.Check{Name: "self-test", Status: agents.Fail, Detail: err.Error()}
	}
	defer os.RemoveAll(state)
	call := func(command string) (string, int, error) {
		in, _ := json.Marshal(map[string]any{
			"session_id": "agent-shim-doctor", "cwd": dir, "hook_event_name": a.Pre,
			"tool_name": a.ShellTool, "tool_input": map[string]string{"command": command},
		})
		ctx, cancel := context.WithTimeout(ctx, SelfTestTimeout)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
		c.Dir = dir
		c.Stdin = bytes.NewReader(in)
		var out bytes.Buffer
		c.Stdout = &out
		c.Env = passEnv(o.Getenv, state)
		err := c.Run()
		if ctx.Err() != nil {
			return "", 0, fmt.Errorf("no answer in %v: the agent kills the hook and goes ahead", SelfTestTimeout)
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
		return agents.Check{Name: "self-test", Status: agents.Fail, Detail: err.Error(), Fix: fix}
	}
	if !(code == exitBlock || code == 0 && denies(out)) {
		return agents.Check{Name: "self-test", Status: agents.Fail,
			Detail: fmt.Sprintf("`rm -rf /` was not denied (exit %d, %q): the agent would run it", code, strings.TrimSpace(out)), Fix: fix}
	}
	_, code, err = call("git status")
	if err != nil {
		return agents.Check{Name: "self-test", Status: agents.Fail, Detail: err.Error(), Fix: fix}
	}
	if code != 0 {
		return agents.Check{Name: "self-test", Status: agents.Fail,
			Detail: fmt.Sprintf("`git status` was blocked (exit %d): the hook blocks every call; run it by hand to see why", code), Fix: fix}
	}
	return agents.Check{Name: "self-test", Status: agents.OK,
		Detail: fmt.Sprintf("`rm -rf /` denied, `git status` answered (%d ms)", time.Since(start).Milliseconds())}
}

// denies reports whether a hook's stdout is a deny in any of the
// agents' protocols.
func denies(out string) bool {
	var v struct {
		Decision string `json:"decision"`
		HSO      struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	return json.Unmarshal([]byte(out), &v) == nil && (v.Decision == "deny" || v.HSO.PermissionDecision == "deny")
}

// shellCheck checks the agent's shell mode: env.<ShellEnv> in its
// settings, and that it runs a command the way the agent calls its
// shell.
func (o *Options) shellCheck(ctx context.Context, a *agents.Agent, f *agents.Found) agents.Check {
	fix := hooks.CommandLine([]string{o.Exe, "install", a.Name, "--shell"})
	v := f.Root.Member("env").Member(a.ShellEnv)
	if v == nil {
		return agents.Check{Name: "shell mode", Status: agents.Info, Detail: "off (env." + a.ShellEnv + " is not set)", Fix: fix}
	}
	sh := fileedit.String(f.Data, v)
	r, err := filepath.EvalSymlinks(sh)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return agents.Check{Name: "shell mode", Status: agents.Fail, Detail: fmt.Sprintf("env.%s is %s, which does not exist", a.ShellEnv, sh), Fix: fix}
		}
		return agents.Check{Name: "shell mode", Status: agents.Fail, Detail: err.Error(), Fix: fix}
	}
	if !sameFile(r, o.Exe) && !strings.HasPrefix(filepath.Base(r), "agent-shim") {
		return agents.Check{Name: "shell mode", Status: agents.Info, Detail: fmt.Sprintf("off (env.%s is %s, not agent-shim)", a.ShellEnv, sh), Fix: fix}
	}
	if err := o.shellProbe(ctx, a, r); err != nil {
		return agents.Check{Name: "shell mode", Status: agents.Fail,
			Detail: fmt.Sprintf("env.%s=%s refuses %s's command wrapper around `true` (%v): every %s call fails", a.ShellEnv, sh, a.Title, err, a.ShellTool),
			Fix:    "remove env." + a.ShellEnv + " from " + f.Path + ", or upgrade agent-shim"}
	}
	return agents.Check{Name: "shell mode", Status: agents.OK, Detail: "on: env." + a.ShellEnv + "=" + sh + "; " + a.Title + "'s command wrapper around `true` ran"}
}

// sameFile reports whether a and b are one file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// shellProbe runs `true` through shell as the agent runs every command
// (a.ShellProbe), in a temporary directory with no terminal, and wants
// exit 0 and the file the call writes written. shell is the link's
// target, run by its own name (as `agent-shim -c` is shell mode under
// any name).
func (o *Options) shellProbe(ctx context.Context, a *agents.Agent, shell string) error {
	dir, err := os.MkdirTemp("", "agent-shim-doctor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	state, err := os.MkdirTemp("", "agent-shim-doctor-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	args, writes, _ := a.ShellProbe(dir)
	ctx, cancel := context.WithTimeout(ctx, SelfTestTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, shell, args...)
	c.Dir = dir
	c.Env = passEnv(o.Getenv, state, "TMPDIR="+dir)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err = c.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("no end in %v", SelfTestTimeout)
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Errorf("%v: %s", err, msg)
	}
	if _, err := os.Stat(writes); err != nil {
		return errors.New("exit 0, but the working directory was not written")
	}
	return nil
}

// provenCheck says whether the agent on PATH (which said out to
// --version, or failed with err) is the release the project's end-to-end
// suite proves; for any other, it suggests agent-shim verify, which
// proves the hook as installed in the release the person has.
func provenCheck(exe string, a *agents.Agent, out string, err error) agents.Check {
	fix := hooks.CommandLine([]string{exe, "verify", a.Name})
	if err != nil {
		return agents.Check{Name: "proven", Status: agents.Info,
			Detail: fmt.Sprintf("`%s --version`: %v: not checked whether the project proves this release (%s)", a.Program, err, a.Proven), Fix: fix}
	}
	m := regexp.MustCompile(`\b\d+\.\d+\.\d+\b`).FindString(out)
	if v, ok := agents.ParseVersion(m); ok && v == a.Proven {
		return agents.Check{Name: "proven", Status: agents.OK,
			Detail: fmt.Sprintf("%s %s is the release the project's end-to-end suite proves", a.Title, m)}
	}
	return agents.Check{Name: "proven", Status: agents.Warn,
		Detail: fmt.Sprintf("%s %q is not a release the project has proven (it proves %s): prove the hook in yours", a.Title, strings.TrimSpace(out), a.Proven), Fix: fix}
}

// secondLineCheck checks the second line beside the hook of f: there, and
// as compiled from the policy in force; it gives the coverage measured.
func (o *Options) secondLineCheck(a *agents.Agent, f *agents.Found) agents.Check {
	fix := f.Fix
	if f.Managed {
		fix = "as root: " + hooks.CommandLine([]string{o.Exe, "install", a.Name, "--managed"})
	}
	cov := "coverage not measured"
	if i := slices.IndexFunc(secondline.Figures, func(x secondline.Figure) bool { return x.Agent == a.Name }); i >= 0 {
		x := secondline.Figures[i]
		cov = fmt.Sprintf("compiled from the adversarial-2 policy it refuses %d of the %d plain DENY rows of the project's corpora and no row the policy allows (%s)", x.PlainDenied, x.PlainDeny, x.How)
	}
	if o.ConfigErr != nil {
		return agents.Check{Name: "second line", Status: agents.Warn, Detail: "not checked: " + o.ConfigErr.Error() + "; " + cov}
	}
	p, err := secondline.Load(o.Config, gate.NeverAllow())
	if err != nil {
		return agents.Check{Name: "second line", Status: agents.Warn, Detail: "not checked: " + err.Error() + "; " + cov}
	}
	out := a.Rules.Compile(p)
	if file := a.RulesFile(f.Path, f.Managed); file != "" {
		data, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return agents.Check{Name: "second line", Status: agents.Warn,
				Detail: file + " is not there: with the hook off, " + a.Title + "'s own rules refuse nothing of the never-allow list; " + cov, Fix: fix}
		case err != nil:
			return agents.Check{Name: "second line", Status: agents.Warn, Detail: err.Error(), Fix: fix}
		case !bytes.Equal(data, out.Text):
			return agents.Check{Name: "second line", Status: agents.Warn,
				Detail: file + " is not what the policy in force compiles to (the policy changed since install, or the file was edited); " + cov, Fix: fix}
		}
		return agents.Check{Name: "second line", Status: agents.OK,
			Detail: fmt.Sprintf("%s: %d rules from %d of the policy's; %s", file, out.Patterns, out.Compiled, cov)}
	}
	var doc map[string]map[string][]string
	if err := json.Unmarshal(out.Text, &doc); err != nil {
		return agents.Check{Name: "second line", Status: agents.Warn, Detail: err.Error()}
	}
	var have map[string]map[string]any
	if f.Data != nil {
		json.Unmarshal(f.Data, &have)
	}
	missing, total := 0, 0
	for list, entries := range doc[a.Rules.Member] {
		present := map[string]bool{}
		if xs, ok := have[a.Rules.Member][list].([]any); ok {
			for _, x := range xs {
				if s, ok := x.(string); ok {
					present[s] = true
				}
			}
		}
		for _, e := range entries {
			total++
			if !present[e] {
				missing++
			}
		}
	}
	if missing > 0 {
		return agents.Check{Name: "second line", Status: agents.Warn,
			Detail: fmt.Sprintf("%d of the %d rules the policy in force compiles to are not in %s's %s (not installed, or the policy changed since); %s", missing, total, f.Path, a.Rules.Member, cov), Fix: fix}
	}
	return agents.Check{Name: "second line", Status: agents.OK,
		Detail: fmt.Sprintf("%s's %s: %d rules from %d of the policy's; %s", f.Path, a.Rules.Member, out.Patterns, out.Compiled, cov)}
}
