package gate

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The policy protects itself. What the agent may change must never change
// what the agent may do, so writes to these paths are at least Ask in
// every mode and at every level, however the write is spelled (a file
// tool, a shell redirection, a program's output file, `git config`), and
// whatever tool patterns or session answers say (only a person's answer
// for the exact call lifts it):
//
//   - anywhere: the policy manifests (`.agents/config/**`, in the checkout
//     and in every overlay), `.git/config`, `.git/config.worktree`,
//     `.git/hooks/**`, `.git/info/attributes` (and the same in
//     `.git/modules/**` and `.git/worktrees/**`), a `.git` file itself,
//     `.gitattributes`, `.gitmodules`, the agents' project settings and
//     hooks (`.claude/settings*.json`, `.claude/hooks/**`,
//     `.gemini/settings.json`, `.codex/**`);
//   - in the home directory: every agent's user settings (`~/.claude/…`,
//     `~/.gemini/**`, `~/.codex/**`), the shell startup files, `~/.ssh/**`,
//     `~/.gitconfig`, `~/.config/git/**`, `~/.config/fish/**`;
//   - the config, state, cache and log directories of agent-shim and
//     agents-setup (XDG), the agent's config directory ($GEMINI_CONFIG_DIR,
//     $GEMINI_HOME), and the config.json a gate was loaded from.
//
// Paths are judged as named and as resolved (links and `..` followed, see
// Scope), so a link into a protected path is protected, and without case,
// for case-insensitive file systems.

// The shim's own state directory (approvals, hook tickets, session
// answers, the compact copy of the policy) is more than protected: no
// tool call of an agent may write it, whoever answers. What is there
// approves calls, and an agent must never approve itself (see
// refusedState).

// homeFiles are the protected files of the home directory.
var homeFiles = []string{
	".bashrc", ".bash_profile", ".profile", ".bash_login", ".bash_logout", ".bash_aliases",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".inputrc", ".kshrc", ".mkshrc",
	".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xsessionrc", ".pam_environment",
	".gitconfig", ".git-credentials", ".netrc", ".npmrc", ".pypirc",
}

// homeTrees are the protected directories of the home directory.
var homeTrees = []string{
	".ssh", ".gnupg", ".config/git", ".config/fish", ".config/environment.d", ".config/systemd/user",
	".gemini", ".codex", ".claude", ".config/agent-shim", ".config/agents-setup",
	".local/state/agent-shim", ".local/state/agents-setup", ".cache/agent-shim", ".cache/agents-setup",
}

// protector knows the protected paths of one gate. It is built without a
// look at the file system (New runs before every command); the paths are
// resolved only when a write is first checked, and only when the target
// is none of them as named (see check).
type protector struct {
	namedOnce sync.Once
	named     protList // as named: HOME, the variables and files cleaned

	once sync.Once
	full protList // named plus every path resolved, built by resolve

	// What resolve needs: the environment as New saw it.
	homeDir string // HOME, cleaned; "" when unknown
	envDirs []string
	extra   []string

	stateOnce sync.Once
	state     []string // the shim's state directory, as named and resolved (see refusedState)
}

// protList is a list of protected paths, lower-cased.
type protList struct {
	trees []string // clean absolute directories, protected with all below
	files []string // clean absolute files
}

func (l *protList) addTree(d string) {
	d = strings.ToLower(d)
	if !slices.Contains(l.trees, d) {
		l.trees = append(l.trees, d)
	}
}

func (l *protList) addFile(f string) {
	f = strings.ToLower(f)
	if !slices.Contains(l.files, f) {
		l.files = append(l.files, f)
	}
}

// systemFiles are the protected files outside the home directory.
var systemFiles = []string{"/etc/gitconfig", "/etc/bash.bashrc", "/etc/profile", "/etc/zsh/zshenv"}

