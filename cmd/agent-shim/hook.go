package main

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
	"sync/atomic"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// The hook: one agent's pre-tool-use call on stdin, decided by the gate
// and answered in the agent's protocol (package agents says each
// protocol). Whatever goes wrong (input that is not JSON, an unknown
// event, a bad config.json) is answered with exit 2 and the reason on
// stderr, which every agent reads as "blocked": never allow.

// hookInput is what the three agents send on stdin: gate.Call, read by
// gate.ParseCall.
type hookInput = gate.Call

var hookSynopsis = "agent-shim hook " + agents.Names("|") + " [--config FILE]"

// maxHookInput bounds the hook's input: tool inputs carry whole files.
const maxHookInput = 64 << 20

// hook answers one pre-tool-use hook call. Its flags are parsed by hand:
// it runs once per tool call and should cost as little as a process can.
func (e *env) hook(ctx context.Context, args []string) int {
	var name, cfg string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", hookSynopsis)
			return exitOK
		case a == "--config" || a == "-config":
			if i+1 == len(args) {
				return e.block(usagef("hook: flag %s needs a file", a))
			}
			i++
			cfg = args[i]
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			_, cfg, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-"):
			return e.block(usagef("hook: unknown flag %s", a))
		case name != "":
			return e.block(usagef("hook: one agent, got %q and %q", name, a))
		default:
			name = a
		}
	}
	ag := agents.ByName(name)
	if ag == nil {
		if name == "" {
			return e.block(usagef("hook: name the agent: %s", hookSynopsis))
		}
		return e.block(usagef("hook: unknown agent %q (agents: %s)", name, agents.Names(", ")))
	}
	// The call is decided on this goroutine, against the hook's deadline:
	// past it (a strange file, a slow disk, a lock) a timer answers
	// "blocked" and ends the process (hookExit), before the agent's own
	// timeout lets the call through. What the decision writes is kept back
	// until it is known to be in time. (No second goroutine: handing the
	// call to one costs a thread wake-up on every call.)
	var state atomic.Int32 // 0 deciding, 1 answered in time, 2 past the deadline
	late := make(chan int, 1)
	timer := time.AfterFunc(hookDeadline, func() {
		if state.CompareAndSwap(0, 2) {
			code := e.block(fmt.Errorf("no decision within %v", hookDeadline))
			hookExit(code)
			late <- code
		}
	})
	if hookStall != nil {
		hookStall() // tests: a decision that does not come in time
	}
	var out, errout bytes.Buffer
	inner := &env{stdin: e.stdin, stdout: &out, stderr: &errout, getenv: e.getenv}
	code := inner.hookCall(ctx, ag, cfg)
	timer.Stop()
	if !state.CompareAndSwap(0, 1) {
		return <-late // answered by the timer (tests: hookExit returned)
	}
	e.stderr.Write(errout.Bytes())
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		return e.block(err)
	}
	e.exportDecisionsFor(cfg) // export.go: off the decision path
	return code
}

// hookExit ends the process once the deadline has answered; tests replace
// it to go on.
var hookExit = os.Exit

// hookStall, when set by a test, runs before a call is decided.
var hookStall func()

// hookDeadline bounds a hook call: under the guard's time (guardSeconds)
// and the agents' own timeouts. (A variable for the tests.)
var hookDeadline = 10 * time.Second

