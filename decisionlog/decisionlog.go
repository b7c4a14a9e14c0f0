// Package decisionlog records every decision agent-shim makes, one JSON
// line per decision, and reads the record back.
//
// Every layer logs through a Writer: hook mode, shell mode, the run-time
// supervisor and Go programs that embed the gate. A line says when, which
// agent and session, the layer, the working directory, the command or tool
// key, the verdict, the rule that decided (with its overlay, file and line)
// or the floor or fact that did, and how a prompt was answered.
//
// The file is $XDG_STATE_HOME/agent-shim/decisions.jsonl (an absolute
// XDG_STATE_HOME only; else ~/.local/state/agent-shim/decisions.jsonl). It
// is a protected path: an agent may not write it unasked.
//
// Writing is built so that the log can never change a decision:
//
//   - each line is one write(2) to a file opened with O_APPEND, so lines of
//     agents logging at once never interleave or tear;
//   - the file is rotated when it would pass MaxSize: the current file
//     becomes decisions.jsonl.1, the old .1 becomes .2, and older files are
//     dropped. Rotation renames under a lock file; a writer that opened the
//     file before the rename appends to the renamed file, so no line is
//     lost;
//   - no writer waits for the rotation lock: any process that can read
//     the lock file can hold it (flock needs no write access), one a
//     line left behind included. A writer that finds it held appends to
//     the full file, up to twice MaxSize; past that the line is lost;
//   - a full or unwritable disk loses the line (Err reports why), never
//     the decision. Lines lost are counted beside the log
//     (decisions.jsonl.lost) and the next line written carries the count
//     (Entry.Lost; Lost reads a count no line carries yet). The log is
//     opened non-blocking (a FIFO planted in its place cannot stall it),
//     never through a link, and written with one write(2) of a local
//     file, which does not wait on anything but the disk. A caller that
//     must not wait on a slow disk at all sets Options.Wait: Log then
//     writes from a goroutine and returns after that bound, whichever
//     comes first.
//
// Hook mode writes in place (Wait 0): the goroutine's hand-off costs more
// than the write (measured: under load, +17–30% of a hook call against
// +7–11% in place), and a home directory on a disk that hangs hangs the
// hook's reads of config.json and its session files anyway.
//   - secrets are masked before anything is written (see redact).
package decisionlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Layers: where a decision was made.
const (
	LayerHook    = "hook"    // an agent's pre-tool-use hook
	LayerShell   = "shell"   // shell mode: agent-shim -c
	LayerRuntime = "runtime" // the run-time supervisor, one execve
	LayerGate    = "gate"    // a Go program embedding package gate
)

// Answers: how a person answered a prompt. Empty means nobody was asked.
const (
	AnswerOnce    = "once"
	AnswerSession = "session"
	AnswerTool    = "tool"
	AnswerAlways  = "always"
	AnswerNo      = "no"
	// AnswerNone means a prompt was due but nobody could answer it (no
	// terminal, or the prompt failed).
	AnswerNone = "unanswered"
)

// Entry is one decision.
type Entry struct {
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent,omitempty"`   // claude-code, codex, gemini-cli, or the host program
	Session string    `json:"session,omitempty"` // the agent's session id
	Layer   string    `json:"layer"`             // LayerHook, LayerShell, LayerRuntime or LayerGate
	Cwd     string    `json:"cwd,omitempty"`
	Tool    string    `json:"tool,omitempty"` // Bash, Read, run_shell_command, …; "execve" at run time
	// ToolUseID is the agent's id of the call (Claude Code's tool_use_id,
	// Codex's call id), the id its own telemetry carries.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Command is the command line, or the tool's key (a path, a URL):
	// what was decided, with secrets masked.
	Command string `json:"command"`
	// Argv is the exact argv at run time, with secrets masked.
	Argv []string `json:"argv,omitempty"`
	// Shell is the shell whose reading decided a shell-mode line when it
	// is not bash's ("zsh"): the line is replayed as that shell reads it.
	Shell   string `json:"shell,omitempty"`
	Verdict string `json:"verdict"` // allow, ask, deny or default
	// Reason is the decision's one-line reason.
	Reason string `json:"reason,omitempty"`
	// Rule is the rule that decided, when one did.
	Rule *Rule `json:"rule,omitempty"`
	// Floor is the floor or fact that decided when no rule did (a
	// write outside the scope, a program not known statically, …).
	Floor string `json:"floor,omitempty"`
	// Answer is how a prompt was answered; "" when none was shown.
	Answer string `json:"answer,omitempty"`
	// Approved reports that a person's earlier answer decided (for the
	// session, or an "always" grant of the exact call), not the policy
	// alone: replaying the entry under another policy says nothing.
	Approved bool `json:"approved,omitempty"`
	// Cut reports that Command or Argv was cut to the line's bound: it
	// is not all that was decided.
	Cut bool `json:"cut,omitempty"`
	// Tree reports an entry a process under agent-shim run wrote (the
	// agent's hook, which runs inside the tree the run supervises and
	// cannot write this log), taken in by the run when its program
	// ended: it is the tree's word, which any process of it could have
	// written.
	Tree bool `json:"tree,omitempty"`
	// Lost is how many lines were lost just before this one (a full
	// disk; the rotation lock held by another process while the log was
	// at twice MaxSize): the writers that could not write them counted
	// them beside the log, and the next line written carries the count.
	// The Writer sets it.
	Lost int `json:"lost,omitempty"`
}

