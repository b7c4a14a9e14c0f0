package install

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

// policyOf compiles a policy that denies deny and asks ask (the
// never-allow list aside: the rules here stand for it).
func policyOf(t *testing.T, deny, ask []string) *secondline.Policy {
	t.Helper()
	grants := func(lines []string) []string {
		out := []string{}
		for _, l := range lines {
			out = append(out, "command("+l+")")
		}
		return out
	}
	doc, _ := json.Marshal(map[string]any{"userSettings": map[string]any{"globalPermissionGrants": map[string]any{
		"deny": grants(deny), "ask": grants(ask)}}})
	f, err := config.Parse("config.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	return secondline.Compile(secondline.Rules(f, nil), programs.Builtin())
}

// permissions reads Claude Code's permissions lists from settings.
func permissions(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Permissions map[string][]string }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Permissions
}

// TestSecondLineClaude: install merges the compiled rules into the
// settings' permissions lists beside the person's own entries (one of
// theirs equal to one of ours stays theirs), an install with a changed
// policy takes out what the policy no longer gives and adds what it now
// does, and uninstall gives back every byte.
func TestSecondLineClaude(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	const in = "{\n  \"permissions\": {\n    \"deny\": [\n      \"Bash(curl *)\",\n      \"Bash(git push --force)\"\n    ],\n    \"allow\": [\"Read\"]\n  },\n  \"model\": \"x\"\n}\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options(t, agents.Claude, path)
	o.Policy = policyOf(t, []string{"git push --force"}, []string{"git push"})
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p := permissions(t, path)
	for _, want := range []string{"Bash(curl *)", "Bash(git push --force)", "Bash(git push --force *)", "Bash(/usr/bin/git push --force)"} {
		if !slices.Contains(p["deny"], want) {
			t.Errorf("permissions.deny lacks %q: %q", want, p["deny"])
		}
	}
	if !slices.Contains(p["ask"], "Bash(git push)") || !slices.Equal(p["allow"], []string{"Read"}) {
		t.Errorf("permissions %q", p)
	}
	if n := strings.Count(strings.Join(p["deny"], "\n"), "Bash(git push --force)\n"); n != 1 {
		t.Errorf("Bash(git push --force) is in permissions.deny %d times", n)
	}

	// The policy changes: git push --force goes, rm -r / comes.
	o.Policy = policyOf(t, []string{"rm -r /"}, nil)
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p = permissions(t, path)
	if slices.Contains(p["deny"], "Bash(git push --force *)") || len(p["ask"]) != 0 {
		t.Errorf("rules the policy no longer gives are still there: %q", p)
	}
	if !slices.Contains(p["deny"], "Bash(git push --force)") || !slices.Contains(p["deny"], "Bash(curl *)") {
		t.Errorf("the person's own entries went: %q", p["deny"])
	}
	if !slices.Contains(p["deny"], "Bash(rm -r /)") {
		t.Errorf("the new rule is not there: %q", p["deny"])
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if back, _ := os.ReadFile(path); string(back) != in {
		t.Errorf("uninstall gave\n%s\nwant\n%s", back, in)
	}
}

// TestSecondLineClaudeFresh: into settings without permissions, install
// makes the object and its lists, and uninstall takes them out again.
func TestSecondLineClaudeFresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	const in = "{\"model\": \"x\"}\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options(t, agents.Claude, path)
	o.Policy = policyOf(t, []string{"git push --force"}, []string{"git push"})
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if p := permissions(t, path); len(p["deny"]) == 0 || len(p["ask"]) == 0 {
		t.Errorf("permissions %q", p)
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if back, _ := os.ReadFile(path); string(back) != in {
		t.Errorf("uninstall gave\n%s\nwant\n%s", back, in)
	}
}

// TestSecondLineFile: for the agents whose rules are a file of their own
// (Codex's .rules, Gemini CLI's policy TOML), install writes the compiled
// rules there, again when the policy changes, and uninstall removes the
// file and the directory it made. A file there that is not agent-shim's
// stops install before anything is written.
func TestSecondLineFile(t *testing.T) {
	for _, a := range []*agents.Agent{agents.Codex, agents.Gemini} {
		t.Logf("agent: %s", a.Name)
		dir := t.TempDir()
		path := filepath.Join(dir, filepath.Base(must(a.User.Path(func(string) string { return "/h" }))))
		o := options(t, a, path)
		o.Policy = policyOf(t, []string{"git push --force"}, nil)
		rules := a.RulesFile(path, false)
		if !strings.HasPrefix(rules, dir+"/") {
			t.Fatalf("the rules go to %s, outside %s", rules, dir)
		}
		if _, err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(rules)
		if want := a.Rules.Compile(o.Policy).Text; err != nil || string(data) != string(want) {
			t.Fatalf("%s: %v; not the compiled rules", rules, err)
		}
		o.Policy = policyOf(t, []string{"rm -r /"}, nil)
		if _, err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(rules); string(data) != string(a.Rules.Compile(o.Policy).Text) {
			t.Errorf("%s is not the new policy's rules", rules)
		}
		if _, err := Uninstall(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Dir(rules)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after uninstall: %v", filepath.Dir(rules), err)
		}

		// Someone else's file in the way.
		if err := os.MkdirAll(filepath.Dir(rules), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rules, []byte("# mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(path)
		if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not agent-shim's second line") {
			t.Errorf("install over a file of someone else's: %v", err)
		}
		if data, _ := os.ReadFile(rules); string(data) != "# mine\n" {
			t.Errorf("the file in the way changed: %q", data)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("install wrote the settings although it stopped: %v", err)
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
