//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The managed tier, proved where each agent reads it: /etc/claude-code,
// /etc/codex and /etc/gemini-cli. The tests never write the real /etc:
// install and the agent run in a private mount namespace in which /etc is
// an overlay whose changes land in the test's temp dir (so the three
// directories can be made where the machine has none), and each of the
// three is a bind mount of an empty directory of the test, hiding what a
// machine may hold there. Inside, the paths are the agents' defaults:
// Gemini CLI runs without GEMINI_CLI_SYSTEM_SETTINGS_PATH.
//
// The user-level write: the agent's user settings say "no hooks" in every
// way that tier can (Claude Code: no hooks and "disableAllHooks"; Codex:
// [features] hooks = false and an empty hooks.json; Gemini CLI: no hooks
// and hooksConfig.enabled false). The file is written as the agent in
// bypass mode wrote it before agent-shim guarded it, before the session
// starts (the hook, from whichever tier, refuses that write as a change
// to a protected path, so a write by the guarded agent itself never lands;
// the scripted model tries it anyway as its first call). Then the model
// runs the denied line. The controls run the same with the hook in the
// user tier: there the write removes the guard and the line runs.

// etcDirs are the managed tiers' directories bind-mounted in the namespace.
var etcDirs = []string{"claude-code", "codex", "gemini-cli"}

// nsScript runs in the new mount namespace: /etc becomes an overlay
// (changes in $E2E_ETC.upper), each managed directory a bind mount of
// $E2E_ETC/<dir>; then it runs its arguments.
const nsScript = `set -e
e=$E2E_ETC
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$e.upper,workdir=$e.work" /etc
for d in ` + "claude-code codex gemini-cli" + `; do
	mkdir -p "/etc/$d"
	mount --bind "$e/$d" "/etc/$d"
done
exec "$@"
`

// privateEtc makes the world run its agents (and nsRun its programs) in a
// private mount namespace whose /etc/{claude-code,codex,gemini-cli} are
// the world's dir/etc/{…}. It skips only where the machine cannot make a
// mount namespace, saying so.
func (w *world) privateEtc() {
	w.t.Helper()
	base := filepath.Join(w.dir, "etc")
	for _, d := range append([]string{base + ".upper", base + ".work"}, etcDirs...) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			w.t.Fatal(err)
		}
	}
	flags := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		flags = []string{"--user", "--map-root-user", "--mount", "--propagation", "private"}
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		w.t.Skipf("no unshare(1) to make a private mount namespace (util-linux): %v", err)
	}
	if out, err := exec.Command(unshare, append(flags, "--", "true")...).CombinedOutput(); err != nil {
		w.t.Skipf("this kernel or container makes no mount namespace (%s %s: %v: %s)", unshare, strings.Join(flags, " "), err, out)
	}
	w.env = append(w.env, "E2E_ETC="+base)
	w.wrap = append(append([]string{unshare}, flags...), "--", "/bin/sh", "-c", nsScript, "sh")
	// The namespace works as meant: /etc/codex inside is dir/etc/codex.
	probe := filepath.Join(base, "codex", "probe")
	w.write(probe, "x\n")
	if got := w.nsRun("cat", "/etc/codex/probe"); got != "x" {
		w.t.Fatalf("/etc/codex in the namespace is not %s (cat: %q)", filepath.Dir(probe), got)
	}
	if err := os.Remove(probe); err != nil {
		w.t.Fatal(err)
	}
	if _, err := os.Stat("/etc/codex/probe"); err == nil {
		w.t.Fatal("the probe is in the real /etc/codex: the namespace leaked")
	}
}

// nsRun runs prog in the world's namespace (privateEtc).
func (w *world) nsRun(prog string, args ...string) string {
	w.t.Helper()
	return w.run(w.project, w.wrap[0], append(append(append([]string(nil), w.wrap[1:]...), prog), args...)...)
}