// Rule is the rule that decided, with its provenance.
type Rule struct {
	Text     string `json:"text"`               // the manifest line or grant
	List     string `json:"list,omitempty"`     // allow, ask or deny
	Category string `json:"category,omitempty"` // the manifest category, never_allow, …
	Overlay  string `json:"overlay,omitempty"`  // ".", "vendor/x", "builtin", "ad-hoc"
	File     string `json:"file,omitempty"`     // relative to the checkout root
	Line     int    `json:"line,omitempty"`
}

// String names the rule and where it came from: `git push` (file:line).
func (r *Rule) String() string {
	if r == nil {
		return ""
	}
	s := "`" + r.Text + "`"
	switch {
	case r.File != "" && r.Line > 0:
		s += fmt.Sprintf(" (%s:%d)", r.File, r.Line)
	case r.File != "":
		s += " (" + r.File + ")"
	case r.Overlay != "":
		s += " (" + r.Overlay + ")"
	}
	return s
}

// Logger is what a layer logs decisions to. *Writer is one; nil-safe
// callers may use Discard.
type Logger interface {
	Log(Entry)
}

// Discard drops every entry.
var Discard Logger = discard{}

type discard struct{}

func (discard) Log(Entry) {}

// FileName is the log's file name in the state directory.
const FileName = "decisions.jsonl"

// Path returns the decision log: $XDG_STATE_HOME/agent-shim/decisions.jsonl
// when XDG_STATE_HOME is absolute (the XDG specification ignores relative
// values), else $HOME/.local/state/agent-shim/decisions.jsonl.
func Path(getenv func(string) string) (string, error) {
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", errors.New("finding the decision log: neither XDG_STATE_HOME nor HOME is an absolute path")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "agent-shim", FileName), nil
}

// Limits of one line, so that a line stays one small write and a log
// rotated at MaxSize stays near it: every field is bounded.
const (
	maxCommand = 8 << 10 // bytes of Command, of all of Argv, of a rule's text
	maxReason  = 1 << 10
	maxCwd     = 4 << 10 // PATH_MAX
	maxField   = 256     // agent, session, layer, tool, verdict, answer, a rule's provenance
)

// Marshal returns e as one log line: long fields cut, secrets masked, a
// newline at the end. A zero Time is now. A field is cut to a bound
// before it is redacted (redact's cost grows with its input; see precut)
// and again after.
func Marshal(e Entry) ([]byte, error) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	red := redact(precut(e.Command, maxCommand))
	e.Cut = e.Cut || len(e.Command) > 2*maxCommand || len(red) > maxCommand
	e.Command = cut(red, maxCommand)
	if len(e.Argv) > 0 {
		// The words that fit the budget before redaction, each bounded.
		words, n := make([]string, 0, len(e.Argv)), 0
		for _, a := range e.Argv {
			if len(a) > 2*maxCommand {
				e.Cut = true
			}
			a = precut(a, maxCommand)
			if n += len(a); n > 2*maxCommand {
				break
			}
			words = append(words, a)
		}
		argv := make([]string, 0, len(words)+1)
		n = 0
		for _, a := range redactArgv(words) {
			if n += len(a); n > maxCommand {
				break
			}
			argv = append(argv, a)
		}
		if len(argv) < len(e.Argv) {
			e.Cut = true
			argv = append(argv, fmt.Sprintf("…(%d more words)", len(e.Argv)-len(argv)))
		}
		e.Argv = argv
	}
	e.Reason = cut(redact(precut(e.Reason, maxReason)), maxReason)
	e.Floor = cut(redact(precut(e.Floor, maxReason)), maxReason)
	e.Cwd = cut(e.Cwd, maxCwd)
	for _, f := range []*string{&e.Agent, &e.Session, &e.Layer, &e.Tool, &e.ToolUseID, &e.Verdict, &e.Answer, &e.Shell} {
		*f = cut(*f, maxField)
	}
	if e.Rule != nil {
		r := *e.Rule
		r.Text = cut(r.Text, maxCommand)
		for _, f := range []*string{&r.List, &r.Category, &r.Overlay, &r.File} {
			*f = cut(*f, maxField)
		}
		e.Rule = &r
	}
	return append(appendEntry(make([]byte, 0, 256+len(e.Command)+len(e.Reason)), &e), '\n'), nil
}