// hookCall reads, decides and answers one call of agent ag.
func (e *env) hookCall(ctx context.Context, ag *agents.Agent, cfg string) int {
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookInput+1))
	if err != nil {
		return e.block(fmt.Errorf("reading the hook input: %w", err))
	}
	if len(data) > maxHookInput {
		return e.block(fmt.Errorf("hook input longer than %d bytes", maxHookInput))
	}
	in, err := gate.ParseCall(data)
	if err != nil {
		return e.block(fmt.Errorf("%s hook input: %v", ag.Name, err))
	}
	switch {
	case in.Event == ag.Pre:
	case in.Event == ag.Post && ag.Post != "":
		return e.block(e.recordApproval(ctx, in))
	case in.Event == "":
		return e.block(fmt.Errorf("%s hook input has no hook_event_name", ag.Name))
	default:
		return e.block(fmt.Errorf("%s hook: unknown event %q (this hook answers %s)", ag.Name, in.Event, ag.Pre))
	}
	if err := in.Check(); err != nil {
		return e.block(fmt.Errorf("%s hook input: %v", ag.Name, err))
	}
	s, err := e.open(ctx, openOptions{config: cfg, cwd: in.Cwd, dir: in.Dir(), session: in.SessionID})
	if err != nil {
		return e.block(err)
	}
	defer s.close()
	d, err := s.g.DecideCall(in)
	if err != nil {
		return e.block(err)
	}
	e.logHook(ag.Name, in, d) // the decision log (logcmd.go)
	// Leave a ticket for shell mode (ticket.go); without one shell mode
	// only asks more, so a failure is a warning.
	if d.Verdict != gate.Allow || wantSeenTickets(s.g) {
		if err := e.recordTicket(ag, in, d); err != nil {
			fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
		}
	}
	hint := ""
	if d.Verdict == gate.Ask || d.Verdict == gate.Default {
		hint = approveHint(s.config, d.Request)
	}
	if ag.Asks && ag.Post != "" && d.Verdict == gate.Ask {
		// The agent asks the person; its PostToolUse for this call
		// means they approved.
		a := sessions.AskedCall{ID: in.ToolUseID, Tool: in.ToolName, Key: d.Request.Key, Call: callKey(in), Time: time.Now().UTC()}
		if err := s.session.Ask(ctx, a); err != nil {
			fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
		}
	}
	if err := ag.Answer(e.stdout, agents.Answer{Verdict: d.Verdict, Reason: d.Reason, Hint: hint}); err != nil {
		return e.block(err)
	}
	return exitOK
}

// block is hook mode's answer to an error: exit 2, the reason on stderr.
// A nil error is exit 0 with no output.
func (e *env) block(err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(e.stderr, "agent-shim: blocked: %v\n", err)
	return exitBlock
}

// approveHint says how to approve a call for good: the grant an "always"
// answer would save, and where.
func approveHint(configPath string, req *gate.Request) string {
	if req == nil {
		return ""
	}
	if req.Always.Tool == "" {
		return fmt.Sprintf("to allow it, add %q to agentShim.pathScope.allow in %s", req.Always.Pattern, configPath)
	}
	return fmt.Sprintf("to allow it, add %q to agentShim.tools.allow in %s", req.Always.Tool+":"+req.Always.Pattern, configPath)
}

// recordApproval handles Claude Code's PostToolUse: the call ran, so if the
// shim had answered it "ask", the person approved it, and the approval is
// logged. Other calls are none of the shim's business.
func (e *env) recordApproval(ctx context.Context, in *hookInput) error {
	auditPath, err := approvals.Path(e.getenv)
	if err != nil {
		return err
	}
	id := e.sessionID(in.SessionID)
	sess := sessions.Of(auditPath, id)
	if _, err := os.Stat(sess.Path); errors.Is(err, fs.ErrNotExist) {
		return nil // the session asked nothing
	}
	call := callKey(in)
	var found *sessions.AskedCall
	now := time.Now()
	err = sess.Update(ctx, func(sf *sessions.File) {
		sf.Asked = slices.DeleteFunc(sf.Asked, func(a sessions.AskedCall) bool {
			match := found == nil && (in.ToolUseID != "" && a.ID == in.ToolUseID ||
				in.ToolUseID == "" && a.ID == "" && a.Call == call)
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

// callKey names a call by its tool and input, to match a PostToolUse to
// its PreToolUse when the agent gives no tool_use_id.
func callKey(in *hookInput) string {
	keys := make([]string, 0, len(in.ToolInput))
	for k := range in.ToolInput {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteString(in.ToolName)
	for _, k := range keys {
		var buf bytes.Buffer
		if json.Compact(&buf, in.ToolInput[k]) != nil {
			buf.Reset()
			buf.Write(in.ToolInput[k])
		}
		sb.WriteString("\x00" + k + "=" + buf.String())
	}
	return sb.String()
}