// nsDoctor runs `agent-shim doctor` in the namespace and returns its
// output, whatever its exit code (other checks may fail on a test machine).
func (w *world) nsDoctor() string {
	w.t.Helper()
	cmd := exec.Command(w.wrap[0], append(append([]string(nil), w.wrap[1:]...), w.shim, "doctor")...)
	cmd.Dir, cmd.Env = w.project, w.env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// installManaged runs `agent-shim install <agent> --managed` in the
// namespace and returns the file it wrote, as seen from outside.
func (w *world) installManaged(agent, file string) string {
	w.t.Helper()
	w.t.Log(w.nsRun(w.shim, "install", agent, "--managed"))
	p := filepath.Join(w.dir, "etc", file)
	data, err := os.ReadFile(p)
	if err != nil {
		w.t.Fatalf("install --managed wrote nothing at /etc/%s: %v", file, err)
	}
	if !strings.Contains(string(data), w.shim) {
		w.t.Fatalf("/etc/%s does not run %s:\n%s", file, w.shim, data)
	}
	return p
}

// userWrite is the user-level settings file an agent wrote to drop its
// hooks, and the model's call that writes the same again.
type userWrite struct {
	path    string
	content string
	call    toolCall
}

// seed writes the user settings as the agent left them.
func (w *world) seed(u userWrite) { w.write(u.path, u.content) }

// stillSays asserts the user settings still say no hooks after the run.
func (w *world) stillSays(u userWrite) {
	w.t.Helper()
	data, err := os.ReadFile(u.path)
	if err != nil || string(data) != u.content {
		w.t.Errorf("%s is not the user-level write the test made (err %v):\n%s", u.path, err, data)
	}
}

// heredoc is a shell line that writes content to path (a path with $
// variables expanded by the shell).
func heredoc(path, content string) string {
	return fmt.Sprintf("cat > \"%s\" <<'E2E_EOF'\n%sE2E_EOF", path, content)
}

const claudeNoHooks = "{\n  \"disableAllHooks\": true,\n  \"hooks\": {}\n}\n"

func (w *world) claudeUserWrite() userWrite {
	return userWrite{path: filepath.Join(w.home, ".claude", "settings.json"), content: claudeNoHooks,
		call: bashCall(heredoc("$HOME/.claude/settings.json", claudeNoHooks))}
}

// codexUserWrite turns hooks off in config.toml (what is there kept: the
// model server's provider, and in the control the hook's trust) and
// empties hooks.json.
func (w *world) codexUserWrite() []userWrite {
	path := filepath.Join(w.home, ".codex", "config.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	config := string(data)
	if i := strings.Index(config, "[features]\nhooks = true\n"); i >= 0 { // as the user install set it
		config = config[:i] + "[features]\nhooks = false\n" + config[i+len("[features]\nhooks = true\n"):]
	} else {
		config += "\n[features]\nhooks = false\n"
	}
	hooksJSON := "{\"hooks\": {}}\n"
	return []userWrite{
		{path: path, content: config, call: shellCall(heredoc("$CODEX_HOME/config.toml", config))},
		{path: filepath.Join(w.home, ".codex", "hooks.json"), content: hooksJSON, call: shellCall(heredoc("$CODEX_HOME/hooks.json", hooksJSON))},
	}
}

// geminiNoHooks is geminiSettings with hooks off.
var geminiNoHooks = strings.Replace(geminiSettings, "{\n", "{\n  \"hooksConfig\": {\"enabled\": false},\n  \"hooks\": {},\n", 1)

func (w *world) geminiUserWrite() userWrite {
	return userWrite{path: filepath.Join(w.geminiHome(), ".gemini", "settings.json"), content: geminiNoHooks,
		call: runShellCall(heredoc("$GEMINI_CLI_HOME/.gemini/settings.json", geminiNoHooks))}
}

// managedCase is one agent's managed-tier run: set up the world (the
// hook in the managed tier, or for the control in the user tier), write
// the user settings, run the agent in bypass mode on the model.
type managedCase struct {
	name string
	// world sets up the world with the hook installed (managed or not),
	// the user-level writes done, and returns them and the model.
	world func(t *testing.T, managed bool) (*world, *modelServer, []userWrite)
	run   func(w *world, m *modelServer) string
}

var managedCases = []managedCase{
	{"claude-code", func(t *testing.T, managed bool) (*world, *modelServer, []userWrite) {
		w := newWorld(t)
		w.privateEtc()
		if managed {
			w.installManaged("claude-code", "claude-code/managed-settings.d/agent-shim.json")
		} else {
			w.install("claude-code")
		}
		u := w.claudeUserWrite()
		w.seed(u)
		return w, newModelServer(t, u.call, bashCall(deniedLine)), []userWrite{u}
	}, func(w *world, m *modelServer) string {
		return w.claude(m, "--dangerously-skip-permissions")
	}},
	{"codex", func(t *testing.T, managed bool) (*world, *modelServer, []userWrite) {
		w := newWorld(t)
		w.privateEtc()
		m := newModelServer(t) // its calls are set below, once the writes are known
		w.codexHome(m)
		if managed {
			w.installManaged("codex", "codex/requirements.toml")
		} else {
			t.Log(w.install("codex"))
		}
		us := w.codexUserWrite()
		for _, u := range us {
			w.seed(u)
		}
		m.SetCalls(us[0].call, us[1].call, shellCall(deniedLine))
		return w, m, us
	}, func(w *world, m *modelServer) string {
		return w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
	}},
	{"gemini-cli", func(t *testing.T, managed bool) (*world, *modelServer, []userWrite) {
		w := newWorld(t)
		w.env = append(w.env, "GEMINI_CLI_HOME="+w.geminiHome())
		dir := filepath.Join(w.geminiHome(), ".gemini")
		w.write(filepath.Join(dir, "settings.json"), geminiSettings)
		trusted := fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", w.project)
		w.write(filepath.Join(dir, "trustedFolders.json"), trusted)
		w.privateEtc()
		if managed {
			w.installManaged("gemini-cli", "gemini-cli/settings.json")
		} else {
			t.Log(w.install("gemini-cli"))
		}
		u := w.geminiUserWrite()
		w.seed(u)
		return w, newModelServer(t, u.call, runShellCall(deniedLine)), []userWrite{u}
	}, func(w *world, m *modelServer) string {
		return w.gemini(m, "--yolo")
	}},
}

// TestManagedTier: with the hook installed by `install --managed` in the
// agent's managed tier, the agent in bypass/yolo mode whose user settings
// say "no hooks" is still guarded: the denied line does not run and the
// hook's refusal reaches the model.
func TestManagedTier(t *testing.T) {
	t.Parallel()
	for _, c := range managedCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w, m, us := c.world(t, true)
			// doctor, where the agent looks, names the managed tier.
			if doc := w.nsDoctor(); !strings.Contains(doc, "managed: /etc/"+c.name) {
				t.Errorf("doctor does not say the managed tier guards %s:\n%s", c.name, doc)
			}
			out := c.run(w, m)
			t.Logf("tool results: %q", m.Results())
			w.denied(m, out)
			for _, u := range us {
				w.stillSays(u)
			}
		})
	}
}

