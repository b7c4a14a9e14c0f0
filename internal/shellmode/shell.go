package shellmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/internal/supervisor"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// ExitDenied is shell mode's status for a line it does not run.
const ExitDenied = 126

// Shell is one shell-mode process: its streams and environment, and the
// front end's test seams (each nil: the real one).
type Shell struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// OpenTTY opens the terminal prompts go to; Self is this program
	// (os.Executable), which the real shell must not be.
	OpenTTY func() (io.ReadWriteCloser, error)
	Self    func() (string, error)
	// Log is the decision log (nil: none); Now its clock and TicketNow
	// the clock of hook tickets.
	Log       decisionlog.Logger
	Now       func() time.Time
	TicketNow func() time.Time
	// Hint says how to approve a request for good, for config.json.
	Hint func(config string, req *gate.Request) string
	// Export sends the decision log on (telemetry) after the line.
	Export func()
	// Layer sets the run-time layer's seams of a run.
	Layer func(*runlayer.Run)

	// dialect is the shell whose reading decided the line ("zsh"; ""
	// for bash's), for the decision log.
	dialect string
	// layered: the line's verdict left to the run-time layer what the
	// static reading could not see into; it must not run without it.
	layered bool
	// Available reports whether the run-time layer can run here
	// (supervisor.Available); nil is the real one.
	Available func() (bool, string)
}

// layerActive reports whether a line runs under the run-time layer:
// agentShim.runtime (mode) is not "off" and the kernel has it.
func (sh *Shell) layerActive(mode string) bool {
	if mode == "off" {
		return false
	}
	avail := sh.Available
	if avail == nil {
		avail = supervisor.Available
	}
	ok, _ := avail()
	return ok
}

// Main stands in for the agent's shell: it decides the -c command line
// of args and runs the real shell with the same arguments (runlayer), or
// refuses with ExitDenied. An agent's wrapper around the command is not
// decided: the command inside it is (gate.DecideLine), and the hook's
// ticket is matched on it. Every refusal is written to the decision log.
func (sh *Shell) Main(ctx context.Context, args []string) int {
	if sh.Export != nil {
		// After the line or its refusal, as the hook does. A line whose
		// shell is exec'd leaves it to the next call.
		defer sh.Export()
	}
	cmd, err := Command(args)
	if err != nil {
		return sh.refuseLogged(nil, strings.Join(args[1:], " "), err)
	}
	var prompter gate.Prompter
	if tty, err := sh.OpenTTY(); err == nil {
		defer tty.Close()
		prompter = gate.NewTerminalPrompter(tty, tty)
	}
	c, err := sessions.Open(ctx, sessions.Options{Getenv: sh.Getenv, Warn: sh.Stderr})
	if err != nil {
		return sh.refuseLogged(nil, cmd, err)
	}
	// The real shell first: its dialect is how the line is read.
	host := &Host{Path: c.Config, Gate: c.Gate}
	path, err := sh.realShell(host)
	if err != nil {
		c.Close()
		return sh.refuseLogged(c, cmd, err)
	}
	// With the run-time layer on and available here, the line is read as
	// it will run under it: what the static reading cannot see into is
	// checked as it runs (gate.Options.Layer).
	if f, err := host.Settings(); err == nil && sh.layerActive(f.Shim.Runtime) {
		c.Gate.SetLayer(true)
	}
	// The gate reads the line as the real shell does, the command inside
	// an agent's wrapper of it.
	line, dialect, d := c.Gate.DecideLine(cmd, path, sh.Getenv)
	sh.dialect = dialect
	// Hook tickets: an ask ticket approves the line once;
	// agentShim.requireHook refuses a line no hook has seen.
	seen, ticketed, err := sh.ticketGate(host, line)
	if err != nil {
		c.Close()
		return sh.refuseLogged(c, line, err)
	}
	// A ticket for a command inside line approves nothing: line is
	// decided whole all the same.
	ticketed = ticketed && seen == line
	wd, _ := os.Getwd()
	var ap *gate.Approval
	if ticketed {
		// The person approved it at the agent's prompt; a deny rule
		// still refuses it (no approval of a Deny).
		if ap = d.Approve(gate.AnswerOnce, gate.ByAgent, wd, time.Now()); ap == nil {
			c.Close()
			return sh.refuseLogged(c, line, fmt.Errorf("%w: %s", gate.ErrDenied, d.Reason))
		}
	} else {
		ap, err = sh.Settle(ctx, c, prompter, line, d)
	}
	c.Close()
	if err != nil {
		return Refuse(sh.Stderr, err) // Settle logged the decision
	}
	if ap == nil && d.Approved {
		// Approved for the session or always, earlier.
		ap = d.Approve(gate.AnswerSession, gate.ByTerminal, wd, time.Now())
	}
	sh.layered = d.Layered && ap == nil
	return sh.Program(ctx, c, host, "shell", path, Argv(path, args), ap)
}

