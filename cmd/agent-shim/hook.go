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
)

// The agents' hook protocols, as their documentation gives them (stored
// copies, read while writing this):
//
//   - Claude Code, https://docs.anthropic.com/en/docs/claude-code/hooks
//     ("PreToolUse Decision Control"): the input has session_id, cwd,
//     hook_event_name, tool_name, tool_input and tool_use_id; the answer is
//     {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//     "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": …}}
//     with exit 0. "allow" skips the permission prompt but not Claude's deny
//     or ask rules; with no output Claude's own permission rules decide.
//     Exit 2 blocks the call, with stderr as the reason.
//   - Codex, https://developers.openai.com/codex/hooks (hooks.json beside
//     config.toml), and openai/codex#20756: PreToolUse takes the same input
//     shape and honours permissionDecision "deny" with a reason; "allow"
//     and "ask" are not supported (that pull request, which would add them,
//     was closed), so allow is "exit 0, no output", and ask is answered
//     deny with a reason that says how to approve the call. Exit 2 blocks
//     with stderr as the reason.
//   - Gemini CLI, https://geminicli.com/docs/hooks/reference: BeforeTool
//     takes tool_name and tool_input (run_shell_command: command); the
//     answer is {"decision": "allow"|"deny", "reason": …} on stdout with
//     exit 0 ("reason" is required when denied and is sent to the agent);
//     `{}` decides nothing; exit 2 blocks with stderr as the reason. Ask
//     is answered as for Codex.
//
// Whatever goes wrong (input that is not JSON, an unknown event, a bad
// config.json) is answered with exit 2 and the reason on stderr, which all
// three read as "blocked": never allow.

// hookInput is what the three agents send on stdin: gate.Call, read by
// gate.ParseCall.
type hookInput = gate.Call

// agent is one agent's hook protocol.
type agent struct {
	name string
	pre  string // the pre-tool-use event
	post string // the post-tool-use event the shim reads, if any
	// answer writes the answer to a decision; hint says how to approve a
	// call that needs a person.
	answer func(w io.Writer, d gate.Decision, hint string) error
}

var agents = map[string]*agent{
	"claude-code": {name: "claude-code", pre: "PreToolUse", post: "PostToolUse", answer: answerClaude},
	"codex":       {name: "codex", pre: "PreToolUse", answer: answerCodex},
	"gemini-cli":  {name: "gemini-cli", pre: "BeforeTool", answer: answerGemini},
}

