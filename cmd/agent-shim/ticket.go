package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/statefile"
)

// Hook tickets: how the hook and shell mode work together, failing closed.
//
// Each hook call that decides a shell command and does not deny it leaves a
// single-use ticket in the shim's state directory,
// $XDG_STATE_HOME/agent-shim/tickets/: the agent, the session, the
// directory the command runs in, the exact command and an expiry
// (ticketTTL). A ticket is trusted because of where it is: the state
// directory is a protected path, outside every directory the run-time
// layer lets the tree write. It carries no MAC: any process of the tree
// can read whatever key would sign it, so a signature would authenticate
// nothing the directory does not. There are two kinds:
//
//   - "ask": the hook left the call to the agent's own permission prompt
//     (it answered ask, or nothing at all), and the agent ran it, so the
//     person approved it there. Shell mode runs that line once without
//     asking again: the approval arrives before the command, not at
//     PostToolUse. It is also bound to the agent process (the hook's parent
//     or grandparent must be the shell's parent), so a program the agent
//     runs cannot spend it. A deny rule still wins.
//   - "seen": the hook allowed the call. Shell mode decides the line as
//     usual; the ticket only proves a hook saw it, for
//     agentShim.requireHook, so the hook leaves one only when that is set
//     (see wantSeenTickets).
//
// With agentShim.requireHook, shell mode refuses (exit 126) a line with no
// ticket: the hook died, timed out or was bypassed, which the agents all
// treat as "go ahead".
//
// Tickets are files of mode 0600 named by a digest of the directory and
// the command, their expiry and a nonce. Taking one renames it first, so of two
// shells racing for it exactly one wins; it is then removed. Expired
// tickets are removed whenever a ticket is written.

// ticketTTL is how long a ticket stays valid after the hook call.
const ticketTTL = 10 * time.Minute

const (
	ticketAsk  = "ask"
	ticketSeen = "seen"
)

// ticketNow is the clock of tickets; tests move it.
var ticketNow = time.Now

// ticket is one ticket file's content.
type ticket struct {
	Kind    string `json:"kind"`
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Dir     string `json:"dir"`
	Command string `json:"command"`
	Expires int64  `json:"expires"` // Unix seconds
	PIDs    []int  `json:"pids,omitempty"`
	Nonce   string `json:"nonce"`
}

