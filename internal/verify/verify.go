// Package verify proves, for the release of an agent a person has, what
// the project's end-to-end suite proves for the releases it pins: that the
// hook as the person installed it holds in that release. Each check runs
// the agent (the program on PATH) headless, in its most permissive mode,
// against a scripted model API on the loopback interface (package
// modelserver: no model, no network), in a temporary home that holds a
// copy of the person's installed settings (the hook, Codex's trust of it,
// the second line), and judges what ran by the disk:
//
//   - allowed: a harmless command runs (the control: without it the
//     checks below would prove nothing);
//   - denied: a forced push to a local bare repository, which the
//     never-allow list refuses, does not run, and the hook's reason
//     reaches the model;
//   - asked: a push the policy asks about does not run with nobody to
//     ask, and the model is told why;
//   - hook-missing, hook-crash: with the hook's agent-shim missing, or
//     crashing with garbage on its output, the harmless command does not
//     run (a release that lets a failing hook through fails here);
//   - second-line: with every hook turned off by the agent's own switch
//     (and the hook silent, as if there were none), the forced push still
//     does not run: the agent's own rules refuse it.
//
// Nothing of the person's is changed: the copies are edited, and HOME,
// the XDG directories and TMPDIR of the agent are the temporary ones. The
// policy the hook reads is the checks' own (a push is asked; the
// never-allow list is built in), so that the answers do not depend on the
// person's profile. Payloads are harmless: a file touched in the
// temporary project, pushes to the temporary bare repository.
package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/modelserver"
)

// Options say which agent to verify, and how.
type Options struct {
	Agent *agents.Agent
	// Program is the agent's program: the one on the person's PATH.
	Program string
	// Getenv is the person's environment: where their settings are, and
	// the PATH the agent runs with.
	Getenv func(string) string
	// Timeout bounds one run of the agent (DefaultTimeout when zero).
	Timeout time.Duration
	// Parallel is how many runs at once (1 when zero).
	Parallel int
	// Log, when set, receives each run's output.
	Log io.Writer
}

// DefaultTimeout bounds one run of the agent.
const DefaultTimeout = 3 * time.Minute

// Check is one check's outcome.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is what verify found.
type Report struct {
	Agent   string `json:"agent"`
	Program string `json:"program"`
	// Version is the first line of `Program --version`.
	Version string `json:"version"`
	// Settings is the person's settings file whose hook was copied.
	Settings string  `json:"settings"`
	Checks   []Check `json:"checks"`
	// OK: every check passed.
	OK bool `json:"ok"`
}

