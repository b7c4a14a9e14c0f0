//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
)

// recorded is what the recording shell prints for every script it is
// given: a tool result that holds it reached the shell.
const recorded = "e2e-recorded-not-run"

// recorderShell writes a program named bash that runs nothing: it appends
// its arguments to log and prints recorded. The agents hand it the rows of
// the corpora, which must never run.
func (w *world) recorderShell() (dir, log string) {
	w.t.Helper()
	dir = filepath.Join(w.dir, "recorder")
	log = filepath.Join(w.dir, "recorder.log")
	w.write(filepath.Join(dir, "bash"), "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'"+log+"'\necho "+recorded+"\n")
	if err := os.Chmod(filepath.Join(dir, "bash"), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return dir, log
}

type sampleRow struct {
	where, line, expected string
	reimpl                secondline.Decision
	result                string
}

// probes are lines beside the corpora, each a bypass attempt or a control
// of the agents' reading of runners, paths and blanks (secondline's
// TestClaudeRunners says what Claude Code did with each).
var probes = []string{
	"git  push\t--force", "/usr/local/bin/git push --force", "flock -w 5 /tmp/l git push --force",
	"nice -n 5 git push --force", "xargs git push --force", "watch git push --force",
	"chrt 5 git push --force", "taskset 1 git push --force", "ltrace git push --force",
	"time -p git push --force", "timeout -s KILL 5 git push --force", "echo git push --force",
	"foo git push --force", "GIT push --force", "script -c x git push --force", "busybox rm -rf /",
	"su -c x git push --force", "sudo foo git push --force", "env -i FOO=1 bar git push --force",
	"command -v rm", "git push origin main",
}

// plainRows are the plain rows of the corpora (one command, no shell
// syntax) expected DENY, ALLOW or DEFAULT, and the probes (expected
// PROBE: held to the re-implementation, not counted).
func plainRows(t *testing.T) []*sampleRow {
	var rows []*sampleRow
	for i, p := range probes {
		rows = append(rows, &sampleRow{where: fmt.Sprintf("probe %d", i+1), line: p, expected: "PROBE"})
	}
	for _, c := range corporaRows(t) {
		if _, ok := secondline.Plain(c[1]); ok && c[2] != "ASK" {
			rows = append(rows, &sampleRow{where: c[0], line: c[1], expected: c[2]})
		}
	}
	return rows
}

// secondLineRun compiles the adversarial-2 policy for one agent, places
// the rules where the agent reads them (no hook installed), has the model
// make one shell call per row, and reads from each call's result what the
// agent did with it: refused by a deny rule, refused as asked, or handed
// to the recording shell (which runs nothing).
type secondLineRun struct {
	compile func(*secondline.Policy) secondline.Output
	// setup places the rules and the recording shell; it returns how to
	// run the agent.
	setup func(w *world, out secondline.Output, shellDir string) func(*modelServer) string
	call  func(line string) toolCall
	// denied and asked are what a result says when the agent refused
	// the call by a deny rule, or as asked with nobody to answer; own,
	// when it refused it by a check of its own, before or beside the
	// rules.
	denied, asked, own string
}

var secondLineRuns = map[string]secondLineRun{
	"claude-code": {
		compile: secondline.Claude,
		setup: func(w *world, out secondline.Output, shellDir string) func(*modelServer) string {
			var settings map[string]any
			if err := json.Unmarshal(out.Text, &settings); err != nil {
				w.t.Fatal(err)
			}
			settings["env"] = map[string]any{"CLAUDE_CODE_SHELL": filepath.Join(shellDir, "bash")}
			data, err := json.MarshalIndent(settings, "", "  ")
			if err != nil {
				w.t.Fatal(err)
			}
			w.write(filepath.Join(w.home, ".claude", "settings.json"), string(data))
			return func(m *modelServer) string { return w.claude(m, "--permission-mode", "bypassPermissions") }
		},
		call:   bashCall,
		denied: "has been denied",
		asked:  "Claude requested permissions to use Bash, but you haven't granted it yet",
		own:    "This command would remove a critical system directory",
	},
	"gemini-cli": {
		compile: secondline.Gemini,
		setup: func(w *world, out secondline.Output, shellDir string) func(*modelServer) string {
			w.env = append(w.env, "GEMINI_CLI_HOME="+w.geminiHome())
			dir := filepath.Join(w.geminiHome(), ".gemini")
			w.write(filepath.Join(dir, "settings.json"), geminiSettings)
			trusted, _ := json.Marshal(map[string]string{w.project: "TRUST_FOLDER"})
			w.write(filepath.Join(dir, "trustedFolders.json"), string(trusted)+"\n")
			w.write(filepath.Join(dir, "policies", "agent-shim.toml"), string(out.Text))
			w.pathFirst(shellDir)
			return func(m *modelServer) string { return w.gemini(m, "--yolo") }
		},
		call:   runShellCall,
		denied: "agent-shim: ",
		asked:  "\x00never", // Gemini's rules hold no ask
		own:    "\x00never",
	},
}

// policyDenies reports whether the matcher, with the rules the second
// line is compiled from (deny and never-allow), refuses a line.
func policyDenies(rules []secondline.Rule) func(string) bool {
	m := matcher.New()
	for _, r := range rules {
		if r.Decision == secondline.Deny {
			m.Add(matcher.Deny, r.Text, matcher.Source{Category: "never_allow"})
		}
	}
	return func(line string) bool { return m.Decide(line).Decision == matcher.Deny }
}

// TestSecondLineAgents holds secondline's re-implementations of Claude
// Code's and Gemini CLI's rule engines to the agents themselves: every
// plain row of the corpora expected DENY, ALLOW or DEFAULT, and the
// probes, is handed to the real agent, with the second line compiled
// from the adversarial-2 policy as its only rules, and what the agent does (refuse by a deny
// rule, refuse as asked, run) must be what the re-implementation says.
// The shell the agent runs is a recorder that runs nothing.
func TestSecondLineAgents(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude-code", "gemini-cli"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			run := secondLineRuns[agent]
			rules := secondline.Rules(policy2Config(t), gate.NeverAllow())
			out := run.compile(secondline.Compile(rules, programs.Builtin()))
			rows := plainRows(t)
			for _, r := range rows {
				r.reimpl = out.Decide(r.line)
			}
			// Gemini CLI asks its model whether a session of many calls
			// is looping after 30 turns: 20 calls a run.
			t.Run("calls", func(t *testing.T) {
				for i := 0; i < len(rows); i += 20 {
					chunk := rows[i:min(i+20, len(rows))]
					t.Run(fmt.Sprint(i+1), func(t *testing.T) {
						t.Parallel()
						decideRows(t, run, out, chunk)
					})
				}
			})
			denies := policyDenies(rules)
			deny, denied, own, agree := 0, 0, 0, 0
			for _, r := range rows {
				if r.result == "" {
					continue // decideRows failed the test
				}
				var got secondline.Decision
				switch res := r.result; {
				case strings.Contains(res, recorded):
					got = ""
				case strings.Contains(res, run.denied):
					got = secondline.Deny
				case strings.Contains(res, run.asked):
					got = secondline.Ask
				case strings.Contains(res, run.own):
					// The agent's own check refused it, before its
					// rules: what they do with it is not seen.
					t.Logf("%s: %q: refused by %s's own check: %q", r.where, r.line, agent, res)
					own++
					if r.expected == "DENY" {
						deny++
					}
					continue
				default:
					t.Errorf("%s: %q: the result says neither that it ran nor that it was refused: %q", r.where, r.line, res)
					continue
				}
				if got != r.reimpl {
					t.Errorf("%s: %q: %s decides %q, the re-implementation %q", r.where, r.line, agent, got, r.reimpl)
				} else {
					agree++
				}
				switch {
				case r.expected == "DENY":
					deny++
					if got == secondline.Deny {
						denied++
					}
				case r.expected != "PROBE" && got == secondline.Deny && !denies(r.line):
					t.Errorf("%s: %q: expected %s, refused by the second line and not by the policy", r.where, r.line, r.expected)
				}
			}
			t.Logf("%s refuses %d of %d plain DENY rows by the second line's deny rules (%d refused by its own check first); the re-implementation agrees on %d of %d rows",
				agent, denied, deny, own, agree, len(rows)-own)
			i := slices.IndexFunc(secondline.Figures, func(f secondline.Figure) bool { return f.Agent == agent })
			if i < 0 {
				t.Fatalf("no figure recorded for %s", agent)
			}
			if f := secondline.Figures[i]; f.PlainDeny != deny || f.PlainDenied != denied {
				t.Errorf("secondline.Figures say %s refuses %d of %d plain DENY rows; the agent refused %d of %d", agent, f.PlainDenied, f.PlainDeny, denied, deny)
			}
		})
	}
}

// decideRows has the agent, set up by run with the rules of out, make one
// shell call per row, and records each call's result.
func decideRows(t *testing.T, run secondLineRun, out secondline.Output, rows []*sampleRow) {
	w := newWorld(t)
	shellDir, log := w.recorderShell()
	agentRun := run.setup(w, out, shellDir)
	var calls []toolCall
	for _, r := range rows {
		calls = append(calls, run.call(r.line))
	}
	m := newModelServer(t, calls...)
	o := agentRun(m)
	res := m.CallResults()
	if len(res) != len(rows) {
		logData, _ := os.ReadFile(log)
		t.Errorf("%d results for %d calls; output:\n%s\nrecorder:\n%s", len(res), len(rows), o, logData)
		return
	}
	for i, r := range rows {
		r.result = res[i]
	}
}
