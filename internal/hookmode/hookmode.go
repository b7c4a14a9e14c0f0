// Package hookmode answers an agent's hook call: its pre-tool-use call
// read strictly (gate.ParseCall), decided by the gate opened for the
// agent's session (sessions.Open), logged, a ticket left for shell mode
// (package tickets), and answered in the agent's protocol (package
// agents); its post-tool-use call, for an agent that asks its person,
// records their approval of a call the hook answered ask. Whatever goes
// wrong is an error, which the command answers "blocked": never allow.
package hookmode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/internal/supervisor"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// MaxInput bounds a hook's input: tool inputs carry whole files.
const MaxInput = 64 << 20

// Options say whose call it is and where its records go.
type Options struct {
	Agent *agents.Agent
	// Config is the config.json to decide with ("" for the agent's).
	Config string
	Getenv func(string) string
	// Log is the decision log; nil logs nothing.
	Log *decisionlog.Writer
	// Tickets is where tickets for shell mode go.
	Tickets tickets.Store
	// Warn gets the warnings: what went wrong beside the decision.
	Warn io.Writer
	// Now is the clock of the log; nil is time.Now.
	Now func() time.Time
	// Self is this program (os.Executable) and Available whether the
	// run-time layer can run here (supervisor.Available); nil: the real
	// ones. See underLayer.
	Self      func() (string, error)
	Available func() (bool, string)
	// Procs are the agent's processes, which agent-shim approve refuses
	// to run below (approvals.Procs); nil: the real ones.
	Procs func() []approvals.Proc
}

// Call reads one hook call from in and writes the agent's answer to out.
// An error is no answer: the caller blocks the call.
func Call(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	ag := o.Agent
	data, err := io.ReadAll(io.LimitReader(in, MaxInput+1))
	if err != nil {
		return fmt.Errorf("reading the hook input: %w", err)
	}
	if len(data) > MaxInput {
		return fmt.Errorf("hook input longer than %d bytes", MaxInput)
	}
	c, err := gate.ParseCall(data)
	if err != nil {
		return fmt.Errorf("%s hook input: %v", ag.Name, err)
	}
	switch {
	case c.Event == ag.Pre:
	case c.Event == ag.Post && ag.Post != "":
		// The call ran already: a record that cannot be made (a held
		// lock, a full disk) is a warning, never a block.
		if err := recordApproval(ctx, o, c); err != nil {
			fmt.Fprintf(o.Warn, "agent-shim: warning: recording the approval: %v\n", err)
		}
		return nil
	case c.Event == "":
		return fmt.Errorf("%s hook input has no hook_event_name", ag.Name)
	default:
		return fmt.Errorf("%s hook: unknown event %q (this hook answers %s)", ag.Name, c.Event, ag.Pre)
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("%s hook input: %v", ag.Name, err)
	}
	s, err := sessions.Open(ctx, sessions.Options{Config: o.Config, Cwd: c.Cwd, Dir: c.Dir(), Session: c.SessionID,
		Getenv: o.Getenv, Warn: o.Warn})
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := s.Gate.DecideCall(c)
	if err != nil {
		return err
	}
	if (d.Verdict == gate.Ask || d.Verdict == gate.Default) && gate.IsCommandTool(c.ToolName) && o.underLayer(s.Gate) {
		// The line will run under the run-time layer: what the static
		// reading cannot see into is checked as it runs.
		s.Gate.SetLayer(true)
		if d, err = s.Gate.DecideCall(c); err != nil {
			return err
		}
	}
	// Where the agent puts no ask to a person (Codex, Gemini CLI, Claude
	// Code in bypass mode), a person approves the call from a terminal of
	// their own: the agent's retry of it then runs, once.
	hint := ""
	if d.Verdict == gate.Ask && !ag.Asks || d.NobodyToAsk {
		var approved bool
		if d, approved, hint = o.oneShot(c, d); approved {
			hint = ""
		}
	}
	if o.Log != nil {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		// The agent asks its person itself, so no answer is known here
		// (PostToolUse records an approval in the approval log).
		o.Log.Log(d.Record(decisionlog.Entry{Time: now(), Agent: ag.Name, Session: sessions.ID(c.SessionID, o.Getenv),
			Layer: decisionlog.LayerHook, Cwd: c.Cwd, Tool: c.ToolName, ToolUseID: c.ToolUseID, Command: c.Key()}))
	}
	// Leave a ticket for shell mode, unless the agent's shell is known
	// not to be shell mode (only it reads them; a file per call is most
	// of a Default call's cost). Without one shell mode only asks more,
	// so a failure is a warning.
	if (d.Verdict != gate.Allow || tickets.WantSeen(s.Gate)) && o.mayBeShellMode() {
		if err := o.Tickets.Record(ag, c, d); err != nil {
			fmt.Fprintf(o.Warn, "agent-shim: warning: %v\n", err)
		}
	}
	if d.Verdict == gate.Ask || d.Verdict == gate.Default {
		if forGood := ApproveHint(s.Config, d.Request); hint == "" {
			hint = forGood
		} else if forGood != "" {
			hint += "; or, " + forGood
		}
	}
	if d.NobodyToAsk && hint != "" {
		d.Reason += "; " + hint // a deny shows its reason only
	}
	if ag.Asks && ag.Post != "" && d.Verdict == gate.Ask {
		// The agent asks the person; its post-tool-use call for this
		// call means they approved.
		a := sessions.AskedCall{ID: c.ToolUseID, Tool: c.ToolName, Key: d.Request.Key, Call: callKey(c), Time: time.Now().UTC()}
		if err := s.Session.Ask(ctx, a); err != nil {
			fmt.Fprintf(o.Warn, "agent-shim: warning: %v\n", err)
		}
	}
	return ag.Answer(out, agents.Answer{Verdict: d.Verdict, Reason: d.Reason, Hint: hint})
}