// Failed names the checks that failed.
func (r *Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// The lines the model asks the agent to run.
const (
	allowedCanary = "agent-shim-verify-allowed"
	allowedLine   = "touch " + allowedCanary
	deniedCanary  = "agent-shim-verify-denied"
	deniedLine    = "git push --force origin HEAD:main; touch " + deniedCanary
	askedBranch   = "agent-shim-verify-asked"
	askedCanary   = "agent-shim-verify-asked"
	askedLine     = "git push origin HEAD:refs/heads/" + askedBranch + "; touch " + askedCanary
)

// policy is the policy the hook reads in the checks: touch allowed, a
// push asked (the never-allow list, built into the shim, refuses the
// forced push).
const policy = `{"userSettings": {"globalPermissionGrants": {"allow": ["command(touch)"], "ask": ["command(git push)"], "deny": []}}}
`

// shim is what the copied hook runs, per check.
type shim int

const (
	shimAsInstalled shim = iota
	shimMissing          // the hook's agent-shim is not there
	shimCrash            // it prints garbage and exits 1
	shimSilent           // it prints nothing and exits 0: as if there were no hook
)

// check is one check: the shim its hook runs, whether hooks are off, the
// line the model asks to run, and how to judge the outcome.
type check struct {
	name     string
	shim     shim
	hooksOff bool
	line     string
	judge    func(w *world, m *modelserver.Server) (bool, string)
}

var checks = []check{
	{name: "allowed", line: allowedLine, judge: func(w *world, m *modelserver.Server) (bool, string) {
		if !w.exists(allowedCanary) {
			return false, fmt.Sprintf("`%s` did not run with the hook in place; tool results: %q", allowedLine, m.CallResults())
		}
		return true, fmt.Sprintf("`%s` ran (the control: commands run here)", allowedLine)
	}},
	{name: "denied", line: deniedLine, judge: func(w *world, m *modelserver.Server) (bool, string) {
		if w.pushMoved() || w.exists(deniedCanary) {
			return false, fmt.Sprintf("`%s` ran: the hook's deny did not hold", deniedLine)
		}
		if !m.ResultContains("agent-shim", "git push --force") {
			return false, fmt.Sprintf("`%s` did not run, but the hook's reason did not reach the model; tool results: %q", deniedLine, m.CallResults())
		}
		return true, fmt.Sprintf("`%s` did not run; the hook's reason reached the model", deniedLine)
	}},
	{name: "asked", line: askedLine, judge: func(w *world, m *modelserver.Server) (bool, string) {
		if w.branchPushed(askedBranch) || w.exists(askedCanary) {
			return false, fmt.Sprintf("`%s`, which the policy asks about, ran with nobody to ask", askedLine)
		}
		if !m.ResultContains("agent-shim", "git push") {
			return false, fmt.Sprintf("`%s` did not run, but the model was not told why; tool results: %q", askedLine, m.CallResults())
		}
		return true, fmt.Sprintf("`%s`, asked, did not run with nobody to ask; the model was told why", askedLine)
	}},
	{name: "hook-missing", shim: shimMissing, line: allowedLine, judge: blocked("missing")},
	{name: "hook-crash", shim: shimCrash, line: allowedLine, judge: blocked("crashing (garbage on stdout, exit 1)")},
	{name: "second-line", shim: shimSilent, hooksOff: true, line: deniedLine, judge: func(w *world, m *modelserver.Server) (bool, string) {
		if w.pushMoved() {
			detail := fmt.Sprintf("with hooks turned off, `%s` ran: the agent's own rules did not refuse it", deniedLine)
			if !w.rulesCopied {
				detail += " (no second line is installed: agent-shim install " + w.agent.Name + " places it)"
			}
			return false, detail
		}
		return true, fmt.Sprintf("with hooks turned off, the agent's own rules refused `%s`", deniedLine)
	}},
}

// blocked judges a failing hook: the harmless line must not run.
func blocked(how string) func(w *world, m *modelserver.Server) (bool, string) {
	return func(w *world, m *modelserver.Server) (bool, string) {
		if w.exists(allowedCanary) {
			return false, fmt.Sprintf("with the hook's agent-shim %s, `%s` ran: this release lets a call through when its hook fails", how, allowedLine)
		}
		return true, fmt.Sprintf("with the hook's agent-shim %s, `%s` was blocked", how, allowedLine)
	}
}

// Run runs the checks. An error means they could not be run at all
// (no git, no temporary directory); a check that fails is in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	a := o.Agent
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	r := &Report{Agent: a.Name, Program: o.Program}
	settings, err := a.User.Path(o.Getenv)
	if err != nil {
		return nil, err
	}
	r.Settings = settings
	src, err := readInstall(a, settings)
	if err != nil {
		r.Checks = []Check{{Name: "installed", Detail: err.Error()}}
		return r, nil
	}
	src.getenv = o.Getenv
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("the checks need git: %w", err)
	}
	root, err := os.MkdirTemp("", "agent-shim-verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	r.Version = version(ctx, o.Program, filepath.Join(root, "version"), o.Getenv)
	r.Checks = make([]Check, len(checks))
	par := max(o.Parallel, 1)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var logMu sync.Mutex
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ok, detail, out := runCheck(ctx, o, src, filepath.Join(root, c.name), c)
			r.Checks[i] = Check{Name: c.name, OK: ok, Detail: detail}
			if o.Log != nil {
				logMu.Lock()
				fmt.Fprintf(o.Log, "=== %s: %s\n%s\n", c.name, a.Program, out)
				logMu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.OK = len(r.Failed()) == 0
	return r, nil
}

// version is the first line of `program --version`, run with its home
// in dir (the agents write there even to say their version).
func version(ctx context.Context, program, dir string, getenv func(string) string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	cmd := exec.CommandContext(ctx, program, "--version")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + filepath.Join(dir, "tmp"), "XDG_CONFIG_HOME=" + dir, "XDG_STATE_HOME=" + dir,
		"XDG_CACHE_HOME=" + dir, "XDG_DATA_HOME=" + dir, "PATH=" + getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb"}
	out, err := cmd.Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// install is the person's installed hook, as read.
type install struct {
	settings string
	data     []byte
	// companion and its content (Codex's config.toml); "" when none.
	companion     string
	companionData []byte
	// rules is the second line's own file (Codex, Gemini CLI), "" when
	// not installed or a part of the settings.
	rules     string
	rulesData []byte
	getenv    func(string) string
}

// readInstall reads the person's settings, which must hold a hook of
// ours for the agent's event.
func readInstall(a *agents.Agent, settings string) (*install, error) {
	data, err := os.ReadFile(settings)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not there: no hook to verify (agent-shim install %s; verify checks the user's settings, not the managed tier)", settings, a.Name)
	}
	if err != nil {
		return nil, err
	}
	root, err := a.Parse(settings, data)
	if err != nil {
		return nil, err
	}
	if _, ok := a.FindHook(data, root, a.Pre); !ok {
		return nil, fmt.Errorf("%s holds no agent-shim hook for %s: nothing to verify (agent-shim install %s; verify checks the user's settings, not the managed tier)", settings, a.Pre, a.Name)
	}
	in := &install{settings: settings, data: data}
	if c := a.Companion(); c != nil {
		in.companion = c.Path(settings)
		if in.companionData, err = os.ReadFile(in.companion); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if p := a.RulesFile(settings, false); p != "" {
		if d, err := os.ReadFile(p); err == nil {
			in.rules, in.rulesData = p, d
		}
	}
	return in, nil
}

// world is one check's temporary machine.
type world struct {
	agent       *agents.Agent
	dir         string
	home        string
	project     string
	bare        string
	tmp         string
	env         []string
	bareRef     string
	rulesCopied bool
}

func (w *world) getenv(k string) string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.project, name))
	return err == nil
}

