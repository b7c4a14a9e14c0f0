// Package tickets is how the hook and shell mode work together, failing
// closed.
//
// Each hook call that decides a shell command and does not deny it leaves a
// single-use ticket in the shim's state directory,
// $XDG_STATE_HOME/agent-shim/tickets/: the agent, the session, the
// directory the command runs in, the exact command and an expiry
// (TTL). A ticket is trusted because of where it is: the state
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
//     (see WantSeen).
//
// With agentShim.requireHook, shell mode refuses (exit 126) a line with no
// ticket: the hook died, timed out or was bypassed, which the agents all
// treat as "go ahead".
//
// Tickets are files of mode 0600 named by a digest of the directory and
// the command, their expiry and a nonce. Taking one renames it first, so of two
// shells racing for it exactly one wins; it is then removed. Expired
// tickets are removed whenever a ticket is written.
package tickets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/statefile"
)

// TTL is how long a ticket stays valid after the hook call.
const TTL = 10 * time.Minute

// The kinds of tickets.
const (
	Ask  = "ask"
	Seen = "seen"
)

// Ticket is one ticket file's content.
type Ticket struct {
	Kind    string `json:"kind"`
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Dir     string `json:"dir"`
	Command string `json:"command"`
	Expires int64  `json:"expires"` // Unix seconds
	PIDs    []int  `json:"pids,omitempty"`
	Nonce   string `json:"nonce"`
}

