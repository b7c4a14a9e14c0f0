package agents

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

// TestAllComplete: every agent of the table says what each consumer
// reads of it — the hook (events, answer), install (tiers, group),
// doctor (the shell tool of its self-test), shell mode (how it gets a
// shell) — and no two share a name. An agent added to All with a field
// left out fails here.
func TestAllComplete(t *testing.T) {
	seen := map[string]bool{}
	env := func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	for _, a := range All {
		t.Logf("agent: %s", a.Name)
		if a.Name == "" || a.Title == "" || a.Program == "" || seen[a.Name] {
			t.Errorf("%q: a name, title and program, once each", a.Name)
		}
		seen[a.Name] = true
		if ByName(a.Name) != a {
			t.Errorf("ByName(%q) is not the agent", a.Name)
		}
		if a.Pre == "" || a.ShellTool == "" || a.answer == nil || a.group == nil || a.stateDirs == nil || len(a.Guarded) == 0 {
			t.Errorf("%s: the hook protocol (Pre, ShellTool, answer), its group and its directories are needed", a.Name)
		}
		if a.ShellEnv == "" && a.NoShell == "" {
			t.Errorf("%s: neither ShellEnv nor why it has none (NoShell)", a.Name)
		}
		if a.Floor.IsZero() != (a.FloorWhat == "") || a.Floor.IsZero() != (a.Upgrade == "") {
			t.Errorf("%s: a floor comes with what older releases miss and how to upgrade", a.Name)
		}
		for _, tier := range []*Tier{&a.User, &a.Managed} {
			p, err := tier.Path(env)
			if err != nil || !strings.HasPrefix(p, "/") {
				t.Errorf("%s: tier path %q, %v", a.Name, p, err)
			}
		}
		for _, ev := range a.Events() {
			g := a.Group("/x/agent-shim hook "+a.Name, ev)
			if len(g.Hooks) != 1 || !CatchAll(g.Matcher) || g.Hooks[0].Command == "" {
				t.Errorf("%s: group %+v for %s: one handler, every tool", a.Name, g, ev)
			}
			if a.OnFailure && ev == a.Pre && g.Hooks[0].OnFailure != "block" {
				t.Errorf("%s: OnFailure, but the group of %s does not block", a.Name, ev)
			}
		}
		if a.FailsOpen == a.OnFailure {
			t.Errorf("%s: a failed hook is blocked either by the agent (OnFailure) or by the guard (FailsOpen), once", a.Name)
		}
		if d := a.StateDirs(env); len(d) == 0 || !strings.HasPrefix(d[0], "/home/u/.") {
			t.Errorf("%s: state directories %q", a.Name, d)
		}
		if a.Rules.Compile == nil || (a.Rules.File == nil) == (a.Rules.Member == "") {
			t.Errorf("%s: the second line needs its compiler, and a file of its own or a settings member (one)", a.Name)
		}
		if a.Proven.IsZero() {
			t.Errorf("%s: no release the project proves", a.Name)
		}
		h := a.Headless
		if h.Args == nil || h.Env == nil || len(h.Tools) == 0 || h.Input == nil || h.HooksOff == nil {
			t.Errorf("%s: verify needs how to run it headless (Args, Env), its shell tool (Tools, Input) and its hooks' switch (HooksOff)", a.Name)
		}
	}
}

// TestAnswers: each agent's answer to each verdict, in its protocol. An
// agent that cannot ask answers ask with a deny that says how to approve;
// Default is the agent's own call (no output, or Gemini CLI's `{}`).
func TestAnswers(t *testing.T) {
	tests := []struct {
		agent *Agent
		v     matcher.Decision
		want  string // the permission or decision word; "" no output; "{}" an empty object
	}{
		{Claude, matcher.Allow, "allow"}, {Claude, matcher.Ask, "ask"}, {Claude, matcher.Deny, "deny"}, {Claude, matcher.Default, ""},
		{Codex, matcher.Allow, ""}, {Codex, matcher.Ask, "deny"}, {Codex, matcher.Deny, "deny"}, {Codex, matcher.Default, ""},
		{Gemini, matcher.Allow, "allow"}, {Gemini, matcher.Ask, "deny"}, {Gemini, matcher.Deny, "deny"}, {Gemini, matcher.Default, "{}"},
	}
	for _, tc := range tests {
		t.Logf("input: %s %v", tc.agent.Name, tc.v)
		var b bytes.Buffer
		if err := tc.agent.Answer(&b, Answer{Verdict: tc.v, Reason: "why", Hint: "add it"}); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Decision, Reason string
			H                struct{ PermissionDecision, PermissionDecisionReason string } `json:"hookSpecificOutput"`
		}
		switch {
		case tc.want == "":
			if b.Len() != 0 {
				t.Errorf("wrote %q, want nothing", b.String())
			}
			continue
		case tc.want == "{}":
			if b.String() != "{}\n" {
				t.Errorf("wrote %q, want {}", b.String())
			}
			continue
		case json.Unmarshal(b.Bytes(), &out) != nil:
			t.Errorf("not JSON: %q", b.String())
			continue
		}
		got, reason := out.Decision+out.H.PermissionDecision, out.Reason+out.H.PermissionDecisionReason
		if got != tc.want || !strings.HasPrefix(reason, "agent-shim: ") {
			t.Errorf("answered %q (%q), want %q", got, reason, tc.want)
		}
		if tc.v == matcher.Ask && !tc.agent.Asks && !strings.Contains(reason, "add it") {
			t.Errorf("an ask answered deny does not say how to approve: %q", reason)
		}
	}
}

