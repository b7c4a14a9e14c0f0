//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runShellCall is Gemini CLI's run_shell_command running line.
func runShellCall(line string) toolCall {
	return toolCall{Tools: []string{"run_shell_command"}, Args: func(string) map[string]any {
		return map[string]any{"command": line, "description": "e2e"}
	}}
}

// geminiHome is GEMINI_CLI_HOME: Gemini CLI keeps its settings in
// $GEMINI_CLI_HOME/.gemini when it is set. It is not $HOME, so the tests
// see whether install follows it.
func (w *world) geminiHome() string { return filepath.Join(w.dir, "gemini-home") }

// gemini runs Gemini CLI headless (-p) against the model server.
func (w *world) gemini(m *modelServer, args ...string) string {
	w.t.Helper()
	env := []string{
		"GEMINI_CLI_HOME=" + w.geminiHome(),
		"GOOGLE_GEMINI_BASE_URL=" + m.URL(),
		"GEMINI_API_KEY=e2e-not-a-key",
		"GEMINI_CLI_NO_RELAUNCH=true",
		"SHELL=/bin/bash",
	}
	out := w.agent(agentTimeout, env, agentBin(w.t, "gemini"),
		append([]string{"-p", "e2e: make the one tool call", "--output-format", "text", "--model", "gemini-2.5-flash"}, args...)...)
	w.t.Logf("gemini %v:\n%s", args, out)
	return out
}

const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
}
`

// geminiWorld is a world with the hook installed for Gemini CLI, with
// GEMINI_CLI_HOME set as the agent will have it.
// Its settings choose the API-key sign-in (which honours
// GOOGLE_GEMINI_BASE_URL) and it trusts the project folder, as a person
// using it would have (an untrusted folder turns --yolo back to default).
func geminiWorld(t *testing.T, installArgs ...func(*world) string) *world {
	return geminiSetUp(newWorld(t), installArgs...)
}

// geminiSetUp sets w up as geminiWorld does.
func geminiSetUp(w *world, installArgs ...func(*world) string) *world {
	t := w.t
	w.env = append(w.env, "GEMINI_CLI_HOME="+w.geminiHome())
	dir := filepath.Join(w.geminiHome(), ".gemini")
	w.write(filepath.Join(dir, "settings.json"), geminiSettings)
	trusted, _ := json.Marshal(map[string]string{w.project: "TRUST_FOLDER"})
	w.write(filepath.Join(dir, "trustedFolders.json"), string(trusted)+"\n")
	var args []string
	for _, a := range installArgs {
		args = append(args, a(w))
	}
	t.Log(w.install("gemini-cli", args...))
	return w
}

func TestGeminiAllowedRuns(t *testing.T) {
	t.Parallel()
	w := geminiWorld(t)
	m := newModelServer(t, runShellCall(allowedLine))
	out := w.gemini(m, "--yolo")
	w.ran(m, out)
}

// TestGeminiDenyEveryMode: install follows GEMINI_CLI_HOME to the
// settings Gemini CLI reads, and the deny holds in default and yolo mode.
// Headless in default mode Gemini CLI offers no shell tool at all unless
// the person allowed it (--allowed-tools): that is the default mode in
// which a command can run.
func TestGeminiDenyEveryMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"default", []string{"--approval-mode", "default", "--allowed-tools", "run_shell_command"}},
		{"yolo", []string{"--yolo"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			w := geminiWorld(t)
			m := newModelServer(t, runShellCall(deniedLine))
			out := w.gemini(m, mode.args...)
			w.denied(m, out)
		})
	}
}

// TestGeminiHookFailureBlocks: Gemini CLI goes ahead when its hook fails
// (exit 1 only warns); the hook command install writes turns every failure
// into a block.
func TestGeminiHookFailureBlocks(t *testing.T) {
	t.Parallel()
	for _, f := range hookFailures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			w := geminiWorld(t)
			w.breakShim(f.script)
			m := newModelServer(t, runShellCall(allowedLine))
			out := w.gemini(m, "--yolo")
			w.blocked(m, out)
		})
	}
}

// TestGeminiControlHookAnswer holds the hook's answer itself to Gemini
// CLI, the settings path aside (--settings names the file Gemini reads):
// when the tests above fail, this one says whether the answer or the path
// is at fault.
func TestGeminiControlHookAnswer(t *testing.T) {
	t.Parallel()
	w := geminiWorld(t, func(*world) string { return "--settings" }, func(w *world) string {
		return filepath.Join(w.geminiHome(), ".gemini", "settings.json")
	})
	m := newModelServer(t, runShellCall(deniedLine))
	out := w.gemini(m, "--yolo")
	w.denied(m, out)
}

// TestGeminiSettingsWithComments: Gemini CLI reads settings.json with
// comments; install keeps them and the hook holds.
func TestGeminiSettingsWithComments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "GEMINI_CLI_HOME="+w.geminiHome())
	dir := filepath.Join(w.geminiHome(), ".gemini")
	const comment = "// chosen by hand: the API key sign-in"
	w.write(filepath.Join(dir, "settings.json"), "{\n  "+comment+"\n  /* block */ \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n")
	trusted, _ := json.Marshal(map[string]string{w.project: "TRUST_FOLDER"})
	w.write(filepath.Join(dir, "trustedFolders.json"), string(trusted)+"\n")
	t.Log(w.install("gemini-cli"))
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), comment) || !strings.Contains(string(data), "/* block */") {
		t.Errorf("install dropped the comments:\n%s", data)
	}
	m := newModelServer(t, runShellCall(deniedLine))
	out := w.gemini(m, "--yolo")
	w.denied(m, out)
}