// TestManagedTierControl is the control for the test above: the same
// user-level write with the hook in the user tier removes the guard, and
// the denied line runs (a forced push to the world's own bare
// repository). Were it refused anyway, TestManagedTier would prove nothing
// about the managed tier. The second line install placed in the user tier
// is taken away too: it would refuse the push (TestSecondLineHooksOff).
func TestManagedTierControl(t *testing.T) {
	t.Parallel()
	for _, c := range managedCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w, m, _ := c.world(t, false)
			w.dropSecondLine(c.name)
			c.run(w, m)
			if !w.pushMoved() {
				t.Errorf("with the hook in the user tier, the user-level write did not remove it: the forced push did not run (tool results: %q)", m.Results())
			}
		})
	}
}

// TestManagedTierGeminiDisabledList holds what Gemini CLI's system tier
// cannot do (0.61): hooksConfig.disabled is merged across the settings
// files as a union, so a user's file that lists the hook's name switches
// the system's hook off. The admin tier's second line, which install
// --managed places beside it, still refuses the denied line; without it,
// the line runs. README and doctor say so; when a Gemini CLI release
// stops it, this test fails and they change.
func TestManagedTierGeminiDisabledList(t *testing.T) {
	t.Parallel()
	w, _, _ := managedCases[2].world(t, true)
	u := w.geminiUserWrite()
	u.content = strings.Replace(geminiSettings, "{\n", "{\n  \"hooksConfig\": {\"disabled\": [\"agent-shim\"]},\n", 1)
	w.seed(u)
	m := newModelServer(t, runShellCall(deniedLine))
	w.gemini(m, "--yolo")
	w.mustHaveCalled(m, "")
	if w.pushMoved() {
		t.Errorf("with the system's hook switched off, the admin tier's second line did not refuse the forced push (tool results: %q)", m.Results())
	}
	if err := os.Remove(filepath.Join(w.dir, "etc", "gemini-cli", "policies", "agent-shim.toml")); err != nil {
		t.Fatal(err)
	}
	m = newModelServer(t, runShellCall(deniedLine))
	w.gemini(m, "--yolo")
	w.mustHaveCalled(m, "")
	if !w.pushMoved() {
		t.Errorf("the user's hooksConfig.disabled no longer switches off the system tier's hook: say so in README and doctor (tool results: %q)", m.Results())
	}
}
