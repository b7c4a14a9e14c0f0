package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

// protectEnv makes a home (pinned in HOME and the XDG variables) holding
// a project checkout, and links that point into protected paths.
func protectEnv(t *testing.T) (home, proj string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	proj = filepath.Join(home, "src", "proj")
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, d := range []string{proj + "/.git/hooks", proj + "/.agents/config/permissions", proj + "/vendor/lib/.agents/config/permissions", proj + "/sub", home + "/.ssh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{home + "/.bashrc", proj + "/.git/config", proj + "/.agents/config/permissions/read_only.txt"} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		proj + "/rc":       home + "/.bashrc",
		proj + "/homelink": home,
		proj + "/gitlink":  proj + "/.git",
		proj + "/rel":      "../../.ssh",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj
}

// protectedLines write a protected path, each spelled another way. They
// are asked in every mode, at every level, under a policy that allows
// every command.
var protectedLines = []string{
	// The manifests, of the checkout and of an overlay.
	"echo 'echo' >> .agents/config/permissions/read_only.txt",
	"echo x >> ./sub/../.agents/config/permissions/read_only.txt",
	"echo x >> vendor/lib/.agents/config/permissions/read_only.txt",
	"printf x > $PROJ/.agents/config/permissions/new.txt",
	"cat p | tee -a .agents/config/permissions/read_only.txt",
	"cp /tmp/p .agents/config/permissions/read_only.txt",
	"cp -t .agents/config/permissions /tmp/read_only.txt",
	"mv /tmp/p vendor/lib/.agents/config/permissions/x.txt",
	"install -m 644 /tmp/p .agents/config/x.txt",
	"rsync -a /tmp/p/ .agents/config/",
	// git's configuration and hooks.
	"echo '[core] fsmonitor = x' >> .git/config",
	"cd .git && echo x >> config",
	"cd $PROJ/.git && echo x > hooks/pre-commit",
	"echo x > gitlink/config",
	"cp evil .git/hooks/post-checkout",
	"ln -sf /tmp/evil .git/hooks/pre-push",
	"git config core.fsmonitor 'sh -c evil'",
	"git config --add remote.origin.push +HEAD:main",
	"git -C sub config diff.external evil",
	"git config --global alias.st '!sh'",
	"git config --file .git/config core.pager evil",
	"sed -i s/a/b/ .git/config",
	"echo '* diff=x' >> .gitattributes",
	"echo x >> .GIT/CONFIG", // a case-insensitive file system
	"echo x >> .Agents/Config/permissions/read_only.txt",
	"echo x > .git/info/attributes",
	"mv x .gitmodules",
	"echo 'gitdir: /tmp/evil' > sub/.git",
	// Agents' settings.
	"echo {} > .claude/settings.local.json",
	"echo {} > .claude/settings.json",
	"echo {} > .gemini/settings.json",
	"echo {} > .codex/hooks.json",
	"echo {} > ~/.claude/settings.json",
	"echo x >> ~/.gemini/config/config.json",
	"echo x >> ~/.codex/config.toml",
	// The shim's own state, cache and key.
	"echo x > $HOME/.cache/agent-shim/policy-0.txt",
	"echo x > ~/.local/state/agents-setup/x/state.json",
	// Home.
	"echo x >> ~/.bashrc",
	"cd ~ && echo x >> .bashrc",
	"cd && echo x >> .profile",
	"echo x >> rc",
	"echo x >> homelink/.zshrc",
	"echo key >> rel/authorized_keys",
	"tee ~/.ssh/authorized_keys < k",
	"echo x > ~/.gitconfig",
	"echo x > ~/.config/git/config",
	"echo x > ~/.config/fish/config.fish",
	"echo x > ~/.inputrc",
	// Links made earlier on the same line.
	"ln -s ~/.bashrc x; echo y >> x",
	"ln -s ~/.bashrc x && cat y > x",
	"ln -s ~ d; echo y >> d/.bashrc",
	"mv rc x; echo >> x",
	"tar xf t.tar; echo x > a",
	// A cd the gate cannot follow.
	"cd $D && echo x >> .bashrc",
	"cd - && echo x > config",
	// Targets not known statically.
	"echo x >> $F",
	"echo x > ~/.bash$X",
	"echo x > .git/$F",
	// The shim and agents-setup.
	"agents-setup --profile full-access",
	"./bin/agent-shim explain x",
	"env agent-shim hook claude-code < in.json",
}

// freeLines write nothing protected: they run under the same policy.
var freeLines = []string{
	"echo x > notes.txt",
	"echo x >> sub/out.log",
	"cd $PROJ/sub && echo x > out.log",
	"cp a b",
	"git config user.name",
	"git config --get core.editor",
	"git -c user.name=x log",
	"echo x > .agents/README",
	"cat ~/.bashrc",
	"ln -s a b; echo y > c",
	"echo x > /dev/null",
}

func TestProtectedShell(t *testing.T) {
	home, proj := protectEnv(t)
	t.Setenv("PROJ", proj) // not expanded by the gate: $PROJ is not static
	p := matcher.New()
	p.Add(matcher.Allow, "command(*)", matcher.Source{})
	tools, err := NewToolPolicy(proj, []string{"bash:**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range append(protectedLines, freeLines...) {
		if seen[line] {
			t.Fatalf("duplicate input %q", line)
		}
		seen[line] = true
	}
	for _, mode := range modes {
		for _, level := range []Level{LevelLocalChanges, LevelFullAccess} {
			g := New(Options{Mode: mode, Level: level, Policy: p, Tools: tools, Scope: NewScope(proj)})
			g.sessionAnswer(AnswerTool, "echo", "tee", "cp", "git", "ln", "mv", "sed")
			for _, line := range protectedLines {
				line = strings.ReplaceAll(line, "$PROJ", proj)
				line = strings.ReplaceAll(line, "$HOME", home)
				d := g.DecideBash(line)
				if d.Verdict != Ask {
					t.Errorf("%s, %s: %q is %v (%s), want ask", mode, level, line, d.Verdict, d.Reason)
				}
			}
			for _, line := range freeLines {
				line = strings.ReplaceAll(line, "$PROJ", proj)
				if d := g.DecideBash(line); d.Verdict != Allow {
					t.Errorf("%s, %s: %q is %v (%s), want allow", mode, level, line, d.Verdict, d.Reason)
				}
			}
		}
	}
	// The shim's state directory, however the write is spelled: never.
	for _, line := range []string{
		"echo x > ~/.local/state/agent-shim/cache.key",
		"cp x ~/.local/state/agent-shim/approvals/ab12.approved",
		"mkdir -p $HOME/.local/state/agent-shim/tickets",
		"tee -a " + home + "/.local/state/agent-shim/sessions/s.json",
	} {
		line = strings.ReplaceAll(line, "$HOME", home)
		g := New(Options{Mode: ModeYolo, Level: LevelFullAccess, Policy: p, Scope: NewScope(proj)})
		if err := g.Apply(Request{Tool: "Bash", Key: line}, AnswerSession); err != nil {
			t.Fatal(err)
		}
		if d := g.DecideBash(line); d.Verdict != Deny {
			t.Errorf("%q (approved for the session, yolo): %v (%s), want deny", line, d.Verdict, d.Reason)
		}
	}
	// A person's answer for the exact line lifts it; a deny still denies.
	g := New(Options{Mode: ModeAsk, Level: LevelLocalChanges, Policy: p, Scope: NewScope(proj)})
	line := "echo x >> ~/.bashrc"
	if err := g.Apply(*g.DecideBash(line).Request, AnswerSession); err != nil {
		t.Fatal(err)
	}
	if d := g.DecideBash(line); d.Verdict != Allow {
		t.Errorf("approved for the session: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.DecideBash("echo x > .git/config; git push -f"); d.Verdict != Deny {
		t.Errorf("with a never-allowed command: %v, want deny", d.Verdict)
	}
}

// sessionAnswer approves programs for the session, as a "t" answer does.
func (g *Gate) sessionAnswer(a Answer, progs ...string) {
	g.Apply(Request{Tool: "Bash", Key: "x", Programs: progs}, a)
}

func TestProtectedFiles(t *testing.T) {
	home, proj := protectEnv(t)
	cfg := filepath.Join(home, "agent", "config.json")
	key := filepath.Join(home, ".local", "state", "agent-shim", "cache.key")
	tools, err := NewToolPolicy(proj, []string{"write_file:**", "read_file:**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"Write", "Edit", "MultiEdit", "apply_patch", "write_file", "replace", "edit_file"} {
		for _, mode := range modes {
			g := newGate(built{Options: Options{Mode: mode, Level: LevelFullAccess, Tools: tools, Scope: NewScope(proj),
				Secrets: []string{key}}, protected: []string{cfg}})
			g.Apply(Request{Tool: tool, Key: "x"}, AnswerTool)
			for _, p := range []string{
				".agents/config/permissions/read_only.txt",
				"sub/../.agents/config/x.txt",
				proj + "/vendor/lib/.agents/config/permissions/read_only.txt",
				".git/config", "gitlink/hooks/pre-commit", ".git/hooks/x", ".gitmodules",
				".claude/settings.json", ".gemini/settings.json", ".codex/hooks.json",
				"rc", "homelink/.bashrc", "rel/config", "~/.bashrc", home + "/.zshenv", "~/.ssh/id_ed25519",
				"~/.gitconfig", "~/.config/git/ignore", "~/.claude/settings.local.json", "~/.gemini/settings.json",
				cfg, filepath.Dir(cfg) + "/.config.json.tmp-1", home + "/.cache/agent-shim/x",
			} {
				if d := g.decideFileWrite(tool, p); d.Verdict != Ask {
					t.Errorf("%s, %s: write of %s is %v (%s), want ask", tool, mode, p, d.Verdict, d.Reason)
				}
			}
			// The shim's state directory approves calls: no agent
			// writes it, whoever answers.
			for _, p := range []string{key, home + "/.local/state/agent-shim/approvals/x.approved", "~/.local/state/agent-shim/tickets/t"} {
				if d := g.decideFileWrite(tool, p); d.Verdict != Deny {
					t.Errorf("%s, %s: write of %s is %v (%s), want deny", tool, mode, p, d.Verdict, d.Reason)
				}
			}
			if d := g.decideFileWrite(tool, "sub/main.go"); d.Verdict != Allow {
				t.Errorf("%s, %s: write of sub/main.go is %v (%s)", tool, mode, d.Verdict, d.Reason)
			}
			if d := g.decideFileRead("Read", key); d.Verdict != Ask {
				t.Errorf("%s: read of the cache key is %v (%s), want ask", mode, d.Verdict, d.Reason)
			}
		}
	}
}

func TestScopeRoot(t *testing.T) {
	home, proj := protectEnv(t)
	for _, root := range []string{"/", home, filepath.Dir(home), home + "/src/.."} {
		if s := NewScope(root); len(s.Roots()) != 0 {
			t.Errorf("NewScope(%s): roots %q, want none", root, s.Roots())
		}
	}
	if s := NewScope(proj); len(s.Roots()) != 1 {
		t.Errorf("NewScope(%s): roots %q", proj, s.Roots())
	}
	// Outside a checkout the scope is empty: every write asks.
	g := New(Options{Level: LevelLocalChanges})
	if d := g.decideFileWrite("Write", proj+"/a"); d.Verdict != Ask {
		t.Errorf("empty scope: write is %v", d.Verdict)
	}
}

// TestProtectedLinks: protected paths that are themselves links (the home
// directory, ~/.ssh, config.json, the cache key) are protected where the
// links lead, too, although New resolves nothing: the protected paths are
// resolved when a write (or a read of the key) is first checked, so even
// links made after New count.
func TestProtectedLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The links lead into the project, where a write would run unasked
	// if the path were not protected.
	real := filepath.Join(dir, "realhome")
	proj := filepath.Join(dir, "proj")
	other := filepath.Join(proj, "other")
	for _, d := range []string{real, other + "/ssh", other + "/agent", other + "/state", proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	cfg := filepath.Join(home, "agent", "config.json")
	key := filepath.Join(home, ".local", "state", "agent-shim", "cache.key")
	tools, err := NewToolPolicy(proj, []string{"write_file:**", "read_file:**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(built{Options: Options{Mode: ModeAllow, Level: LevelFullAccess, Tools: tools, Scope: NewScope(proj),
		Policy:  matcher.FromGrants([]string{"command(regex:.*)"}, nil, nil, nil),
		Secrets: []string{key}}, protected: []string{cfg}})
	// The links appear after New.
	for link, target := range map[string]string{
		home:              real,
		real + "/.ssh":    other + "/ssh",
		real + "/agent":   other + "/agent",
		real + "/.local":  other + "/state",
		proj + "/sshlink": other + "/ssh",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(other+"/state/state/agent-shim", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		other + "/ssh/authorized_keys", // ~/.ssh, where it leads
		"sshlink/config",
		home + "/.bashrc",
		other + "/agent/config.json", // config.json, where it leads
	} {
		if d := g.decideFileWrite("Write", p); d.Verdict != Ask {
			t.Errorf("write of %s is %v (%s), want ask", p, d.Verdict, d.Reason)
		}
	}
	// The state directory, where it leads: never written by an agent.
	if d := g.decideFileWrite("Write", other+"/state/state/agent-shim/cache.key"); d.Verdict != Deny {
		t.Errorf("write of the state directory through a link: %v (%s), want deny", d.Verdict, d.Reason)
	}
	for _, line := range []string{
		"echo x >> " + other + "/ssh/authorized_keys",
		"echo x >> sshlink/authorized_keys",
		"echo x >> other/agent/config.json",
	} {
		if d := g.DecideBash(line); d.Verdict != Ask {
			t.Errorf("%q is %v (%s), want ask", line, d.Verdict, d.Reason)
		}
	}
	if d := g.decideFileRead("Read", other+"/state/state/agent-shim/cache.key"); d.Verdict != Ask {
		t.Errorf("read of the cache key where its link leads is %v (%s), want ask", d.Verdict, d.Reason)
	}
	for _, p := range []string{proj + "/main.go", proj + "/sub/x.txt"} {
		if d := g.decideFileWrite("Write", p); d.Verdict != Allow {
			t.Errorf("write of %s is %v (%s), want allow", p, d.Verdict, d.Reason)
		}
	}
}