// oneShot is the hook's half of a one-shot approval (approvals.OneShots)
// for the call c the gate asked about (d) and the agent will put to
// nobody: the person's approval of it, when there is one, allows it once
// (approved); otherwise the call is recorded as pending, and hint says
// how to approve it.
func (o Options) oneShot(c *gate.Call, d gate.Decision) (_ gate.Decision, approved bool, hint string) {
	store := approvals.OneShots{Dir: o.Tickets.Dir, Now: o.Tickets.Now}
	session := sessions.ID(c.SessionID, o.Getenv)
	dir := tickets.RealDir(c.Dir())
	key := c.Key()
	taken, err := store.Take(o.Agent.Name, session, c.ToolName, key, dir)
	if err != nil {
		fmt.Fprintf(o.Warn, "agent-shim: warning: %v\n", err)
	}
	if taken != nil {
		return gate.Decision{Verdict: gate.Allow, Reason: "approved once by a person (agent-shim approve " + taken.ID + ")",
			Approved: true, Covers: d.Covers}, true, ""
	}
	p, err := store.Ask(approvals.OneShot{Agent: o.Agent.Name, Session: session, Tool: c.ToolName, Key: key, Dir: dir,
		Reason: d.Reason, Procs: o.procs()})
	if err != nil {
		fmt.Fprintf(o.Warn, "agent-shim: warning: %v\n", err)
		return d, false, ""
	}
	return d, false, fmt.Sprintf("to let it run once, a person runs `agent-shim approve %s` in a terminal of their own within %v, then the agent retries it exactly", p.ID, approvals.OneShotTTL)
}

func (o Options) procs() []approvals.Proc {
	if o.Procs != nil {
		return o.Procs()
	}
	return approvals.Procs()
}

// underLayer reports whether the agent's shell lines run under the
// run-time layer, as only what install and agent-shim run wrote can tell
// (never the call's input, nor a variable a line could set): the agent
// runs under `agent-shim run` (its process is recorded in the state
// directory and found among this hook's ancestors: tickets.Store.UnderRun),
// or its shell is shell mode (the variable that names the agent's shell,
// which install puts in its settings, names this program), with the layer
// on in config.json and available here.
func (o Options) underLayer(g *gate.Gate) bool {
	if o.Tickets.UnderRun() {
		return true
	}
	if !o.shellIsShim() {
		return false
	}
	if h, known := g.Host(); !known || h.Runtime == "off" {
		return false
	}
	avail := o.Available
	if avail == nil {
		avail = supervisor.Available
	}
	ok, _ := avail()
	return ok
}