// TestPermissionAnswer: the answer spelled out is what encoding/json
// writes of the structs, for reasons with every character JSON escapes.
func TestPermissionAnswer(t *testing.T) {
	type decision struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	type output struct {
		HookSpecificOutput decision `json:"hookSpecificOutput"`
	}
	for _, reason := range []string{"", "matches an allow rule: `git status` (x.txt:1)", "a && b > c < d",
		"quote \" back \\ tab \t nl \n nul \x00 bs \b ff \f", "bad \xff utf8", "sep \u2028", "日本"} {
		for _, d := range []string{"allow", "ask", "deny"} {
			var got, want bytes.Buffer
			if err := permissionAnswer(&got, d, reason); err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(output{decision{"PreToolUse", d, "agent-shim: " + reason}}); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s %q:\n got %s\nwant %s", d, reason, got.String(), want.String())
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		less bool // than 2.1.332
	}{
		{"2.1.332", true, false}, {"2.1.197", true, true}, {"2.2.0", true, false}, {"10.0.0", true, false},
		{"1.9.999", true, true}, {"2.1", false, false}, {"2.1.x", false, false}, {"2.1.-1", false, false},
	} {
		v, ok := ParseVersion(tc.in)
		if ok != tc.ok || ok && v.Less(Claude.Floor) != tc.less {
			t.Errorf("%q: %v %v, less %v; want %v, less %v", tc.in, v, ok, v.Less(Claude.Floor), tc.ok, tc.less)
		}
	}
}

// TestStateDirs: each agent's directory moves with the variable that
// moves it (Env), and is under the home directory otherwise.
func TestStateDirs(t *testing.T) {
	for _, a := range All {
		t.Logf("agent: %s", a.Name)
		for _, k := range a.Env {
			env := map[string]string{"HOME": "/home/u", k: "/elsewhere/" + k}
			d := a.StateDirs(func(v string) string { return env[v] })
			if len(d) == 0 || !strings.HasPrefix(d[0], "/elsewhere/"+k) {
				t.Errorf("%s=%s: state directories %q", k, env[k], d)
			}
			user, err := a.User.Path(func(v string) string { return env[v] })
			if err != nil || !strings.HasPrefix(user, d[0]+"/") {
				t.Errorf("%s=%s: settings %q (%v) not in %q", k, env[k], user, err, d)
			}
		}
	}
}

// TestTierHolds: a file is of a managed tier when it is the tier's file,
// or (Claude Code's managed-settings.d) a drop-in beside it; nothing
// else, however alike.
func TestTierHolds(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH": "/srv/gemini/system.json"}[k]
	}
	claude, _ := ByName("claude-code").Managed.Path(env)
	dir := filepath.Dir(claude)
	for _, tc := range []struct {
		agent, path string
		want        bool
	}{
		{"claude-code", claude, true},
		{"claude-code", filepath.Join(dir, "10-team.json"), true},
		{"claude-code", filepath.Join(dir, "..", "managed-settings.d", "agent-shim.json"), true},
		{"claude-code", filepath.Join(dir, "agent-shim.toml"), false},
		{"claude-code", "/tmp/image/etc/claude-code/managed-settings.d/agent-shim.json", false},
		{"codex", "/etc/codex/requirements.toml", true},
		{"codex", "/etc/codex/config.toml", false},
		{"codex", "/tmp/requirements.toml", false},
		{"gemini-cli", "/srv/gemini/system.json", true},
		{"gemini-cli", "/etc/gemini-cli/settings.json", false}, // the variable moves it
	} {
		if got := ByName(tc.agent).Managed.Holds(tc.path, env); got != tc.want {
			t.Errorf("%s's managed tier holds %s: %v, want %v", tc.agent, tc.path, got, tc.want)
		}
	}
}

// TestGuardedHoldsInstall: every file install writes into an agent's own
// directory (its settings, the companion, the rules' file) lies under a
// guarded path: under agent-shim run the tree writes the directory but
// none of these.
func TestGuardedHoldsInstall(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	for _, a := range All {
		t.Logf("agent: %s", a.Name)
		dirs := a.StateDirs(env)
		settings, err := a.User.Path(env)
		if err != nil || len(dirs) == 0 {
			t.Fatalf("%s: %q %v", a.Name, dirs, err)
		}
		files := []string{settings}
		if c := a.Companion(); c != nil {
			files = append(files, c.Path(settings))
		}
		if a.Rules.File != nil {
			files = append(files, a.Rules.File(settings, false))
		}
		for _, f := range files {
			rel, err := filepath.Rel(dirs[0], f)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: %s is not in its directory %s", a.Name, f, dirs[0])
				continue
			}
			if !a.IsGuarded(rel) {
				t.Errorf("%s: %s, which install writes, is not guarded (%q)", a.Name, rel, a.Guarded)
			}
		}
	}
}

// TestIsGuarded: a guarded file is itself only, a guarded directory
// itself and all below it; a name that merely begins like one is not.
func TestIsGuarded(t *testing.T) {
	for rel, want := range map[string]bool{
		"settings.json": true, "hooks/pre.sh": true, "hooks/a/b": true, "plugins/cache/p/x": true,
		"settings.json.bak": false, "hooks-away/pre.sh": false, "hooks": true, "plugins/store/s.json": false, "projects/x.jsonl": false,
	} {
		if got := Claude.IsGuarded(rel); got != want {
			t.Errorf("%s: guarded %v, want %v", rel, got, want)
		}
	}
}
