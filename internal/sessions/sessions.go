// Package sessions is what one agent session keeps across the shim's
// processes (each hook call and each shell line is a process of its own):
// the answers that last for the session, the calls hook mode answered
// "ask", the approval log, and the gate opened for one call with them
// (Open).
package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/statefile"
)

// LockWait bounds how long a person's own command (install, uninstall)
// waits for the lock of a file it edits.
const LockWait = 30 * time.Second

// The waits for a lock on the decision path. Any process that can read a
// lock file can hold its lock (flock needs no write access), one a line
// left behind included, so no call waits for one longer than a person
// would notice:
const (
	// AskWait bounds the hook's record of a call it answered ask, and of
	// its approval at post-tool-use: past it the record is lost (a
	// warning), never the answer.
	AskWait = 20 * time.Millisecond
	// RememberWait bounds shell mode's record of a session answer: past
	// it the answer holds for this line only (a warning).
	RememberWait = 50 * time.Millisecond
	// ConfigWait bounds the write of an "always" answer (and of
	// recommend's grants) into config.json: past it the answer is not
	// kept and the call does not run.
	ConfigWait = time.Second
)

// Audit is the approval log, opened on the first approval: most calls
// approve nothing and should not pay for opening it.
type Audit struct {
	Path string
	f    *os.File
	mute bool // replaying session answers: already logged
}

func (a *Audit) Write(p []byte) (int, error) {
	if a.mute {
		return len(p), nil
	}
	if a.f == nil {
		f, err := approvals.Open(a.Path)
		if err != nil {
			return 0, err
		}
		a.f = f
	}
	return a.f.Write(p)
}

func (a *Audit) Close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// A Session is what one agent session remembers across shim processes:
// each hook call and each shell command is a new process, so the answers
// "s" (this exact request) and "t" (this program or tool) are kept in a
// small file, $XDG_STATE_HOME/agent-shim/sessions/<id>.json, and replayed
// into each new gate. Hook mode also keeps there the calls it answered
// "ask", to recognise Claude Code's PostToolUse for them.
//
// Like tickets, a session file is trusted because of where it is (the
// state directory, a protected path outside every run-time scope), not
// by a MAC that any reader of its key could make.
type Session struct {
	ID   string
	Path string // its file
}

// File is the content of a session file.
type File struct {
	Approvals []gate.Approval `json:"approvals"` // the answers "session" and "tool"
	Asked     []AskedCall     `json:"asked"`
}

// AskedCall is a call hook mode answered "ask".
type AskedCall struct {
	ID   string    `json:"id,omitempty"` // the agent's tool_use_id
	Tool string    `json:"tool"`
	Key  string    `json:"key"`  // what was asked: the command or the path
	Call string    `json:"call"` // the tool and its input, to match a call without an id
	Time time.Time `json:"time"`
}

// AskedKeep is how long an asked call waits for its PostToolUse.
const AskedKeep = 24 * time.Hour

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

// Of returns the session store of id, under the state directory of
// the approval log.
func Of(auditPath, id string) *Session {
	name := id
	if !plainID(id) {
		sum := sha256.Sum256([]byte(id))
		name = "h-" + hex.EncodeToString(sum[:16])
	}
	return &Session{ID: id, Path: filepath.Join(filepath.Dir(auditPath), "sessions", name+".json")}
}

// Load reads the session file; a missing file is an empty session.
func (s *Session) Load() (*File, error) {
	data, err := statefile.ReadRegular(s.Path, statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", s.Path, err)
	}
	var sf File
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, fmt.Errorf("reading session %s: %v", s.Path, err)
	}
	return &sf, nil
}

// Update changes the session file under its lock, waiting for the lock
// at most wait, and writes it atomically.
func (s *Session) Update(ctx context.Context, wait time.Duration, change func(*File)) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	unlock, err := statefile.Lock(ctx, s.Path)
	if err != nil {
		return fmt.Errorf("updating session: %w", err)
	}
	defer unlock()
	sf, err := s.Load()
	if err != nil {
		return err
	}
	change(sf)
	if sf.Approvals == nil {
		sf.Approvals = []gate.Approval{}
	}
	if sf.Asked == nil {
		sf.Asked = []AskedCall{}
	}
	return statefile.WriteJSON(s.Path, sf, 0o600)
}

// Remember keeps a session or tool answer for the other processes of the
// session.
func (s *Session) Remember(ctx context.Context, req gate.Request, a gate.Answer) error {
	if a != gate.AnswerSession && a != gate.AnswerTool && a != gate.AnswerCommand {
		return nil
	}
	sa := gate.Approval{Tool: req.Tool, Key: req.Key, Decision: a.String(), Session: s.ID, By: gate.ByTerminal}
	switch a {
	case gate.AnswerTool:
		sa.Programs = req.Programs
	case gate.AnswerCommand:
		sa.Programs = req.Commands
	}
	return s.Update(ctx, RememberWait, func(sf *File) {
		if !slices.ContainsFunc(sf.Approvals, func(x gate.Approval) bool {
			return x.Tool == sa.Tool && x.Key == sa.Key && x.Decision == sa.Decision && slices.Equal(x.Programs, sa.Programs)
		}) {
			sf.Approvals = append(sf.Approvals, sa)
		}
	})
}