// newProtector builds the list from the environment: HOME and the XDG and
// agent variables. files are more protected files (a gate's config.json).
// It reads the environment only; the file system is looked at when a
// write is checked.
func newProtector(files ...string) *protector {
	p := &protector{}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		p.homeDir = filepath.Clean(h)
	}
	for _, v := range []struct{ env, sub string }{
		{"XDG_STATE_HOME", "agent-shim"}, {"XDG_STATE_HOME", "agents-setup"},
		{"XDG_CACHE_HOME", "agent-shim"}, {"XDG_CACHE_HOME", "agents-setup"},
		{"XDG_CONFIG_HOME", "agent-shim"}, {"XDG_CONFIG_HOME", "agents-setup"},
		{"XDG_CONFIG_HOME", "git"}, {"XDG_CONFIG_HOME", "fish"},
		{"GEMINI_CONFIG_DIR", ""}, {"GEMINI_HOME", ""}, {"CODEX_HOME", ""}, {"CLAUDE_CONFIG_DIR", ""},
	} {
		if d := os.Getenv(v.env); d != "" && filepath.IsAbs(d) {
			p.envDirs = append(p.envDirs, filepath.Join(d, v.sub))
		}
	}
	for _, f := range files {
		if f != "" && filepath.IsAbs(f) {
			p.extra = append(p.extra, f)
		}
	}
	return p
}

// stateDirs are the shim's state directory as named ($XDG_STATE_HOME or
// ~/.local/state, /agent-shim) and resolved, lower-cased.
func (p *protector) stateDirs() []string {
	p.stateOnce.Do(func() {
		var dirs []string
		if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, filepath.Join(d, "agent-shim"))
		}
		if p.homeDir != "" {
			dirs = append(dirs, filepath.Join(p.homeDir, ".local", "state", "agent-shim"))
		}
		for _, d := range dirs {
			for _, x := range []string{filepath.Clean(d), resolved(d)} {
				if x = strings.ToLower(x); !slices.Contains(p.state, x) {
					p.state = append(p.state, x)
				}
			}
		}
	})
	return p.state
}

// refusedState returns why a write to named (as the call names it; real
// resolved) is never allowed: it lands in the shim's state directory,
// where the approvals, tickets and session answers that approve calls
// live. "" when it does not.
func (p *protector) refusedState(named, real string) string {
	if p == nil {
		return ""
	}
	for _, x := range []string{strings.ToLower(real), strings.ToLower(filepath.Clean(named))} {
		for _, d := range p.stateDirs() {
			if within(x, d) {
				return "never allowed for an agent: writes " + filepath.Clean(named) + ", in agent-shim's state directory, where approvals, tickets and session answers live (an agent cannot approve itself)"
			}
		}
	}
	return ""
}

// namedList builds the list as named once, on the first check.
func (p *protector) namedList() *protList {
	p.namedOnce.Do(func() { p.named = p.list(p.homeDir, false) })
	return &p.named
}

// list returns the protected paths with home as the home directory, each
// also resolved when withResolved is set.
func (p *protector) list(home string, withResolved bool) protList {
	var l protList
	tree := func(d string) {
		l.addTree(filepath.Clean(d))
		if withResolved {
			l.addTree(resolved(d))
		}
	}
	file := func(f string) {
		l.addFile(filepath.Clean(f))
		if withResolved {
			l.addFile(resolved(f))
		}
	}
	if home != "" {
		for _, t := range homeTrees {
			d := filepath.Join(home, t)
			l.addTree(d)
			if withResolved {
				// home is resolved: only the components below it
				// need a look.
				if r, ok := resolveFrom(home, t); ok {
					l.addTree(r)
				} else {
					l.addTree(d)
				}
			}
		}
		for _, f := range homeFiles {
			// The file as named in the (resolved) home directory:
			// a link there into a dotfiles checkout is the link
			// that is protected.
			l.addFile(filepath.Join(home, f))
		}
	}
	for _, d := range p.envDirs {
		tree(d)
	}
	for _, f := range systemFiles {
		file(f)
	}
	for _, f := range p.extra {
		file(f)
	}
	return l
}

