package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agent-shim/agent-shim/gate"
)

// shim is a gate built for one tool call, with what the front ends keep
// around it: the config it was read from, the approval log and the session.
type shim struct {
	g       *gate.Gate
	config  string // absolute path of config.json
	audit   *lazyAudit
	session *session
}

// openOptions say what a gate is built for.
type openOptions struct {
	config   string // --config; "" is the agent's default
	cwd      string // the agent's working directory; "" is ours
	dir      string // where the call runs, if not cwd (relative to cwd)
	session  string // the session id; "" is AGENT_SHIM_SESSION, else the parent process
	prompter gate.Prompter
}

// open builds the gate for one call from config.json. The scope is the
// project: the checkout holding cwd (see projectRoot); outside a checkout
// it is empty, and every write asks.
//
// No user root is added to the scope: the agents' own directories hold
// their credentials (~/.codex/auth.json, ~/.gemini/oauth_creds.json,
// ~/.claude/.credentials.json) and the settings that install this hook, and
// a scope auto-approves reads and writes. agentShim.pathScope.allow adds
// what the user wants.
func (e *env) open(ctx context.Context, o openOptions) (*shim, error) {
	path, err := e.configPath(o.config)
	if err != nil {
		return nil, err
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("finding config.json: %w", err)
	}
	cwd := o.cwd
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
	if o.dir != "" {
		dir = o.dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	auditPath, err := gate.AuditPath(e.getenv)
	if err != nil {
		return nil, err
	}
	id := e.sessionID(o.session)
	s := &shim{config: path, audit: &lazyAudit{path: auditPath}, session: sessionOf(auditPath, id)}
	var scope *gate.Scope
	if root := e.projectRoot(cwd); root != "" {
		scope = gate.NewScope(root)
	}
	s.g, err = gate.Load(path, gate.Options{
		Scope:    scope,
		Prompter: o.prompter,
		Persist: func(tool, pattern string) error {
			return persistGrant(ctx, path, tool, pattern)
		},
		Audit:    s.audit,
		Session:  id,
		Dir:      dir,
		CacheDir: policyCopyDir(auditPath),
		Secrets:  []string{cacheKeyPath(auditPath)},
	})
	if err != nil {
		return nil, err
	}
	if err := s.session.replay(s.g, s.audit); err != nil {
		// Without the session's answers the gate only asks more: say so
		// and go on.
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
	}
	return s, nil
}

func (s *shim) close() { s.audit.Close() }

// sessionID is the agent's session id when it gives one, else
// AGENT_SHIM_SESSION, else the agent process: the shim's parent.
func (e *env) sessionID(given string) string {
	if given != "" {
		return given
	}
	if id := e.getenv("AGENT_SHIM_SESSION"); id != "" {
		return id
	}
	return "ppid-" + strconv.Itoa(os.Getppid())
}

// projectRoot returns the checkout holding dir: the nearest ancestor with
// .jiri_root/ (a jiri multi-repository tree), else the top of the git
// repository holding dir; "" outside a checkout. Never /, the home
// directory or an ancestor of it, whatever markers they hold (home is the
// user's ssh keys, shell startup files and the agents' credentials, not a
// project, and `mkdir ~/.jiri_root` must not make it one): such a marker
// is passed over.
func (e *env) projectRoot(dir string) string {
	home := ""
	if h := e.getenv("HOME"); filepath.IsAbs(h) {
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

// cacheKeyPath is the key earlier versions signed tickets and session
// files with. Nothing reads or makes it now (those files are trusted by
// their place in the protected state directory), but a key left on disk
// stays a secret: reading it asks, as the matcher's secrets say.
func cacheKeyPath(auditPath string) string {
	return filepath.Join(filepath.Dir(auditPath), "cache.key")
}

// policyCopyDir is where the gate keeps its compact copy of config.json's
// policy: in the state directory, beside the approval log. The copy
// decides as config.json does, so it lives where the agent cannot write:
// the state directory is a protected path and outside every run-time
// scope, which the user's cache directory is not (builds write there).
func policyCopyDir(auditPath string) string {
	return filepath.Join(filepath.Dir(auditPath), "policy")
}