// shellIsShim reports whether the agent runs its shell lines through
// shell mode: its shell variable (ShellEnv, which install sets in the
// agent's settings) names this very program.
func (o Options) shellIsShim() bool {
	shell, known := o.agentShell()
	return known && shell != "" && o.isSelf(shell)
}

// mayBeShellMode reports whether shell mode may run the agent's lines,
// and so read the hook's tickets: not for an agent shell mode does not
// serve, nor where the agent's shell (its variable, else SHELL) is
// another program; yes where that cannot be told.
func (o Options) mayBeShellMode() bool {
	shell, known := o.agentShell()
	if !known {
		return false
	}
	if shell == "" && o.Getenv != nil {
		shell = o.Getenv("SHELL")
	}
	return shell == "" || o.isSelf(shell)
}

// agentShell is the agent's shell variable (ShellEnv); known is false
// for an agent shell mode does not serve.
func (o Options) agentShell() (shell string, known bool) {
	if o.Agent.ShellEnv == "" || o.Getenv == nil {
		return "", false
	}
	return o.Getenv(o.Agent.ShellEnv), true
}

// isSelf reports whether the program at path is this very program.
func (o Options) isSelf(path string) bool {
	self := o.Self
	if self == nil {
		self = os.Executable
	}
	me, err := self()
	if err != nil {
		return false
	}
	a, err1 := os.Stat(path)
	b, err2 := os.Stat(me)
	return err1 == nil && err2 == nil && os.SameFile(a, b) // (shellmode.SameFile says "same" when it cannot tell)
}

// ApproveHint says how to approve a call for good: the grant an "always"
// answer would save, and where.
func ApproveHint(configPath string, req *gate.Request) string {
	if req == nil {
		return ""
	}
	if req.Always.Tool == "" {
		return fmt.Sprintf("to allow it, add %q to agentShim.pathScope.allow in %s", req.Always.Pattern, configPath)
	}
	return fmt.Sprintf("to allow it, add %q to agentShim.tools.allow in %s", req.Always.Tool+":"+req.Always.Pattern, configPath)
}

// recordApproval handles a post-tool-use call: the call ran, so if the
// hook had answered it "ask", the person approved it, and the approval is
// logged. Other calls are none of the shim's business.
func recordApproval(ctx context.Context, o Options, c *gate.Call) error {
	auditPath, err := approvals.Path(o.Getenv)
	if err != nil {
		return err
	}
	id := sessions.ID(c.SessionID, o.Getenv)
	sess := sessions.Of(auditPath, id)
	if _, err := os.Stat(sess.Path); errors.Is(err, fs.ErrNotExist) {
		return nil // the session asked nothing
	}
	call := callKey(c)
	var found *sessions.AskedCall
	now := time.Now()
	err = sess.Update(ctx, sessions.AskWait, func(sf *sessions.File) {
		sf.Asked = slices.DeleteFunc(sf.Asked, func(a sessions.AskedCall) bool {
			match := found == nil && (c.ToolUseID != "" && a.ID == c.ToolUseID ||
				c.ToolUseID == "" && a.ID == "" && a.Call == call)
			if match {
				found = &a
			}
			return match || now.Sub(a.Time) > sessions.AskedKeep
		})
	})
	if err != nil || found == nil {
		return err
	}
	audit := &sessions.Audit{Path: auditPath}
	defer audit.Close()
	g := gate.New(gate.Options{Audit: audit, Session: id})
	return g.Apply(gate.Request{Tool: found.Tool, Key: found.Key}, gate.AnswerOnce)
}

// callKey names a call by its tool and input, to match a post-tool-use
// call to its pre-tool-use call when the agent gives no tool_use_id.
func callKey(c *gate.Call) string {
	keys := make([]string, 0, len(c.ToolInput))
	for k := range c.ToolInput {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteString(c.ToolName)
	for _, k := range keys {
		var buf bytes.Buffer
		if json.Compact(&buf, c.ToolInput[k]) != nil {
			buf.Reset()
			buf.Write(c.ToolInput[k])
		}
		sb.WriteString("\x00" + k + "=" + buf.String())
	}
	return sb.String()
}