// resolve builds the full list once: the named list, and every path again
// with the home directory and then the path itself resolved.
func (p *protector) resolve() *protList {
	p.once.Do(func() {
		home := ""
		if p.homeDir != "" {
			home = resolved(p.homeDir)
		}
		p.full = p.list(home, true)
		named := p.namedList()
		for _, t := range named.trees {
			p.full.addTree(t)
		}
		for _, f := range named.files {
			p.full.addFile(f)
		}
	})
	return &p.full
}

// resolved is the path a file operation on abs touches (see resolve); abs
// itself, cleaned, when it cannot be resolved.
func resolved(abs string) string {
	if r, ok := resolve(abs); ok {
		return r
	}
	return filepath.Clean(abs)
}

// check returns what protected path a write to named (absolute, as the
// call names it) lands in, given real, the same path resolved; "" when
// neither is protected. The paths are first compared with the protected
// paths as named, which needs no look at the file system; only a path
// that is none of them is compared with the protected paths resolved
// (built on first use), so that a link into a protected path, or a
// protected path that is a link, is still caught.
func (p *protector) check(named, real string) string {
	if p == nil {
		return ""
	}
	for _, l := range []func() *protList{p.namedList, p.resolve} {
		list := l()
		for _, x := range []string{real, filepath.Clean(named)} {
			// Compared without case: on a case-insensitive file system
			// (macOS, Windows shares) .GIT/CONFIG is .git/config.
			if why := list.checkOne(strings.ToLower(x)); why != "" {
				return x + why
			}
		}
	}
	return ""
}

// checkOne returns what protected path x (lower-cased) is, as a note
// to follow the path; "" when it is none.
func (l *protList) checkOne(x string) string {
	for _, t := range l.trees {
		if within(x, t) {
			return " (under " + t + ")"
		}
	}
	xd, xb := filepath.Split(x)
	for _, f := range l.files {
		if x == f || len(xd) < len(f) && f[:len(xd)] == xd && siblingOf(xb, f[len(xd):]) {
			return " (protected file)"
		}
	}
	if why := protectedComponents(x); why != "" {
		return " (" + why + ")"
	}
	return ""
}

// siblingOf reports whether name is a lock or temporary file of file.
func siblingOf(name, file string) bool {
	return strings.HasPrefix(name, file+".") || strings.HasPrefix(name, "."+file)
}

// protectedComponents returns what a path is by its components, wherever
// it lies: a policy manifest, git's configuration or hooks, an agent's
// project settings; "" otherwise.
func protectedComponents(x string) string {
	parts := strings.Split(x, "/")
	for i, c := range parts {
		rest := parts[i+1:]
		switch c {
		case ".agents":
			if len(rest) > 0 && rest[0] == "config" {
				return "a policy manifest"
			}
		case ".git":
			if gitProtected(rest) {
				return "git's configuration or hooks"
			}
		case ".gitattributes", ".gitmodules":
			if len(rest) == 0 {
				return "git's " + c
			}
		case ".claude":
			if len(rest) > 0 && (rest[0] == "hooks" || len(rest) == 1 && matchName("settings*.json", rest[0])) {
				return "Claude Code's settings or hooks"
			}
		case ".gemini":
			if len(rest) > 0 && (rest[0] == "settings.json" || rest[0] == "hooks") {
				return "Gemini CLI's settings or hooks"
			}
		case ".codex":
			if len(rest) > 0 {
				return "Codex's configuration"
			}
		}
	}
	return ""
}

// gitProtected reports whether rest, the components below a .git
// directory, name its configuration, hooks or attributes (also of a
// submodule or a worktree); an empty rest is the .git entry itself, which
// as a file (`gitdir: …`) points git at another configuration.
func gitProtected(rest []string) bool {
	if len(rest) == 0 {
		return true
	}
	switch rest[0] {
	case "config", "config.worktree", "hooks", "commondir":
		return true
	case "info":
		return len(rest) > 1 && rest[1] == "attributes"
	case "modules", "worktrees":
		for _, c := range rest[1:] {
			if c == "config" || c == "config.worktree" || c == "hooks" || c == "commondir" || c == "gitdir" {
				return true
			}
		}
	}
	return false
}

func matchName(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}
