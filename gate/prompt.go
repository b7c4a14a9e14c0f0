package gate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Prompter asks a person to approve a tool call. The host implements it: a
// terminal, a dialog, a chat message. AskApproval may be called from many
// goroutines at once.
type Prompter interface {
	AskApproval(ctx context.Context, req Request) (Answer, error)
}

// RequestKind says what a request is about.
type RequestKind int

const (
	// KindShell is a shell command.
	KindShell RequestKind = iota
	// KindFileWrite is a file write inside the scope that the level does
	// not auto-approve.
	KindFileWrite
	// KindOutsideScope is a file tool acting on a path outside the scope.
	KindOutsideScope
	// KindOther is any other tool call (web, MCP, unknown tools).
	KindOther
)

func (k RequestKind) String() string {
	switch k {
	case KindShell:
		return "shell command"
	case KindFileWrite:
		return "file write"
	case KindOutsideScope:
		return "path outside the scope"
	case KindOther:
		return "tool call"
	}
	return fmt.Sprintf("RequestKind(%d)", int(k))
}

// Request is what a person is asked to approve.
type Request struct {
	Kind RequestKind
	// Tool is the tool as the agent names it (Bash, Write, read_file, …).
	Tool string
	// Key is the command for shell tools, the absolute path for file
	// tools, else what the host passed.
	Key string
	// Reason says why the call needs approval.
	Reason string
	// Programs are, for a shell command, the programs an answer of
	// AnswerTool approves for the session; empty otherwise.
	Programs []string
	// Commands are, for a shell command, the narrower answer beside
	// it: each program with its subcommand ("git remote"), which an
	// answer of AnswerCommand approves for the session (every command
	// starting with those words); empty when a command has no
	// subcommand word.
	Commands []string
	// ToolAsks are the ask rules of the policy an answer of AnswerTool
	// would let through unasked for the session (git push, for every
	// git command), and CommandAsks those AnswerCommand would: what the
	// broad answers approve beyond the call, said before the person
	// picks one.
	ToolAsks, CommandAsks []string
	// Always is what AnswerAlways would persist.
	Always Grant
}

// Grant is a pattern an "always" answer persists as the user's own.
// With Tool empty, Pattern is a path-scope pattern (agentShim.pathScope.allow);
// otherwise Tool:Pattern is a ToolPolicy allow pattern (agentShim.tools.allow)
// whose glob has its metacharacters quoted when it names one exact call.
type Grant struct {
	Tool    string
	Pattern string
}

func (g Grant) String() string {
	if g.Tool == "" {
		return "path " + g.Pattern
	}
	return g.Tool + ":" + g.Pattern
}

// Answer is a person's answer to a request.
type Answer int

const (
	// AnswerNo denies the call (n, or an empty line).
	AnswerNo Answer = iota
	// AnswerOnce allows this call (y).
	AnswerOnce
	// AnswerSession allows this exact request for the session (s).
	AnswerSession
	// AnswerTool allows every call of this program or tool for the
	// session (t).
	AnswerTool
	// AnswerAlways allows it from now on and persists the request's
	// Always grant as the user's own (a).
	AnswerAlways
	// AnswerCommand allows every command of the request's programs
	// with their subcommand (Request.Commands) for the session (c): the
	// narrower answer beside AnswerTool.
	AnswerCommand
)

func (a Answer) String() string {
	switch a {
	case AnswerNo:
		return "no"
	case AnswerOnce:
		return "once"
	case AnswerSession:
		return "session"
	case AnswerTool:
		return "tool"
	case AnswerAlways:
		return "always"
	case AnswerCommand:
		return "command"
	}
	return fmt.Sprintf("Answer(%d)", int(a))
}

// parseAnswer reads a typed answer: y/yes, s, t, a, n/no or empty.
func parseAnswer(s string) (Answer, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes":
		return AnswerOnce, nil
	case "s", "session":
		return AnswerSession, nil
	case "t", "tool":
		return AnswerTool, nil
	case "a", "always":
		return AnswerAlways, nil
	case "c", "command":
		return AnswerCommand, nil
	case "", "n", "no":
		return AnswerNo, nil
	}
	return AnswerNo, fmt.Errorf("unknown answer %q (want y, s, c, t, a or n)", strings.TrimSpace(s))
}

// terminalPrompter asks on a terminal: it writes the request to out and
// reads one line from in. One question is asked at a time.
type terminalPrompter struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

// NewTerminalPrompter returns a prompter reading answers from in (the
// controlling terminal, /dev/tty) and writing questions to out.
func NewTerminalPrompter(in io.Reader, out io.Writer) Prompter {
	return &terminalPrompter{in: bufio.NewReader(in), out: out}
}

// maxTries bounds how often an unreadable answer is asked again.
const maxTries = 3

// AskApproval asks until it reads a valid answer. End of input is AnswerNo.
// A blocked read is not interrupted by ctx; ctx is checked before asking.
func (p *terminalPrompter) AskApproval(ctx context.Context, req Request) (Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return AnswerNo, err
	}
	fmt.Fprintf(p.out, "%s, %s: %s\n", req.Tool, req.Kind, req.Key)
	if req.Reason != "" {
		fmt.Fprintf(p.out, "%s\n", req.Reason)
	}
	letters := "y/s/t/a/N"
	fmt.Fprintf(p.out, "  y  yes, once\n  s  this exact request, for the session\n")
	if len(req.Commands) > 0 {
		letters = "y/s/c/t/a/N"
		fmt.Fprintf(p.out, "  c  %s, for the session%s\n", commandAnswer(req.Commands), alsoAsked(req.CommandAsks))
	}
	fmt.Fprintf(p.out, "  t  %s, for the session%s\n  a  always (saves %s)\n  n  no\n", toolAnswer(req), alsoAsked(req.ToolAsks), req.Always)
	for try := 0; try < maxTries; try++ {
		fmt.Fprintf(p.out, "allow? [%s] ", letters)
		line, err := p.in.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return AnswerNo, fmt.Errorf("reading answer: %w", err)
		}
		if errors.Is(err, io.EOF) && line == "" {
			fmt.Fprintln(p.out)
			return AnswerNo, nil
		}
		a, perr := parseAnswer(line)
		if perr == nil {
			return a, nil
		}
		fmt.Fprintf(p.out, "%v\n", perr)
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return AnswerNo, nil
}

// toolAnswer says what an answer of AnswerTool approves.
func toolAnswer(req Request) string {
	if len(req.Programs) > 0 {
		return "every " + strings.Join(req.Programs, ", ") + " command"
	}
	return "every call of " + req.Tool
}

// commandAnswer says what an answer of AnswerCommand approves.
func commandAnswer(cmds []string) string {
	q := make([]string, len(cmds))
	for i, c := range cmds {
		q[i] = "`" + c + " …`"
	}
	return "every " + strings.Join(q, ", ") + " command"
}

// maxNamed bounds the ask rules a prompt names.
const maxNamed = 6

// alsoAsked says which of the policy's ask rules an answer lets through.
func alsoAsked(rules []string) string {
	if len(rules) == 0 {
		return ""
	}
	named := rules[:min(len(rules), maxNamed)]
	s := " — including " + strings.Join(named, ", ")
	if n := len(rules) - len(named); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s + ", which the policy asks about"
}