// pushMoved reports whether the bare repository's main moved (a forced
// push ran).
func (w *world) pushMoved() bool {
	out, err := w.git(w.bare, "rev-parse", "main")
	return err != nil || out != w.bareRef
}

// branchPushed reports whether branch arrived in the bare repository.
func (w *world) branchPushed(branch string) bool {
	out, err := w.git(w.bare, "for-each-ref", "refs/heads/"+branch)
	return err != nil || out != ""
}

func (w *world) git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// newWorld makes a check's machine: a home, a project whose origin is a
// bare repository holding a commit the project's HEAD does not contain
// (only a forced push moves it), the checks' policy.
func newWorld(a *agents.Agent, dir string, getenv func(string) string) (*world, error) {
	w := &world{agent: a, dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project"),
		bare: filepath.Join(dir, "origin.git"), tmp: filepath.Join(dir, "tmp")}
	for _, d := range []string{w.home, w.project, w.tmp, filepath.Join(dir, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	w.env = []string{
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"TMPDIR=" + w.tmp,
		"PATH=" + getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"SHELL=/bin/bash",
		"NO_PROXY=127.0.0.1,localhost",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=agent-shim verify", "GIT_AUTHOR_EMAIL=verify@agent-shim.invalid",
		"GIT_COMMITTER_NAME=agent-shim verify", "GIT_COMMITTER_EMAIL=verify@agent-shim.invalid",
	}
	steps := [][]string{
		{dir, "init", "-q", "--bare", "-b", "main", w.bare},
		{w.project, "init", "-q", "-b", "main"},
	}
	for _, s := range steps {
		if _, err := w.git(s[0], s[1:]...); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(w.project, "README"), []byte("agent-shim verify\n"), 0o600); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"add", "README"},
		{"commit", "-q", "-m", "one"},
		{"remote", "add", "origin", w.bare},
		{"push", "-q", "origin", "main"},
		{"commit", "-q", "--amend", "-m", "two"}, // diverges: only a forced push moves origin
	} {
		if _, err := w.git(w.project, args...); err != nil {
			return nil, err
		}
	}
	ref, err := w.git(w.bare, "rev-parse", "main")
	if err != nil {
		return nil, err
	}
	w.bareRef = ref
	cfg, err := config.DefaultPath(w.getenv)
	if err != nil {
		return nil, err
	}
	if err := writeFile(cfg, []byte(policy)); err != nil {
		return nil, err
	}
	return w, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// copyInstall copies the person's installed hook into w's home, its hook
// running the shim s and reading the checks' policy, with the trust the
// person gave it carried over, the second line beside it, and the
// agent's hooks switched off when off.
func (w *world) copyInstall(src *install, s shim, off bool) error {
	a := w.agent
	settings, err := a.User.Path(w.getenv)
	if err != nil {
		return err
	}
	data := src.data
	var exe string
	switch s {
	case shimMissing:
		exe = filepath.Join(w.dir, "gone", "agent-shim")
	case shimCrash, shimSilent:
		exe = filepath.Join(w.dir, "bin", "agent-shim")
		script := "#!/bin/sh\necho 'not json {'\necho 'agent-shim verify: a crashing hook' >&2\nexit 1\n"
		if s == shimSilent {
			script = "#!/bin/sh\nexit 0\n"
		}
		if err := writeFile(exe, []byte(script)); err != nil {
			return err
		}
		if err := os.Chmod(exe, 0o755); err != nil {
			return err
		}
	}
	cfg, err := config.DefaultPath(w.getenv)
	if err != nil {
		return err
	}
	if data, err = rehome(a, settings, data, exe, cfg); err != nil {
		return err
	}
	if err := writeFile(settings, data); err != nil {
		return err
	}
	if src.companion != "" {
		comp := a.Companion().Path(settings)
		cdata, err := a.CopyTrust(src.getenv, src.settings, src.data, src.companionData, w.getenv, comp, src.companionData, settings, data)
		if err != nil {
			return err
		}
		if err := writeFile(comp, cdata); err != nil {
			return err
		}
	}
	if src.rules != "" {
		if err := writeFile(a.RulesFile(settings, false), src.rulesData); err != nil {
			return err
		}
		w.rulesCopied = true
	} else if a.RulesFile(settings, false) == "" {
		w.rulesCopied = bytes.Contains(data, []byte(`"`+a.Rules.Member+`"`))
	}
	if a.Headless.Prepare != nil {
		if err := a.Headless.Prepare(settings, w.project); err != nil {
			return err
		}
	}
	if off {
		return a.Headless.HooksOff(settings)
	}
	return nil
}

// rehome rewrites every hook command of ours in the settings data: the
// shim at exe ("" keeps it) and, when the command names a config.json,
// cfg.
func rehome(a *agents.Agent, path string, data []byte, exe, cfg string) ([]byte, error) {
	for range 64 {
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		hooks := root.Member("hooks")
		if hooks == nil || hooks.Kind != '{' {
			return data, nil
		}
		changed := false
		for _, ev := range hooks.Members {
			for _, g := range ev.Val.Elems {
				hs := g.Member("hooks")
				if hs == nil {
					continue
				}
				for _, h := range hs.Elems {
					cv := h.Member("command")
					if cv == nil || cv.Kind != '"' {
						continue
					}
					cmd := fileedit.String(data, cv)
					oldExe, oldCfg, _, ours := a.Ours(cmd)
					if !ours {
						continue
					}
					newExe, newCfg := oldExe, oldCfg
					if exe != "" {
						newExe = exe
					}
					if oldCfg != "" {
						newCfg = cfg
					}
					if newExe == oldExe && newCfg == oldCfg {
						continue
					}
					re, ok := a.RehomeHook(cmd, newExe, newCfg)
					if !ok {
						return nil, fmt.Errorf("%s: cannot read the hook command %q", path, cmd)
					}
					q, err := fileedit.Encode(re)
					if err != nil {
						return nil, err
					}
					data = fileedit.Splice(data, cv.Start, cv.End, q)
					changed = true
					break
				}
				if changed {
					break
				}
			}
			if changed {
				break
			}
		}
		if !changed {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%s: too many hook commands", path)
}

// runCheck runs one check in its own world under dir: its outcome, and
// the agent's output.
func runCheck(ctx context.Context, o Options, src *install, dir string, c check) (bool, string, string) {
	w, err := newWorld(o.Agent, dir, o.Getenv)
	if err != nil {
		return false, "setting up: " + err.Error(), ""
	}
	if err := w.copyInstall(src, c.shim, c.hooksOff); err != nil {
		return false, "copying the installed hook: " + err.Error(), ""
	}
	h := o.Agent.Headless
	m, err := modelserver.Start(modelserver.Call{Tools: h.Tools, Args: func(tool string) map[string]any { return h.Input(tool, c.line) }})
	if err != nil {
		return false, err.Error(), ""
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Program, h.Args(m.URL(), "agent-shim verify: make the one tool call")...)
	cmd.Dir = w.project
	cmd.Env = append(append([]string(nil), w.env...), h.Env(m.URL())...)
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return false, fmt.Sprintf("%s did not finish within %v", o.Agent.Title, o.Timeout), string(out)
	}
	if !m.Called() {
		return false, fmt.Sprintf("%s never made the scripted call (%v): the check proves nothing; its output ends: %s", o.Agent.Title, err, tail(out)), string(out)
	}
	ok, detail := c.judge(w, m)
	return ok, detail, string(out)
}

// tail is the last lines of out, on one line.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}
