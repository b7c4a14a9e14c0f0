//go:build linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// attack tries to change every kind of protected path of the checkout
// made by preventLayout, each step printing its status; the last steps
// are writes the tree may make (its sources, git's own files).
const attack = `
try() { local name=$1; shift; "$@" 2>/dev/null; echo "$name=$?"; }
try config sh -c 'echo "[core] fsmonitor = touch pwned" >> .git/config'
try hook sh -c 'printf "#!/bin/sh\ntouch pwned\n" > .git/hooks/post-checkout'
try mvgit mv .git .git-away
try mvhooks mv .git/hooks .git/hooks-away
try rmhooks rm -rf .git/hooks
try rmconfig rm -f .git/config
try settings sh -c 'echo "{}" > .claude/settings.json'
try mvclaude mv .claude .claude-away
try submodule sh -c 'echo x > .git/modules/lib/hooks/post-checkout'
try husky sh -c 'echo x > .husky/pre-commit'
try nested sh -c 'echo x > third_party/p/.git/hooks/post-merge'
try mvnested mv third_party/p third_party/q
try manifest sh -c 'echo "allow curl" >> .agents/config/grants.txt'
try umount umount .git/config
try src sh -c 'echo ok > src.txt'
try gitwrite sh -c 'echo x > .git/ORIG_HEAD.lock && mv .git/ORIG_HEAD.lock .git/ORIG_HEAD'
try readsecret grep -q SECRET ../home/.netrc
try readsecretdir grep -q SECRET ../home/.ssh/id
grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status
`

// preventLayout is a checkout with one of each kind of protected path.
var preventLayout = map[string]string{
	".git/config":                      "[core]\n\thooksPath = .husky\n",
	".git/HEAD":                        "ref: refs/heads/main\n",
	".git/hooks/pre-commit.sample":     "#!/bin/sh\n",
	".git/modules/lib/HEAD":            "ref: refs/heads/main\n",
	".git/modules/lib/hooks/":          "",
	".husky/pre-commit":                "npm test\n",
	".claude/settings.json":            "{\"a\": 1}\n",
	".agents/config/grants.txt":        "allow ls\n",
	"third_party/p/.git/HEAD":          "ref: refs/heads/main\n",
	"third_party/p/.git/hooks/":        "",
	"src.txt":                          "src\n",
	"third_party/p/.git/config":        "[core]\n",
	"third_party/p/.git/hooks/.sample": "x\n",
}

func init() {
	// prevent TOP [off]: run the attack in TOP under Run with its
	// protected paths, and print the statuses and what Run says.
	helpers["prevent"] = func(args []string) int {
		if len(args) > 1 && args[1] == "off" {
			namespaces = false
		}
		snap, err := TakeSnapshot([]string{args[0]})
		if err != nil {
			fmt.Println("snapshot:", err)
			return 1
		}
		defer snap.Close()
		// No Dir: the tree starts in this process's working directory,
		// entered again below the binds.
		if err := os.Chdir(args[0]); err != nil {
			fmt.Println(err)
			return 1
		}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", attack}, Env: []string{"PATH=/usr/bin:/bin"},
			Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr,
			Decide: func(Exec) Verdict { return Verdict{Allow: true} }, Confine: true,
			Writable: []string{args[0], "/dev/null"}, Protect: snap,
			Secrets: []string{filepath.Join(filepath.Dir(args[0]), "home/.netrc"), filepath.Join(filepath.Dir(args[0]), "home/.ssh")},
		})
		fmt.Printf("uid=%d prevented=%v err=%v\n", os.Getuid(), st.Prevented, err)
		return 0
	}
}