// Settle settles shell mode's decision d of cmd and, when it needs a
// person, asks on the terminal (p; nil: nobody to ask). A nil error means
// run it; the approval is what the person approved just now (nil when
// nobody was asked). The decision goes to the decision log, with the
// answer.
func (sh *Shell) Settle(ctx context.Context, c *sessions.Call, p gate.Prompter, cmd string, d gate.Decision) (*gate.Approval, error) {
	defer sh.logShell(c, cmd, d, &p)()
	switch d.Verdict {
	case gate.Allow:
		return nil, nil
	case gate.Deny:
		return nil, fmt.Errorf("%w: %s", gate.ErrDenied, d.Reason)
	}
	if p == nil {
		return nil, &runlayer.Hinted{Err: fmt.Errorf("%w: %s, and there is no terminal to ask on", gate.ErrNeedsApproval, d.Reason),
			Hint: sh.Hint(c.Config, d.Request) + ", or run the agent from a terminal to be asked"}
	}
	a, err := p.AskApproval(ctx, *d.Request)
	if err != nil {
		return nil, fmt.Errorf("asking for approval: %w", err)
	}
	if a == gate.AnswerNo {
		return nil, fmt.Errorf("%w: the person said no (%s)", gate.ErrDenied, d.Reason)
	}
	if err := c.Gate.Apply(*d.Request, a); err != nil {
		return nil, err
	}
	if err := c.Session.Remember(ctx, *d.Request, a); err != nil {
		// The call was approved; later calls will be asked again.
		fmt.Fprintf(sh.Stderr, "agent-shim: warning: %v\n", err)
	}
	wd, _ := os.Getwd()
	return d.Approve(a, gate.ByTerminal, wd, time.Now()), nil
}

// refuseLogged refuses as Refuse does and writes the refusal of line to
// the decision log: one that no decision of the gate made (a bad argv or
// config, no hook ticket under requireHook, a deny found through a
// ticket).
func (sh *Shell) refuseLogged(c *sessions.Call, line string, err error) int {
	var p gate.Prompter
	sh.logShell(c, line, gate.Decision{Verdict: gate.Deny, Reason: oneLine(err.Error())}, &p)()
	return Refuse(sh.Stderr, err)
}

// Refuse reports on w why the command does not run and returns
// ExitDenied.
func Refuse(w io.Writer, err error) int {
	if errors.Is(err, gate.ErrDenied) || errors.Is(err, gate.ErrNeedsApproval) {
		fmt.Fprintf(w, "agent-shim: %s\n", oneLine(err.Error()))
	} else {
		fmt.Fprintf(w, "agent-shim: error: %s\n", oneLine(err.Error()))
	}
	var h *runlayer.Hinted
	if errors.As(err, &h) && h.Hint != "" {
		fmt.Fprintf(w, "agent-shim: hint: %s\n", oneLine(h.Hint))
	}
	return ExitDenied
}

func oneLine(s string) string { return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s) }

// Host is config.json's settings for the shim's host (shell, runtime,
// requireHook): as the gate loaded them (config.json or its compact
// copy), else read (config.LoadSettings) once when first needed.
type Host struct {
	Path string // config.json
	Gate *gate.Gate

	f    *config.File
	err  error
	read bool
}

// Settings returns the host's settings.
func (h *Host) Settings() (*config.File, error) {
	if h.read {
		return h.f, h.err
	}
	h.read = true
	if h.Gate != nil {
		if s, ok := h.Gate.Host(); ok {
			h.f = &config.File{Path: h.Path}
			h.f.Shim.Shell, h.f.Shim.Runtime, h.f.Shim.RequireHook, h.f.Shim.Secrets = s.Shell, s.Runtime, s.RequireHook, s.Secrets
			return h.f, nil
		}
	}
	h.f, h.err = config.LoadSettings(h.Path) // the settings only: not the grants and rules
	return h.f, h.err
}

// realShell returns the shell to exec: AGENT_SHIM_SHELL, else
// agentShim.shell, else /bin/bash (Find).
func (sh *Shell) realShell(h *Host) (string, error) {
	name := sh.Getenv("AGENT_SHIM_SHELL")
	from := "AGENT_SHIM_SHELL"
	if name == "" {
		f, err := h.Settings()
		if err != nil {
			return "", err
		}
		name, from = f.Shim.Shell, h.Path+": agentShim.shell"
	}
	return Find(name, from, sh.Self)
}

// errUnseen is shell mode's refusal under agentShim.requireHook.
var errUnseen = errors.New("no hook call has seen this command (agentShim.requireHook): the agent's hook died, timed out or was bypassed")

