package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/statefile"
)

// lockWait bounds how long a write waits for the lock of config.json or of
// a session file. Past it the answer is not kept and the call does not run.
const lockWait = 30 * time.Second

// lazyAudit is the approval log, opened on the first approval: most calls
// approve nothing and should not pay for opening it.
type lazyAudit struct {
	path string
	f    *os.File
	mute bool // replaying session answers: already logged
}

func (a *lazyAudit) Write(p []byte) (int, error) {
	if a.mute {
		return len(p), nil
	}
	if a.f == nil {
		f, err := gate.OpenAudit(a.path)
		if err != nil {
			return 0, err
		}
		a.f = f
	}
	return a.f.Write(p)
}

func (a *lazyAudit) Close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// A session is what one agent session remembers across shim processes:
// each hook call and each shell command is a new process, so the answers
// "s" (this exact request) and "t" (this program or tool) are kept in a
// small file, $XDG_STATE_HOME/agent-shim/sessions/<id>.json, and replayed
// into each new gate. Hook mode also keeps there the calls it answered
// "ask", to recognise Claude Code's PostToolUse for them.
//
// Like tickets, a session file is trusted because of where it is (the
// state directory, a protected path outside every run-time scope), not
// by a MAC that any reader of its key could make.
type session struct {
	id   string
	path string
}

// sessionFile is the content of a session file.
type sessionFile struct {
	Approvals []gate.Approval `json:"approvals"` // the answers "session" and "tool"
	Asked     []askedCall     `json:"asked"`
}

// askedCall is a call hook mode answered "ask".
type askedCall struct {
	ID   string    `json:"id,omitempty"` // the agent's tool_use_id
	Tool string    `json:"tool"`
	Key  string    `json:"key"`  // what was asked: the command or the path
	Call string    `json:"call"` // the tool and its input, to match a call without an id
	Time time.Time `json:"time"`
}

// askedKeep is how long an asked call waits for its PostToolUse.
const askedKeep = 24 * time.Hour

// plainID reports whether a session id is usable as a file name as it is.
// (Not a regular expression: a counted repetition compiles into a large
// program at every start.)
func plainID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// sessionOf returns the session store of id, under the state directory of
// the approval log.
func sessionOf(auditPath, id string) *session {
	name := id
	if !plainID(id) {
		sum := sha256.Sum256([]byte(id))
		name = "h-" + hex.EncodeToString(sum[:16])
	}
	return &session{id: id, path: filepath.Join(filepath.Dir(auditPath), "sessions", name+".json")}
}

// load reads the session file; a missing file is an empty session.
func (s *session) load() (*sessionFile, error) {
	data, err := statefile.ReadRegular(s.path, statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return &sessionFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", s.path, err)
	}
	var sf sessionFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, fmt.Errorf("reading session %s: %v", s.path, err)
	}
	return &sf, nil
}

// update changes the session file under its lock and writes it atomically.
func (s *session) update(ctx context.Context, change func(*sessionFile)) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := statefile.Lock(ctx, s.path)
	if err != nil {
		return fmt.Errorf("updating session: %w", err)
	}
	defer unlock()
	sf, err := s.load()
	if err != nil {
		return err
	}
	change(sf)
	if sf.Approvals == nil {
		sf.Approvals = []gate.Approval{}
	}
	if sf.Asked == nil {
		sf.Asked = []askedCall{}
	}
	return statefile.WriteJSON(s.path, sf, 0o600)
}

// remember keeps a session or tool answer for the other processes of the
// session.
func (s *session) remember(ctx context.Context, req gate.Request, a gate.Answer) error {
	if a != gate.AnswerSession && a != gate.AnswerTool {
		return nil
	}
	sa := gate.Approval{Tool: req.Tool, Key: req.Key, Decision: a.String(), Session: s.id, By: gate.ByTerminal}
	if a == gate.AnswerTool {
		sa.Programs = req.Programs
	}
	return s.update(ctx, func(sf *sessionFile) {
		if !slices.ContainsFunc(sf.Approvals, func(x gate.Approval) bool {
			return x.Tool == sa.Tool && x.Key == sa.Key && x.Decision == sa.Decision && slices.Equal(x.Programs, sa.Programs)
		}) {
			sf.Approvals = append(sf.Approvals, sa)
		}
	})
}

// replay applies the session's answers to a new gate, without logging
// them again.
func (s *session) replay(g *gate.Gate, audit *lazyAudit) error {
	sf, err := s.load()
	if err != nil {
		return err
	}
	audit.mute = true
	defer func() { audit.mute = false }()
	for _, sa := range sf.Approvals {
		var a gate.Answer
		switch sa.Decision {
		case "session":
			a = gate.AnswerSession
		case "tool":
			a = gate.AnswerTool
		default:
			continue // not a session answer: nothing to replay
		}
		req := gate.Request{Tool: sa.Tool, Key: sa.Key, Programs: sa.Programs}
		if err := g.Apply(req, a); err != nil {
			return fmt.Errorf("replaying session %s: %w", s.path, err)
		}
	}
	return nil
}

// persistGrant saves an "always" answer as the user's own grant in
// config.json: a tool pattern (agentShim.tools.allow) or, without a tool,
// a path (agentShim.pathScope.allow). Both keys belong to the user and
// agents-setup keeps them; the write holds the lock agents-setup holds, so
// neither loses the other's change.
func persistGrant(ctx context.Context, configPath, tool, pattern string) error {
	return updateConfig(ctx, configPath, func(f *config.File) bool {
		if tool == "" {
			if slices.Contains(f.Shim.PathScope.Allow, pattern) {
				return false
			}
			f.Shim.PathScope.Allow = append(slices.Clone(f.Shim.PathScope.Allow), pattern)
			return true
		}
		p := tool + ":" + pattern
		if slices.Contains(f.Shim.Tools.Allow, p) {
			return false
		}
		f.Shim.Tools.Allow = append(slices.Clone(f.Shim.Tools.Allow), p)
		return true
	})
}

// updateConfig changes config.json through config.Update, the one writer
// agents-setup shares: under the config's lock, atomically, keeping every
// key it does not touch, and writing through a symlinked config.json.
func updateConfig(ctx context.Context, configPath string, change func(*config.File) bool) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	return config.Update(ctx, configPath, func(f *config.File) (bool, error) { return change(f), nil })
}