// Where the kernel allows a mount namespace (as root; as an ordinary
// user, through a user namespace), the tree cannot change a protected
// path, move or remove the directory that holds one, or unmount the
// protection; it still writes its sources and git's own files. Without
// the namespace (forced here), the same attack succeeds and is left to
// the undo.
func TestRunPrevents(t *testing.T) {
	needKernel(t)
	blocked := []string{"config", "hook", "mvgit", "mvhooks", "rmhooks", "rmconfig", "settings", "mvclaude",
		"submodule", "husky", "nested", "mvnested", "manifest", "umount", "readsecret", "readsecretdir"}
	for _, who := range []string{"root", "nobody", "off"} {
		t.Run(who, func(t *testing.T) {
			if who != "off" {
				needRoot(t)
			}
			top := filepath.Join(t.TempDir(), "co")
			files(t, top, preventLayout)
			files(t, filepath.Dir(top), map[string]string{"home/.netrc": "SECRET\n", "home/.ssh/id": "SECRET\n"})
			bin, args := os.Args[0], []string{"prevent", top}
			cmd := exec.Command(bin, args...)
			switch who {
			case "nobody":
				bin = copyForNobody(t)
				cmd = exec.Command(bin, args...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				filepath.Walk(filepath.Dir(filepath.Dir(top)), func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
			case "off":
				cmd = exec.Command(bin, "prevent", top, "off")
			}
			out, err := cmd.CombinedOutput()
			s := string(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, s)
			}
			if who == "off" {
				if !strings.Contains(s, "prevented=false") || !strings.Contains(s, "hook=0") || !strings.Contains(s, "config=0") {
					t.Errorf("without the namespace the attack should have run (for the undo):\n%s", s)
				}
				return
			}
			if !strings.Contains(s, "prevented=true err=<nil>") {
				skipLacking(t, "no mount namespace here:\n%s", s)
			}
			caps := capLines(s)
			for k, v := range map[string]string{"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
				"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"} {
				if caps[k] != v {
					t.Errorf("%s = %q, want %q: the namespace's capabilities stayed", k, caps[k], v)
				}
			}
			for _, step := range blocked {
				if strings.Contains(s, "\n"+step+"=0\n") {
					t.Errorf("%s succeeded", step)
				}
			}
			for _, step := range []string{"src", "gitwrite"} {
				if !strings.Contains(s, "\n"+step+"=0\n") {
					t.Errorf("%s failed: the tree's own writes must work", step)
				}
			}
			for f, c := range preventLayout {
				if strings.HasSuffix(f, "/") {
					continue
				}
				data, err := os.ReadFile(filepath.Join(top, f))
				if f == "src.txt" {
					c = "ok\n"
				}
				if err != nil || string(data) != c {
					t.Errorf("%s = %q (%v), want %q", f, data, err, c)
				}
			}
			for _, planted := range []string{".git/hooks/post-checkout", ".git/modules/lib/hooks/post-checkout", ".git-away", ".claude-away", "third_party/q"} {
				if _, err := os.Lstat(filepath.Join(top, planted)); err == nil {
					t.Errorf("%s was made", planted)
				}
			}
			if t.Failed() {
				t.Logf("%s", s)
			}
		})
	}
}

// guardAttack writes an agent's own directory (the working directory of
// the attack) as a tree under agent-shim run may: its state, and each of
// its guarded paths.
const guardAttack = `
try() { local name=$1; shift; "$@" 2>/dev/null; echo "$name=$?"; }
try state sh -c 'mkdir -p sessions && echo s > sessions/one.jsonl && echo x > history && mv history history.old'
try settings sh -c 'echo "{\"hooks\": {}}" > settings.json'
try renamesettings sh -c 'echo "{}" > s.new && mv -f s.new settings.json'
try hook sh -c 'echo "touch pwned" > hooks/pre.sh'
try mvhooks mv hooks hooks-away
try rules sh -c 'echo "allow()" > rules/default.rules'
try deep sh -c 'echo x > plugins/cache/p/hook.sh'
try mvplugins mv plugins plugins-away
try mvself sh -c 'cd .. && mv agent agent-away'
try env sh -c 'echo NODE_OPTIONS=--require=/x > .env'
try locallink ln -s ../planted.json settings.local.json
`

func init() {
	// guard DIR [off]: run guardAttack in DIR, an agent's directory
	// guarded as agent-shim run guards it, and print the statuses, then
	// what the undo put back.
	helpers["guard"] = func(args []string) int {
		if len(args) > 1 && args[1] == "off" {
			namespaces = false
		}
		g := Guarded{Dir: args[0], Paths: []string{"settings.json", "settings.local.json", "hooks/", "rules/", "plugins/cache/", ".env"}}
		snap, err := TakeSnapshot(nil, g)
		if err != nil {
			fmt.Println("snapshot:", err)
			return 1
		}
		if err := os.Chdir(args[0]); err != nil {
			fmt.Println(err)
			return 1
		}
		st, err := Run(context.Background(), Config{
			Path: "/bin/bash", Argv: []string{"bash", "-c", guardAttack}, Env: []string{"PATH=/usr/bin:/bin"},
			Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr,
			Decide: func(Exec) Verdict { return Verdict{Allow: true} }, Confine: true,
			Writable: []string{args[0], "/dev/null"}, Protect: snap,
		})
		fmt.Printf("prevented=%v err=%v\n", st.Prevented, err)
		changed, err := snap.Restore(func(string) bool { return false })
		fmt.Printf("undone=%q err=%v\n", changed, err)
		return 0
	}
}

// An agent's own directory under agent-shim run (Guarded): the tree
// writes its state there, but not its settings, hooks, rules or the code
// of its plugins, nor moves them or the directory aside; a guarded path
// missing at the start may be made, and is removed after. Without the
// namespace the same writes succeed and are undone.
func TestRunGuardsStateDir(t *testing.T) {
	needKernel(t)
	layout := map[string]string{
		"agent/settings.json":          "{\"hooks\": {\"PreToolUse\": []}}\n",
		"agent/hooks/guard.sh":         "agent-shim hook\n",
		"agent/rules/agent-shim.rules": "prefix_rule()\n",
		"agent/plugins/cache/p/x.json": "{}\n",
		"agent/plugins/store/s.json":   "{}\n",
	}
	for _, who := range []string{"root", "nobody", "off"} {
		t.Run(who, func(t *testing.T) {
			if who != "off" {
				needRoot(t)
			}
			base := t.TempDir()
			files(t, base, layout)
			dir := filepath.Join(base, "agent")
			args := []string{"guard", dir}
			cmd := exec.Command(os.Args[0], args...)
			switch who {
			case "nobody":
				// An ordinary user: the namespace through a user
				// namespace of its own.
				cmd = exec.Command(copyForNobody(t), args...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				filepath.Walk(filepath.Dir(base), func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
			case "off":
				cmd = exec.Command(os.Args[0], append(args, "off")...)
			}
			out, err := cmd.CombinedOutput()
			s := "\n" + string(out)
			if err != nil {
				t.Fatalf("%v%s", err, s)
			}
			if !strings.Contains(s, "\nstate=0\n") {
				t.Errorf("the agent could not write its own state:\n%s", s)
			}
			if who != "off" {
				if !strings.Contains(s, "prevented=true err=<nil>") {
					skipLacking(t, "no mount namespace here:\n%s", s)
				}
				for _, step := range []string{"settings", "renamesettings", "hook", "mvhooks", "rules", "deep", "mvplugins", "mvself"} {
					if strings.Contains(s, "\n"+step+"=0\n") {
						t.Errorf("%s succeeded", step)
					}
				}
			} else if !strings.Contains(s, "\nsettings=0\n") || !strings.Contains(s, "\nhook=0\n") {
				t.Errorf("without the namespace the writes should have run (for the undo):\n%s", s)
			}
			for f, c := range layout {
				if data, err := os.ReadFile(filepath.Join(base, f)); err != nil || string(data) != c {
					t.Errorf("%s = %q (%v) after the run, want %q", f, data, err, c)
				}
			}
			// (Without the namespace a guarded directory moved aside stays
			// there, where nothing reads it, and is put back.)
			for _, planted := range []string{"agent/hooks/pre.sh", "agent/rules/default.rules", "agent/plugins/cache/p/hook.sh", "agent/.env", "agent/settings.local.json", "agent-away"} {
				if _, err := os.Lstat(filepath.Join(base, planted)); err == nil {
					t.Errorf("%s is there after the run", planted)
				}
			}
			if data, err := os.ReadFile(filepath.Join(dir, "sessions/one.jsonl")); err != nil || string(data) != "s\n" {
				t.Errorf("the agent's state was lost: %q %v", data, err)
			}
			if !strings.Contains(s, `undone=[`) || !strings.Contains(s, ".env") {
				t.Errorf("the undo did not report the planted .env:\n%s", s)
			}
			if t.Failed() {
				t.Logf("%s", s)
			}
		})
	}
}
