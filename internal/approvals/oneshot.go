package approvals

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
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/tickets"
	"github.com/agent-shim/agent-shim/statefile"
)

// One-shot approvals reach a person where the agent cannot ask (Codex,
// Gemini CLI, Claude Code in bypass mode): the hook answers a call it
// would ask about with a refusal whose hint names an id, and records the
// call as pending; the person runs `agent-shim approve <id>` from a
// terminal of their own, which approves that call; the agent's retry of
// the exact call (the same agent session, tool, command or path, and
// directory) then runs, once. Pending and approved calls expire.
//
// They live in the shim's state directory (approvals/), which no tool
// call of an agent may write (the gate refuses it in every mode) and the
// run-time layer keeps out of the tree's reach: an agent cannot approve
// itself. The command that approves is refused to agents too, and refuses
// to run where the agent that asked is among its ancestors.

// OneShotTTL is how long a pending call waits for its approval, and how
// long an approval waits for the agent's retry.
const OneShotTTL = 10 * time.Minute

// OneShot is one call the hook asked a person about through agent-shim
// approve: pending until approved, then spent by the agent's retry.
type OneShot struct {
	// ID is what the person types: agent-shim approve <id>.
	ID string `json:"id"`
	// The call: the agent, its session, the tool, its command line or
	// path (Key, exactly as the agent gave it) and the directory it
	// runs in.
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Tool    string `json:"tool"`
	Key     string `json:"key"`
	Dir     string `json:"cwd"`
	// Reason is why the hook asked.
	Reason string `json:"reason"`
	// Asked is when the hook asked; Expires when this record ends.
	Asked   time.Time `json:"asked"`
	Expires time.Time `json:"expires"`
	// Procs are the agent's processes (its hook's parent and
	// grandparent, with their start times): the approve command refuses
	// to run below them.
	Procs []Proc `json:"procs,omitempty"`
	// Approval is the person's approval; nil while pending.
	Approval *gate.Approval `json:"approval,omitempty"`
}

// Proc names a process: its id and its start time (which tells it from a
// later process with the same id).
type Proc struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

// maxProcs bounds the processes Procs and Below look at.
const maxProcs = 16

// Procs returns the agent's processes as a hook call sees them: its
// ancestors, with their start times, up to the first that leads a session
// (the agent itself when it runs in a session of its own, else the shell
// of the terminal it was started from), none where the system does not
// tell. The person's own terminal, where they approve, is another
// session: its processes are not among them.
func Procs() []Proc {
	var out []Proc
	pid := os.Getppid()
	for range maxProcs {
		if pid <= 1 {
			break
		}
		start, parent, session, ok := tickets.Process(pid)
		if !ok {
			break
		}
		out = append(out, Proc{PID: pid, Start: start})
		if session == pid {
			break
		}
		pid = parent
	}
	return out
}

// Below reports whether this process runs below one of the agent's
// processes that asked for o: an approval from there would be the agent
// approving itself.
func (o *OneShot) Below() bool {
	pid := os.Getppid()
	for range 4 * maxProcs {
		if pid <= 1 {
			return false
		}
		start, parent, _, ok := tickets.Process(pid)
		if !ok {
			return false
		}
		if slices.Contains(o.Procs, Proc{PID: pid, Start: start}) {
			return true
		}
		pid = parent
	}
	return false
}

// Pending reports whether o waits for a person.
func (o *OneShot) Pending() bool { return o.Approval == nil }

// OneShots are the one-shot approvals of a state directory.
type OneShots struct {
	// Dir is the shim's state directory; the records are in its
	// approvals/.
	Dir string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (s OneShots) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s OneShots) dir() string { return filepath.Join(s.Dir, "approvals") }