// replay applies the session's answers to a new gate, without logging
// them again.
func (s *Session) replay(g *gate.Gate, audit *Audit) error {
	sf, err := s.Load()
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
		case "command":
			a = gate.AnswerCommand
		default:
			continue // not a session answer: nothing to replay
		}
		req := gate.Request{Tool: sa.Tool, Key: sa.Key, Programs: sa.Programs, Commands: sa.Programs}
		if err := g.Apply(req, a); err != nil {
			return fmt.Errorf("replaying session %s: %w", s.Path, err)
		}
	}
	return nil
}

// PersistGrant saves an "always" answer as the user's own grant in
// config.json: a tool pattern (agentShim.tools.allow) or, without a tool,
// a path (agentShim.pathScope.allow). Both keys belong to the user and
// agents-setup keeps them; the write holds the lock agents-setup holds, so
// neither loses the other's change.
func PersistGrant(ctx context.Context, configPath, tool, pattern string) error {
	return UpdateConfig(ctx, configPath, func(f *config.File) bool {
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

// AddGrants adds grants to config.json's allow list as the user's own
// (through UpdateConfig): those not in any grant list yet are added, the
// rest kept as they are.
func AddGrants(ctx context.Context, configPath string, grants []string) (added, kept []string, err error) {
	err = UpdateConfig(ctx, configPath, func(f *config.File) bool {
		added, kept = nil, nil
		for _, g := range grants {
			if slices.Contains(f.Grants.Allow, g) || slices.Contains(f.Grants.Ask, g) || slices.Contains(f.Grants.Deny, g) {
				kept = append(kept, g)
				continue
			}
			added = append(added, g)
		}
		f.Grants.Allow = append(slices.Clone(f.Grants.Allow), added...)
		return len(added) > 0
	})
	return added, kept, err
}

// UpdateConfig changes config.json through config.Update, the one writer
// agents-setup shares: under the config's lock (waiting at most
// ConfigWait), atomically, keeping every key it does not touch, and
// writing through a symlinked config.json.
func UpdateConfig(ctx context.Context, configPath string, change func(*config.File) bool) error {
	ctx, cancel := context.WithTimeout(ctx, ConfigWait)
	defer cancel()
	return config.Update(ctx, configPath, func(f *config.File) (bool, error) { return change(f), nil })
}

// Ask records a call hook mode answered "ask" (and forgets the asked
// calls older than AskedKeep, and an earlier one of the same id).
func (s *Session) Ask(ctx context.Context, a AskedCall) error {
	return s.Update(ctx, AskWait, func(sf *File) {
		now := time.Now()
		sf.Asked = slices.DeleteFunc(sf.Asked, func(x AskedCall) bool {
			return now.Sub(x.Time) > AskedKeep || x.ID != "" && x.ID == a.ID
		})
		sf.Asked = append(sf.Asked, a)
	})
}

// StateDir is the shim's protected state directory: the directory of the
// approval log, $XDG_STATE_HOME/agent-shim.
func StateDir(getenv func(string) string) (string, error) {
	p, err := approvals.Path(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// Call is a gate built for one tool call, with what the front ends keep
// around it: the config it was read from, the approval log and the session.
type Call struct {
	Gate    *gate.Gate
	Config  string // absolute path of config.json
	Audit   *Audit
	Session *Session
}

// Options say what a gate is built for.
type Options struct {
	Config   string // --config; "" is the agent's default
	Cwd      string // the agent's working directory; "" is ours
	Dir      string // where the call runs, if not Cwd (relative to Cwd)
	Session  string // the session id; "" is AGENT_SHIM_SESSION, else the parent process
	Prompter gate.Prompter
	// Layer: the call's shell lines run under the run-time layer
	// (gate.Options.Layer); set only where that is known.
	Layer  bool
	Getenv func(string) string
	// Warn receives one line when the session's answers cannot be read
	// (the gate then only asks more).
	Warn io.Writer
}

// Open builds the gate for one call from config.json. The scope is the
// project: the checkout holding cwd (see ProjectRoot); outside a checkout
// it is empty, and every write asks.
//
// No user root is added to the scope: the agents' own directories hold
// their credentials (~/.codex/auth.json, ~/.gemini/oauth_creds.json,
// ~/.claude/.credentials.json) and the settings that install this hook, and
// a scope auto-approves reads and writes. agentShim.pathScope.allow adds
// what the user wants.
func Open(ctx context.Context, o Options) (*Call, error) {
	path := o.Config
	if path == "" {
		var err error
		if path, err = config.DefaultPath(o.Getenv); err != nil {
			return nil, err
		}
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("finding config.json: %w", err)
	}
	cwd := o.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("finding the working directory: %w", err)
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, fmt.Errorf("finding the working directory: %w", err)
	}
	// The real directory: a link's name says nothing of where it lands.
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	dir := cwd
	if o.Dir != "" {
		dir = o.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	auditPath, err := approvals.Path(o.Getenv)
	if err != nil {
		return nil, err
	}
	id := ID(o.Session, o.Getenv)
	c := &Call{Config: path, Audit: &Audit{Path: auditPath}, Session: Of(auditPath, id)}
	var scope *gate.Scope
	if root := ProjectRoot(cwd, o.Getenv); root != "" {
		scope = gate.NewScope(root)
	}
	c.Gate, err = gate.Load(path, gate.Options{
		Scope:    scope,
		Prompter: o.Prompter,
		Persist: func(tool, pattern string) error {
			return PersistGrant(ctx, path, tool, pattern)
		},
		Audit:    c.Audit,
		Session:  id,
		Dir:      dir,
		CacheDir: PolicyCopyDir(auditPath),
		Secrets:  []string{CacheKeyPath(auditPath)},
		Layer:    o.Layer,
	})
	if err != nil {
		return nil, err
	}
	if err := c.Session.replay(c.Gate, c.Audit); err != nil && o.Warn != nil {
		// Without the session's answers the gate only asks more: say so
		// and go on.
		fmt.Fprintf(o.Warn, "agent-shim: warning: %v\n", err)
	}
	return c, nil
}

// Close closes the approval log.
func (c *Call) Close() { c.Audit.Close() }

// ID is the agent's session id when it gives one, else
// AGENT_SHIM_SESSION, else the agent process: the shim's parent.
func ID(given string, getenv func(string) string) string {
	if given != "" {
		return given
	}
	if id := getenv("AGENT_SHIM_SESSION"); id != "" {
		return id
	}
	return "ppid-" + strconv.Itoa(os.Getppid())
}

// ProjectRoot returns the checkout holding dir: the nearest ancestor with
// .jiri_root/ (a jiri multi-repository tree), else the top of the git
// repository holding dir; "" outside a checkout. Never /, the home
// directory or an ancestor of it, whatever markers they hold (home is the
// user's ssh keys, shell startup files and the agents' credentials, not a
// project, and `mkdir ~/.jiri_root` must not make it one): such a marker
// is passed over.
func ProjectRoot(dir string, getenv func(string) string) string {
	home := ""
	if h := getenv("HOME"); filepath.IsAbs(h) {
		home = filepath.Clean(h)
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
	}
	git := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if !gate.UnsafeRoot(d, home) {
			if fi, err := os.Stat(filepath.Join(d, ".jiri_root")); err == nil && fi.IsDir() {
				return d
			}
			if git == "" {
				if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
					git = d
				}
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return git
}

// CacheKeyPath is the key earlier versions signed tickets and session
// files with. Nothing reads or makes it now (those files are trusted by
// their place in the protected state directory), but a key left on disk
// stays a secret: reading it asks, as the matcher's secrets say.
func CacheKeyPath(auditPath string) string {
	return filepath.Join(filepath.Dir(auditPath), "cache.key")
}

// PolicyCopyDir is where the gate keeps its compact copy of config.json's
// policy: in the state directory, beside the approval log. The copy
// decides as config.json does, so it lives where the agent cannot write:
// the state directory is a protected path and outside every run-time
// scope, which the user's cache directory is not (builds write there).
func PolicyCopyDir(auditPath string) string {
	return filepath.Join(filepath.Dir(auditPath), "policy")
}

// Grant is a session answer ("session": this exact call; "tool": every
// call of a tool or of programs) that lasts for its session, named by an
// ID for `agent-shim revoke`.
type Grant struct {
	ID string `json:"id"`
	gate.Approval
}

// grantID names a session answer: "s" and 8 hex digits of its digest.
func grantID(a gate.Approval) string {
	h := sha256.New()
	for _, f := range append([]string{a.Session, a.Tool, a.Key, a.Decision}, a.Programs...) {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return "s" + hex.EncodeToString(h.Sum(nil)[:4])
}

// Grants returns the session answers of every session in the state
// directory, by session file name order.
func Grants(stateDir string) ([]Grant, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "sessions", "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []Grant
	for _, p := range paths {
		s := &Session{Path: p}
		sf, err := s.Load()
		if err != nil {
			return out, err
		}
		for _, a := range sf.Approvals {
			out = append(out, Grant{ID: grantID(a), Approval: a})
		}
	}
	return out, nil
}

// RevokeGrant takes the session answer id back (see Grants): later calls
// of its session are decided without it. It returns the answer revoked.
func RevokeGrant(ctx context.Context, stateDir, id string) (*Grant, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "sessions", "*.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		s := &Session{Path: p}
		sf, err := s.Load()
		if err != nil || !slices.ContainsFunc(sf.Approvals, func(a gate.Approval) bool { return grantID(a) == id }) {
			continue
		}
		var gone *Grant
		err = s.Update(ctx, LockWait, func(f *File) {
			f.Approvals = slices.DeleteFunc(f.Approvals, func(a gate.Approval) bool {
				if grantID(a) == id {
					gone = &Grant{ID: id, Approval: a}
					return true
				}
				return false
			})
		})
		if err != nil {
			return nil, fmt.Errorf("revoking %s: %w", id, err)
		}
		if gone != nil {
			return gone, nil
		}
	}
	return nil, fmt.Errorf("no session answer %q", id)
}