// ticketGate is shell mode's use of hook tickets, before it decides cmd.
// It returns the line the ticket was for (the command itself when the
// line is an agent's wrapper of a command the hook saw) and whether an
// ask ticket approves it. Under agentShim.requireHook a line without a
// ticket is refused.
func (sh *Shell) ticketGate(h *Host, cmd string) (line string, approved bool, err error) {
	f, err := h.Settings()
	if err != nil {
		return "", false, err
	}
	requireHook := f.Shim.RequireHook
	dir, err := sessions.StateDir(sh.Getenv)
	var t *tickets.Ticket
	inner := cmd
	if err == nil {
		t, inner, err = tickets.Store{Dir: dir, Now: sh.TicketNow}.TakeLine(cmd, sh.Getenv)
	}
	if err != nil {
		if requireHook {
			return "", false, err
		}
		fmt.Fprintf(sh.Stderr, "agent-shim: warning: %v\n", err)
		return cmd, false, nil
	}
	if t == nil {
		if requireHook {
			return "", false, &runlayer.Hinted{Err: errUnseen, Hint: "check the hook with 'agent-shim doctor'"}
		}
		return cmd, false, nil
	}
	return inner, t.Kind == tickets.Ask, nil
}

// Program runs an allowed program (package runlayer): under the
// supervisor when the run-time layer is on and available, else as
// agentShim.runtime says. agent names the front end in the decision log
// ("shell", "run"); ap is what a person approved of the line that starts
// it (nil: nothing). It returns the program's status, ExitDenied when it
// cannot run it.
func (sh *Shell) Program(ctx context.Context, c *sessions.Call, h *Host, agent, path string, argv []string, ap *gate.Approval) int {
	f, err := h.Settings()
	if err != nil {
		return Refuse(sh.Stderr, err)
	}
	r := sh.Run(c, agent, ap)
	r.Config, r.Mode, r.Secrets, r.Layered = h.Path, f.Shim.Runtime, f.Shim.Secrets, sh.layered
	if agent == "run" && sh.layerActive(f.Shim.Runtime) {
		// The agent's hook reads its lines as they run under the layer
		// when it finds this process among its ancestors.
		r.Record = func() func() {
			dir, err := sessions.StateDir(sh.Getenv)
			if err == nil {
				var done func()
				if r.TreeLog, done, err = (tickets.Store{Dir: dir}).RecordRun(); err == nil {
					return func() { r.TakeTreeLog(); done() }
				}
			}
			fmt.Fprintf(sh.Stderr, "agent-shim: warning: %v (the agent's hook will ask about what the layer would check)\n", err)
			return func() {}
		}
	}
	code, err := r.Program(ctx, path, argv)
	if err != nil {
		return Refuse(sh.Stderr, err)
	}
	return code
}

// Run is the run of a program for c, with the process's streams, the
// decision log and the seams.
func (sh *Shell) Run(c *sessions.Call, agent string, ap *gate.Approval) *runlayer.Run {
	r := &runlayer.Run{
		Agent: agent, Approval: ap, Log: sh.Log, Now: sh.Now, Hint: sh.Hint,
		Stdin: sh.Stdin, Stdout: sh.Stdout, Stderr: sh.Stderr, Getenv: sh.Getenv,
	}
	if c != nil {
		r.Gate = c.Gate
		if c.Session != nil {
			r.Session = strings.TrimSuffix(filepath.Base(c.Session.Path), ".json")
			r.Marker = strings.TrimSuffix(c.Session.Path, ".json") + ".runtime-off"
		}
	}
	if sh.Layer != nil {
		sh.Layer(r)
	}
	return r
}

// logShell records shell mode's decision of cmd. It wraps *p so that the
// person's answer is seen, and returns the function that writes the entry,
// for Settle to defer:
//
//	defer sh.logShell(c, cmd, d, &p)()
func (sh *Shell) logShell(c *sessions.Call, cmd string, d gate.Decision, p *gate.Prompter) func() {
	if sh.Log == nil {
		return func() {}
	}
	rec := &answerRecorder{}
	if *p != nil {
		rec.p = *p
		*p = rec
	}
	cwd, _ := os.Getwd()
	session := ""
	if c != nil && c.Session != nil {
		session = strings.TrimSuffix(filepath.Base(c.Session.Path), ".json")
	}
	return func() {
		ent := d.Record(decisionlog.Entry{
			Time: sh.now(), Agent: "shell", Session: session, Layer: decisionlog.LayerShell,
			Cwd: cwd, Tool: "Bash", Command: cmd, Shell: sh.dialect,
		})
		if d.Verdict == gate.Ask || d.Verdict == gate.Default {
			ent.Answer = rec.answer()
		}
		sh.Log.Log(ent)
	}
}

func (sh *Shell) now() time.Time {
	if sh.Now == nil {
		return time.Now()
	}
	return sh.Now()
}

// answerRecorder is a Prompter that remembers the answer it passed on.
type answerRecorder struct {
	p gate.Prompter

	mu  sync.Mutex
	got string
}

func (r *answerRecorder) AskApproval(ctx context.Context, req gate.Request) (gate.Answer, error) {
	a, err := r.p.AskApproval(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.got = decisionlog.AnswerNone
	} else {
		r.got = a.String()
	}
	return a, err
}

func (r *answerRecorder) answer() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == "" {
		return decisionlog.AnswerNone // nobody could be asked
	}
	return r.got
}