// callName is the file name prefix of the records of one call.
func callName(agent, session, tool, key, dir string) string {
	h := sha256.New()
	for _, f := range []string{"agent-shim one-shot", agent, session, tool, key, dir} {
		h.Write(binary.AppendUvarint(nil, uint64(len(f))))
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Record states.
const (
	pendingExt  = ".pending"
	approvedExt = ".approved"
)

// idChars spell ids: no vowels (no words), no 0/1/l (no misreading).
const idChars = "bcdfghjkmnpqrstvwxz23456789"

func newID() string {
	var b [8]byte
	for i := range b {
		b[i] = idChars[rand.IntN(len(idChars))]
	}
	return string(b[:])
}

// Ask records the call o as pending (its ID, Asked and Expires filled
// in), or returns the call's pending record already there: one id per
// call while it waits.
func (s OneShots) Ask(o OneShot) (OneShot, error) {
	prefix := callName(o.Agent, o.Session, o.Tool, o.Key, o.Dir) + "."
	all, err := s.read()
	if err != nil {
		return o, err
	}
	for _, r := range all {
		if strings.HasPrefix(r.file, prefix) && r.Pending() {
			return r.OneShot, nil
		}
	}
	if err := os.MkdirAll(s.dir(), 0o700); err != nil {
		return o, fmt.Errorf("recording the call to approve: %w", err)
	}
	o.Asked = s.now().UTC()
	o.Expires = o.Asked.Add(OneShotTTL)
	for range 3 {
		o.ID = newID()
		err = s.create(prefix+o.ID+pendingExt, o)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return o, fmt.Errorf("recording the call to approve: %w", err)
	}
	return o, nil
}

// create writes a new record file, never over another.
func (s OneShots) create(name string, o OneShot) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir(), name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|statefile.NoWait, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// record is a record file read.
type record struct {
	OneShot
	file string
}

// read reads every record that has not expired, removing the expired
// ones, oldest first.
func (s OneShots) read() ([]record, error) {
	entries, err := os.ReadDir(s.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading approvals: %w", err)
	}
	now := s.now()
	var out []record
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, pendingExt) && !strings.HasSuffix(name, approvedExt) {
			continue
		}
		path := filepath.Join(s.dir(), name)
		data, err := statefile.ReadRegular(path, statefile.MaxSmall)
		if err != nil {
			continue
		}
		var r record
		if json.Unmarshal(data, &r.OneShot) != nil || r.ID == "" || !strings.Contains(name, "."+r.ID+".") {
			continue
		}
		if now.After(r.Expires) {
			os.Remove(path)
			continue
		}
		// A record's state is its name: content that says otherwise
		// is not trusted.
		if strings.HasSuffix(name, pendingExt) {
			r.Approval = nil
		} else if r.Approval == nil {
			continue
		}
		r.file = name
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b record) int { return a.Asked.Compare(b.Asked) })
	return out, nil
}

// List returns the one-shot approvals that have not expired, pending and
// approved, oldest first.
func (s OneShots) List() ([]OneShot, error) {
	rs, err := s.read()
	out := make([]OneShot, len(rs))
	for i, r := range rs {
		out[i] = r.OneShot
	}
	return out, err
}

// find returns the record of id.
func (s OneShots) find(id string) (*record, error) {
	rs, err := s.read()
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.ID == id {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("no pending call %q (it may have expired: the agent's retry asks again, with a new id)", id)
}

// Approve approves the pending call id, for its agent's retry within
// OneShotTTL: by says through what (gate.ByTerminal).
func (s OneShots) Approve(id, by string) (*OneShot, error) {
	r, err := s.find(id)
	if err != nil {
		return nil, err
	}
	if !r.Pending() {
		return &r.OneShot, nil // approved already
	}
	now := s.now().UTC()
	o := r.OneShot
	o.Expires = now.Add(OneShotTTL)
	o.Approval = &gate.Approval{Tool: o.Tool, Key: o.Key, Decision: gate.AnswerOnce.String(), Time: now,
		Session: o.Session, By: by, Dir: o.Dir, Expires: o.Expires}
	name := strings.TrimSuffix(r.file, pendingExt) + approvedExt
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	if err := statefile.WriteAtomic(filepath.Join(s.dir(), name), data, 0o600); err != nil {
		return nil, fmt.Errorf("approving %s: %w", id, err)
	}
	os.Remove(filepath.Join(s.dir(), r.file))
	return &o, nil
}

// Revoke takes back the one-shot approval id, pending or approved.
func (s OneShots) Revoke(id string) (*OneShot, error) {
	r, err := s.find(id)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(s.dir(), r.file)); err != nil {
		return nil, fmt.Errorf("revoking %s: %w", id, err)
	}
	return &r.OneShot, nil
}

// Take spends the approval of the call (agent, session, tool, key, dir),
// when a person approved it and it has not expired: of two racing
// retries, one gets it. nil when there is none.
func (s OneShots) Take(agent, session, tool, key, dir string) (*OneShot, error) {
	prefix := callName(agent, session, tool, key, dir) + "."
	entries, err := os.ReadDir(s.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading approvals: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, approvedExt) {
			continue
		}
		path := filepath.Join(s.dir(), name)
		data, err := statefile.ReadRegular(path, statefile.MaxSmall)
		if err != nil {
			continue
		}
		var o OneShot
		if json.Unmarshal(data, &o) != nil || o.Approval == nil || o.Agent != agent || o.Session != session ||
			o.Tool != tool || o.Key != key || o.Dir != dir || s.now().After(o.Expires) {
			continue
		}
		taken := path + ".taken"
		if os.Rename(path, taken) != nil {
			continue
		}
		os.Remove(taken)
		return &o, nil
	}
	return nil, nil
}