// stateDir is the shim's protected state directory: the directory of the
// approval log, $XDG_STATE_HOME/agent-shim.
func stateDir(getenv func(string) string) (string, error) {
	p, err := gate.AuditPath(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// lp appends s with its length first, so that no two field lists encode
// alike.
func lp(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ticketName is the file name prefix of the tickets for command run in
// dir.
func ticketName(dir, command string) string {
	sum := sha256.Sum256(lp(lp(lp(nil, "agent-shim ticket name"), dir), command))
	return hex.EncodeToString(sum[:16])
}

// realDir resolves dir's symbolic links, so that the hook's idea of the
// directory and the shell's agree; "" when it cannot.
func realDir(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// ancestors returns the parent and grandparent process of this process, as
// far as the system tells (0 where it does not).
func ancestors() []int {
	ppid := os.Getppid()
	return []int{ppid, parentOf(ppid)}
}

// parentOf returns the parent of process pid from /proc (Linux), else 0.
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// wantSeenTickets reports whether the hook should leave "seen" tickets for
// the calls it allows: only shell mode under agentShim.requireHook reads
// them, and writing a file on every allowed call is most of a hook call's
// cost. The setting comes from what the gate loaded; a gate that does not
// know it (a compact copy without the shim's settings) leaves them, as
// the setting might be on.
func wantSeenTickets(g *gate.Gate) bool {
	h, known := g.Host()
	on := h.RequireHook
	return on || !known
}

// recordTicket is hook mode's half: it leaves a ticket for a shell call
// the hook did not deny (see above). Other tools, and denied calls, leave
// none. ask tells whether the agent was left to ask (or decide) itself.
func (e *env) recordTicket(ag *agents.Agent, in *hookInput, d gate.Decision) error {
	if !gate.IsCommandTool(in.ToolName) {
		return nil
	}
	kind := ""
	switch d.Verdict {
	case gate.Allow:
		kind = ticketSeen
	case gate.Ask:
		if ag.Asks { // the agent asks its person; others were answered deny
			kind = ticketAsk
		}
	case gate.Default:
		kind = ticketAsk // left to the agent's own permission rules
	}
	if kind == "" {
		return nil
	}
	cmd, err := in.Command()
	if err != nil {
		return err
	}
	dir, err := stateDir(e.getenv)
	if err != nil {
		return err
	}
	t := ticket{
		Kind:    kind,
		Agent:   ag.Name,
		Session: in.SessionID,
		Dir:     realDir(in.Dir()),
		Command: cmd,
		Expires: ticketNow().Add(ticketTTL).Unix(),
	}
	if t.Dir == "" { // no cwd given: the agent runs its hooks where it works
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the working directory: %w", err)
		}
		t.Dir = realDir(wd)
	}
	if kind == ticketAsk {
		t.PIDs = ancestors()
	}
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	t.Nonce = hex.EncodeToString(nonce[:])
	data, err := json.Marshal(&t)
	if err != nil {
		return err
	}
	tdir := filepath.Join(dir, "tickets")
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return fmt.Errorf("writing a hook ticket: %w", err)
	}
	pruneTickets(tdir)
	name := fmt.Sprintf("%s.%d.%s", ticketName(t.Dir, cmd), t.Expires, t.Nonce)
	f, err := os.OpenFile(filepath.Join(tdir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing a hook ticket: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing a hook ticket: %w", err)
	}
	return nil
}

// ticketExpiry reads the expiry from a ticket file name.
func ticketExpiry(name string) (int64, bool) {
	parts := strings.Split(name, ".")
	if len(parts) < 3 {
		return 0, false
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	return n, err == nil
}

// pruneEvery is how often pruneTickets reads the directory: a busy
// session leaves a ticket per call, and reading them all on every hook
// call would make each call pay for the session's length.
const pruneEvery = time.Minute

// pruneTickets removes the expired tickets in tdir, at most once per
// pruneEvery (judged by the modification time of tdir/.pruned, one stat).
func pruneTickets(tdir string) {
	marker := filepath.Join(tdir, ".pruned")
	now := ticketNow()
	if fi, err := os.Lstat(marker); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < pruneEvery && fi.ModTime().Before(now.Add(time.Second)) {
		return
	}
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
		f.Close()
		os.Chtimes(marker, now, now)
	}
	entries, err := os.ReadDir(tdir)
	if err != nil {
		return
	}
	t := ticketNow().Unix()
	for _, de := range entries {
		if exp, ok := ticketExpiry(de.Name()); ok && exp < t {
			os.Remove(filepath.Join(tdir, de.Name()))
		}
	}
}

// shellSession is the agent session shell mode runs in, when the agent
// says: Claude Code gives its Bash commands CLAUDE_CODE_SESSION_ID (since
// 2.1.132, the session_id its hooks get; anthropics/claude-code#56879),
// else AGENT_SHIM_SESSION; "" when unknown.
func (e *env) shellSession() string {
	if s := e.getenv("CLAUDE_CODE_SESSION_ID"); s != "" {
		return s
	}
	return e.getenv("AGENT_SHIM_SESSION")
}

// takeTicket is shell mode's half: it finds a valid ticket for line (or
// for the command inside an agent's wrapper of it, see agents.Unwrap) in
// the working directory, spends it and returns it with the command it was
// for. No valid ticket is (nil, "", nil).
func (e *env) takeTicket(line string) (*ticket, string, error) {
	dir, err := stateDir(e.getenv)
	if err != nil {
		return nil, "", err
	}
	tdir := filepath.Join(dir, "tickets")
	entries, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading hook tickets: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("finding the working directory: %w", err)
	}
	wd = realDir(wd)
	cands := []string{line}
	if w, ok := agents.Unwrap(line, "", e.getenv); ok {
		cands = append(cands, w.Command)
	}
	session := e.shellSession()
	ppid := os.Getppid()
	for _, cmd := range cands {
		prefix := ticketName(wd, cmd) + "."
		for _, de := range entries {
			if !strings.HasPrefix(de.Name(), prefix) || strings.HasSuffix(de.Name(), ".taken") {
				continue
			}
			path := filepath.Join(tdir, de.Name())
			t, ok := readTicket(path)
			if !ok || t.Dir != wd || t.Command != cmd || ticketNow().Unix() > t.Expires ||
				session != "" && t.Session != "" && t.Session != session ||
				t.Kind == ticketAsk && !slices.Contains(t.PIDs, ppid) {
				continue
			}
			// Spend it: of two racing shells, one renames it.
			taken := path + ".taken"
			if err := os.Rename(path, taken); err != nil {
				continue
			}
			os.Remove(taken)
			return t, cmd, nil
		}
	}
	return nil, "", nil
}

// readTicket reads a ticket file.
func readTicket(path string) (*ticket, bool) {
	data, err := statefile.ReadRegular(path, statefile.MaxSmall)
	if err != nil {
		return nil, false
	}
	var t ticket
	if json.Unmarshal(data, &t) != nil {
		return nil, false
	}
	if t.Kind != ticketAsk && t.Kind != ticketSeen {
		return nil, false
	}
	return &t, true
}

// errUnseen is shell mode's refusal under agentShim.requireHook.
var errUnseen = errors.New("no hook call has seen this command (agentShim.requireHook): the agent's hook died, timed out or was bypassed")

// ticketGate is shell mode's use of tickets, before it decides cmd. It
// returns the line to decide (the command itself when the line is an
// agent's wrapper of a command the hook saw) and whether an ask ticket
// already approves it; a deny rule still refuses it. Under
// agentShim.requireHook a line without a ticket is refused.
func (e *env) ticketGate(cfg *lazyConfig, cmd string) (line string, approved bool, err error) {
	f, err := cfg.load()
	if err != nil {
		return "", false, err
	}
	requireHook := f.Shim.RequireHook
	t, inner, err := e.takeTicket(cmd)
	if err != nil {
		if requireHook {
			return "", false, err
		}
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
		return cmd, false, nil
	}
	if t == nil {
		if requireHook {
			return "", false, &runlayer.Hinted{Err: errUnseen, Hint: "check the hook with 'agent-shim doctor'"}
		}
		return cmd, false, nil
	}
	return inner, t.Kind == ticketAsk, nil
}
