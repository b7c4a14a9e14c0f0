package gate

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
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

// protector knows the protected paths of one gate.
type protector struct {
	home  string   // resolved; "" when unknown
	trees []string // clean absolute directories, protected with all below
	files []string // clean absolute files
}

// newProtector builds the list from the environment: HOME and the XDG and
// agent variables. files are more protected files (a gate's config.json).
func newProtector(files ...string) *protector {
	p := &protector{home: realHome()}
	addTree := func(dir string) {
		if dir == "" || !filepath.IsAbs(dir) {
			return
		}
		for _, d := range []string{filepath.Clean(dir), resolved(dir)} {
			d = strings.ToLower(d)
			if !slices.Contains(p.trees, d) {
				p.trees = append(p.trees, d)
			}
		}
	}
	if p.home != "" {
		for _, t := range homeTrees {
			addTree(filepath.Join(p.home, t))
		}
		for _, f := range homeFiles {
			p.files = append(p.files, strings.ToLower(filepath.Join(p.home, f)))
		}
	}
	for _, v := range []struct{ env, sub string }{
		{"XDG_STATE_HOME", "agent-shim"}, {"XDG_STATE_HOME", "agents-setup"},
		{"XDG_CACHE_HOME", "agent-shim"}, {"XDG_CACHE_HOME", "agents-setup"},
		{"XDG_CONFIG_HOME", "agent-shim"}, {"XDG_CONFIG_HOME", "agents-setup"},
		{"XDG_CONFIG_HOME", "git"}, {"XDG_CONFIG_HOME", "fish"},
		{"GEMINI_CONFIG_DIR", ""}, {"GEMINI_HOME", ""}, {"CODEX_HOME", ""}, {"CLAUDE_CONFIG_DIR", ""},
	} {
		if d := os.Getenv(v.env); d != "" && filepath.IsAbs(d) {
			addTree(filepath.Join(d, v.sub))
		}
	}
	for _, f := range append([]string{"/etc/gitconfig", "/etc/bash.bashrc", "/etc/profile", "/etc/zsh/zshenv"}, files...) {
		p.addFile(f)
	}
	return p
}

// addFile protects a file, its lock and temporary siblings (name.lock,
// .name.tmp-*), as named and as resolved.
func (p *protector) addFile(f string) {
	if f == "" || !filepath.IsAbs(f) {
		return
	}
	for _, x := range []string{filepath.Clean(f), resolved(f)} {
		x = strings.ToLower(x)
		if !slices.Contains(p.files, x) {
			p.files = append(p.files, x)
		}
	}
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
// neither is protected.
func (p *protector) check(named, real string) string {
	if p == nil {
		return ""
	}
	for _, x := range []string{real, filepath.Clean(named)} {
		// Compared without case: on a case-insensitive file system
		// (macOS, Windows shares) .GIT/CONFIG is .git/config.
		if why := p.checkOne(strings.ToLower(x)); why != "" {
			return x + why
		}
	}
	return ""
}

// checkOne returns what protected path x (lower-cased) is, as a note
// to follow the path; "" when it is none.
func (p *protector) checkOne(x string) string {
	for _, t := range p.trees {
		if within(x, t) {
			return " (under " + t + ")"
		}
	}
	xd, xb := filepath.Split(x)
	for _, f := range p.files {
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