const hookSynopsis = "agent-shim hook claude-code|codex|gemini-cli [--config FILE]"

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
	ag := agents[name]
	if ag == nil {
		if name == "" {
			return e.block(usagef("hook: name the agent: %s", hookSynopsis))
		}
		return e.block(usagef("hook: unknown agent %q (agents: claude-code, codex, gemini-cli)", name))
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
func (e *env) hookCall(ctx context.Context, ag *agent, cfg string) int {
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookInput+1))
	if err != nil {
		return e.block(fmt.Errorf("reading the hook input: %w", err))
	}
	if len(data) > maxHookInput {
		return e.block(fmt.Errorf("hook input longer than %d bytes", maxHookInput))
	}
	in, err := gate.ParseCall(data)
	if err != nil {
		return e.block(fmt.Errorf("%s hook input: %v", ag.name, err))
	}
	switch {
	case in.Event == ag.pre:
	case in.Event == ag.post && ag.post != "":
		return e.block(e.recordApproval(ctx, in))
	case in.Event == "":
		return e.block(fmt.Errorf("%s hook input has no hook_event_name", ag.name))
	default:
		return e.block(fmt.Errorf("%s hook: unknown event %q (this hook answers %s)", ag.name, in.Event, ag.pre))
	}
	if err := in.Check(); err != nil {
		return e.block(fmt.Errorf("%s hook input: %v", ag.name, err))
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
	e.logHook(ag.name, in, d) // the decision log (logcmd.go)
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
	if ag.post != "" && d.Verdict == gate.Ask {
		// The agent asks the person; its PostToolUse for this call
		// means they approved.
		if err := s.session.ask(ctx, in, d.Request); err != nil {
			fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
		}
	}
	if err := ag.answer(e.stdout, d, hint); err != nil {
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

// claudeOutput is Claude Code's (and Codex's) PreToolUse answer.
type claudeOutput struct {
	HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
}

type claudeDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

func writeLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// claudeAnswer writes what writeLine writes of a claudeOutput
// (TestClaudeAnswer), the object spelled out: encoding/json reads only
// the reason, a string, which costs a hook process less than reflecting
// on the structs.
func claudeAnswer(w io.Writer, decision, reason string) error {
	var b bytes.Buffer
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(decision); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteString(`,"permissionDecisionReason":`)
	if err := enc.Encode("agent-shim: " + reason); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	b.WriteString("}}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// answerClaude: allow, deny and ask as Claude's permissionDecision;
// Default prints nothing, leaving the call to Claude's own rules.
func answerClaude(w io.Writer, d gate.Decision, _ string) error {
	switch d.Verdict {
	case gate.Allow:
		return claudeAnswer(w, "allow", d.Reason)
	case gate.Ask:
		return claudeAnswer(w, "ask", d.Reason)
	case gate.Default:
		return nil
	}
	return claudeAnswer(w, "deny", d.Reason)
}

// answerCodex: Codex honours only deny. Allow and Default print nothing
// (Codex's own approval policy and sandbox then apply); ask is a deny that
// says how to approve the call.
func answerCodex(w io.Writer, d gate.Decision, hint string) error {
	switch d.Verdict {
	case gate.Allow, gate.Default:
		return nil
	case gate.Ask:
		return claudeAnswer(w, "deny", needsApproval(d.Reason, hint))
	}
	return claudeAnswer(w, "deny", d.Reason)
}

type geminiOutput struct {
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// answerGemini: allow and deny as Gemini's decision; Default is `{}`
// (Gemini's own confirmation applies); ask is a deny that says how to
// approve the call.
func answerGemini(w io.Writer, d gate.Decision, hint string) error {
	switch d.Verdict {
	case gate.Allow:
		return writeLine(w, geminiOutput{"allow", "agent-shim: " + d.Reason})
	case gate.Default:
		return writeLine(w, geminiOutput{})
	case gate.Ask:
		return writeLine(w, geminiOutput{"deny", "agent-shim: " + needsApproval(d.Reason, hint)})
	}
	return writeLine(w, geminiOutput{"deny", "agent-shim: " + d.Reason})
}

func needsApproval(reason, hint string) string {
	s := "needs approval (" + reason + "), and this agent's hooks cannot ask"
	if hint != "" {
		s += "; " + hint
	}
	return s
}

// recordApproval handles Claude Code's PostToolUse: the call ran, so if the
// shim had answered it "ask", the person approved it, and the approval is
// logged. Other calls are none of the shim's business.
func (e *env) recordApproval(ctx context.Context, in *hookInput) error {
	auditPath, err := gate.AuditPath(e.getenv)
	if err != nil {
		return err
	}
	id := e.sessionID(in.SessionID)
	sess := sessionOf(auditPath, id)
	if _, err := os.Stat(sess.path); errors.Is(err, fs.ErrNotExist) {
		return nil // the session asked nothing
	}
	call := callKey(in)
	var found *askedCall
	now := time.Now()
	err = sess.update(ctx, func(sf *sessionFile) {
		sf.Asked = slices.DeleteFunc(sf.Asked, func(a askedCall) bool {
			match := found == nil && (in.ToolUseID != "" && a.ID == in.ToolUseID ||
				in.ToolUseID == "" && a.ID == "" && a.Call == call)
			if match {
				found = &a
			}
			return match || now.Sub(a.Time) > askedKeep
		})
	})
	if err != nil || found == nil {
		return err
	}
	audit := &lazyAudit{path: auditPath}
	defer audit.Close()
	g := gate.New(gate.Options{Audit: audit, Session: id})
	return g.Apply(gate.Request{Tool: found.Tool, Key: found.Key}, gate.AnswerOnce)
}

// ask records a call answered "ask".
func (s *session) ask(ctx context.Context, in *hookInput, req *gate.Request) error {
	a := askedCall{ID: in.ToolUseID, Tool: in.ToolName, Key: req.Key, Call: callKey(in), Time: time.Now().UTC()}
	return s.update(ctx, func(sf *sessionFile) {
		now := time.Now()
		sf.Asked = slices.DeleteFunc(sf.Asked, func(x askedCall) bool {
			return now.Sub(x.Time) > askedKeep || x.ID != "" && x.ID == a.ID
		})
		sf.Asked = append(sf.Asked, a)
	})
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