// Store is the ticket directory of the shim's state directory.
type Store struct {
	// Dir is the shim's state directory; the tickets are in its
	// tickets/.
	Dir string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (s Store) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// KindFor is the ticket a hook's decision d of a shell call leaves: "seen"
// for Allow, "ask" for what the agent's own prompt settles (Default, or
// Ask when the agent asks its person, agentAsks), none ("") for the rest.
func KindFor(d gate.Decision, agentAsks bool) string {
	switch d.Verdict {
	case gate.Allow:
		return Seen
	case gate.Ask:
		if agentAsks { // the agent asks its person; others were answered deny
			return Ask
		}
	case gate.Default:
		return Ask // left to the agent's own permission rules
	}
	return ""
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

// RealDir resolves dir's symbolic links, so that the hook's idea of the
// directory and the shell's agree; "" when it cannot.
func RealDir(dir string) string {
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

// Ancestors returns the parent and grandparent process of this process, as
// far as the system tells (0 where it does not).
func Ancestors() []int {
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

// WantSeen reports whether the hook should leave "seen" tickets for
// the calls it allows: only shell mode under agentShim.requireHook reads
// them, and writing a file on every allowed call is most of a hook call's
// cost. The setting comes from what the gate loaded; a gate that does not
// know it (a compact copy without the shim's settings) leaves them, as
// the setting might be on.
func WantSeen(g *gate.Gate) bool {
	h, known := g.Host()
	on := h.RequireHook
	return on || !known
}

// Record is hook mode's half: it leaves a ticket for a shell call c of
// agent ag that the hook decided d and did not deny. Other tools, and
// denied calls, leave none.
func (s Store) Record(ag *agents.Agent, c *gate.Call, d gate.Decision) error {
	if !gate.IsCommandTool(c.ToolName) {
		return nil
	}
	kind := KindFor(d, ag.Asks)
	if kind == "" {
		return nil
	}
	cmd, err := c.Command()
	if err != nil {
		return err
	}
	t := Ticket{Kind: kind, Agent: ag.Name, Session: c.SessionID, Dir: RealDir(c.Dir()), Command: cmd}
	if t.Dir == "" { // no cwd given: the agent runs its hooks where it works
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the working directory: %w", err)
		}
		t.Dir = RealDir(wd)
	}
	return s.Leave(t)
}

// Leave writes t (its expiry and nonce filled in; an ask ticket bound to
// this process's parent and grandparent) and removes expired tickets.
func (s Store) Leave(t Ticket) error {
	t.Expires = s.now().Add(TTL).Unix()
	if t.Kind == Ask {
		t.PIDs = Ancestors()
	}
	// The nonce only keeps two tickets' names apart (O_EXCL refuses a
	// name taken): it guards nothing, so it comes from the runtime's
	// generator, not from a system call.
	var nonce [12]byte
	binary.LittleEndian.PutUint64(nonce[:], rand.Uint64())
	binary.LittleEndian.PutUint32(nonce[8:], rand.Uint32())
	t.Nonce = hex.EncodeToString(nonce[:])
	data, err := t.marshal()
	if err != nil {
		return err
	}
	tdir := filepath.Join(s.Dir, "tickets")
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return fmt.Errorf("writing a hook ticket: %w", err)
	}
	s.prune(tdir)
	name := fmt.Sprintf("%s.%d.%s", ticketName(t.Dir, t.Command), t.Expires, t.Nonce)
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

// marshal writes what json.Marshal writes of t (TestMarshal), spelled
// out: encoding/json reads only the strings, which costs a hook process
// less than reflecting on the struct the first time.
func (t *Ticket) marshal() ([]byte, error) {
	b := []byte(`{"kind":`)
	var err error
	str := func(s string) {
		if err == nil {
			var q []byte
			q, err = json.Marshal(s)
			b = append(b, q...)
		}
	}
	str(t.Kind)
	b = append(b, `,"agent":`...)
	str(t.Agent)
	if t.Session != "" {
		b = append(b, `,"session":`...)
		str(t.Session)
	}
	b = append(b, `,"dir":`...)
	str(t.Dir)
	b = append(b, `,"command":`...)
	str(t.Command)
	b = append(b, `,"expires":`...)
	b = strconv.AppendInt(b, t.Expires, 10)
	if len(t.PIDs) > 0 {
		b = append(b, `,"pids":[`...)
		for i, p := range t.PIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	b = append(b, `,"nonce":`...)
	str(t.Nonce)
	return append(b, '}'), err
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

// pruneEvery is how often prune reads the directory: a busy
// session leaves a ticket per call, and reading them all on every hook
// call would make each call pay for the session's length.
const pruneEvery = time.Minute

// prune removes the expired tickets in tdir, at most once per
// pruneEvery (judged by the modification time of tdir/.pruned, one stat).
func (s Store) prune(tdir string) {
	marker := filepath.Join(tdir, ".pruned")
	now := s.now()
	if fi, err := os.Lstat(marker); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < pruneEvery && fi.ModTime().Before(now.Add(time.Second)) {
		return
	}
	// Never waiting on a FIFO planted in its place, nor through a link.
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|statefile.NoWait, 0o600); err == nil {
		fi, err := f.Stat()
		f.Close()
		if err == nil && fi.Mode().IsRegular() {
			os.Chtimes(marker, now, now)
		}
	}
	entries, err := os.ReadDir(tdir)
	if err != nil {
		return
	}
	t := s.now().Unix()
	for _, de := range entries {
		if exp, ok := ticketExpiry(de.Name()); ok && exp < t {
			os.Remove(filepath.Join(tdir, de.Name()))
		}
	}
}

// TakeLine is shell mode's half: it takes a valid ticket for line (or for
// the command inside an agent's wrapper of it, agents.Unwrap) in the
// working directory, for the agent session the environment names
// (Session) and this process's parent, the agent.
func (s Store) TakeLine(line string, getenv func(string) string) (*Ticket, string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("finding the working directory: %w", err)
	}
	cands := []string{line}
	if w, ok := agents.Unwrap(line, "", getenv); ok {
		cands = append(cands, w.Command)
	}
	return s.Take(cands, wd, Session(getenv), os.Getppid())
}

// Session is the agent session shell mode runs in, when the agent says:
// Claude Code gives its Bash commands CLAUDE_CODE_SESSION_ID (since
// 2.1.132, the session_id its hooks get; anthropics/claude-code#56879),
// else AGENT_SHIM_SESSION; "" when unknown.
func Session(getenv func(string) string) string {
	if s := getenv("CLAUDE_CODE_SESSION_ID"); s != "" {
		return s
	}
	return getenv("AGENT_SHIM_SESSION")
}

// Take finds a valid ticket for one of the commands cands (a line, then
// the command inside an agent's wrapper of it) in the working directory
// wd, for the agent session session ("" when unknown) and, for an ask
// ticket, the agent process ppid; spends it and returns it with the
// command it was for. No valid ticket is (nil, "", nil).
func (s Store) Take(cands []string, wd, session string, ppid int) (*Ticket, string, error) {
	tdir := filepath.Join(s.Dir, "tickets")
	entries, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading hook tickets: %w", err)
	}
	wd = RealDir(wd)
	for _, cmd := range cands {
		prefix := ticketName(wd, cmd) + "."
		for _, de := range entries {
			if !strings.HasPrefix(de.Name(), prefix) || strings.HasSuffix(de.Name(), ".taken") {
				continue
			}
			path := filepath.Join(tdir, de.Name())
			t, ok := read(path)
			if !ok || t.Dir != wd || t.Command != cmd || s.now().Unix() > t.Expires ||
				session != "" && t.Session != "" && t.Session != session ||
				t.Kind == Ask && !slices.Contains(t.PIDs, ppid) {
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

// read reads a ticket file.
func read(path string) (*Ticket, bool) {
	data, err := statefile.ReadRegular(path, statefile.MaxSmall)
	if err != nil {
		return nil, false
	}
	var t Ticket
	if json.Unmarshal(data, &t) != nil {
		return nil, false
	}
	if t.Kind != Ask && t.Kind != Seen {
		return nil, false
	}
	return &t, true
}