// precut bounds s before it is redacted, to twice n (the final cut is to
// n). A cut inside a secret must not leave its beginning for redact to
// miss (`https://user:pa`): the cut goes back to the last blank, so the
// word it falls in is dropped whole.
func precut(s string, n int) string {
	if len(s) <= 2*n {
		return s
	}
	head := s[:2*n]
	i := strings.LastIndexAny(head, " \t\n")
	if i < 0 {
		i = 0
	}
	return head[:i] + fmt.Sprintf(" …(%d bytes cut)", len(s)-i)
}

// appendEntry appends e as encoding/json would marshal it (TestMarshalJSON
// holds it to that), without reflection: the hook logs one entry per
// process, and encoding/json's first use of a type costs more than the
// rest of the entry.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, "agent", e.Agent, true)
	b = appendField(b, "session", e.Session, true)
	b = appendField(b, "layer", e.Layer, false)
	b = appendField(b, "cwd", e.Cwd, true)
	b = appendField(b, "tool", e.Tool, true)
	b = appendField(b, "tool_use_id", e.ToolUseID, true)
	b = appendField(b, "command", e.Command, false)
	if len(e.Argv) > 0 {
		b = append(b, `,"argv":[`...)
		for i, a := range e.Argv {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, ']')
	}
	b = appendField(b, "shell", e.Shell, true)
	b = appendField(b, "verdict", e.Verdict, false)
	b = appendField(b, "reason", e.Reason, true)
	if r := e.Rule; r != nil {
		b = append(b, `,"rule":{"text":`...)
		b = appendString(b, r.Text)
		b = appendField(b, "list", r.List, true)
		b = appendField(b, "category", r.Category, true)
		b = appendField(b, "overlay", r.Overlay, true)
		b = appendField(b, "file", r.File, true)
		if r.Line != 0 {
			b = strconv.AppendInt(append(b, `,"line":`...), int64(r.Line), 10)
		}
		b = append(b, '}')
	}
	b = appendField(b, "floor", e.Floor, true)
	b = appendField(b, "answer", e.Answer, true)
	if e.Approved {
		b = append(b, `,"approved":true`...)
	}
	if e.Cut {
		b = append(b, `,"cut":true`...)
	}
	if e.Tree {
		b = append(b, `,"tree":true`...)
	}
	if e.Lost != 0 {
		b = strconv.AppendInt(append(b, `,"lost":`...), int64(e.Lost), 10)
	}
	return append(b, '}')
}

// appendField appends ,"name":"value", or nothing for an empty value
// when omitEmpty.
func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(append(append(b, ',', '"'), name...), '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string, escaped as encoding/json does:
// control characters, quote, backslash, <, >, &, U+2028 and U+2029, and
// invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// cut shortens s to at most n bytes (plus a marker), on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("…(%d bytes cut)", len(s)-i)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Options tune a Writer. The zero value is the defaults.
type Options struct {
	// MaxSize is the size past which the file is rotated; default 8 MiB.
	MaxSize int64
	// Keep is how many rotated files are kept (.1, .2, …); default 2.
	Keep int
	// Wait, when positive, makes Log write from a goroutine and wait
	// for it at most this long; the write goes on in the background
	// after that, and is lost if the process exits first. Zero writes
	// in place.
	Wait time.Duration
}

// Writer appends entries to a decision log. It is safe for concurrent use,
// also by several processes on one file.
type Writer struct {
	path string
	max  int64
	keep int
	wait time.Duration

	mu  sync.Mutex
	err error
}

// NewWriter returns a writer for the log at path. Nothing is opened until
// the first Log.
func NewWriter(path string, o Options) *Writer {
	w := &Writer{path: path, max: o.MaxSize, keep: o.Keep, wait: o.Wait}
	if w.max <= 0 {
		w.max = 8 << 20
	}
	if w.keep <= 0 {
		w.keep = 2
	}
	return w
}

// Path returns the file the writer appends to.
func (w *Writer) Path() string { return w.path }

// Log appends e as one line. It returns when the line is written (or,
// with Options.Wait, after that bound), and never reports failure: a line
// that cannot be written is lost, and Err says why. A nil Writer drops e.
func (w *Writer) Log(e Entry) {
	if w == nil {
		return
	}
	if w.wait <= 0 {
		w.setErr(w.write(e))
		return
	}
	done := make(chan struct{})
	ent := e // only this branch's copy moves to the heap
	go func() {
		defer close(done)
		w.setErr(w.write(ent))
	}()
	t := time.NewTimer(w.wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		w.setErr(fmt.Errorf("logging decision to %s: no answer from the disk in %v", w.path, w.wait))
	}
}

// Err returns the error of the last failed write, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) setErr(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

// Files returns the log's files oldest first, as rotation names them:
// path.N, …, path.1, path.
func Files(path string, keep int) []string {
	if keep <= 0 {
		keep = 2
	}
	files := make([]string, 0, keep+1)
	for i := keep; i >= 1; i-- {
		files = append(files, fmt.Sprintf("%s.%d", path, i))
	}
	return append(files, path)
}

// trimLine is a line with its newline removed, for errors.
func trimLine(s string) string { return strings.TrimRight(s, "\n") }
