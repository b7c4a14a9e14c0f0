package gate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/statefile"
)

const testConfig = `{
  "userSettings": {"globalPermissionGrants": {
    "allow": ["command(regex:^git status$)", "command(ls)"],
    "ask": ["command(regex:^git push( .*)?$)"],
    "deny": ["command(curl)"]
  }},
  "agentShim": {
    "version": 1,
    "profile": "read-only",
    "rules": [
      {"line": "git push", "category": "external_changes",
       "source": {"overlay": ".", "file": ".agents/config/permissions/external_changes.txt", "line": 3},
       "grants": ["command(regex:^git push( .*)?$)"]}
    ],
    "mode": "allow",
    "shell": "/bin/bash",
    "pathScope": {"allow": ["/opt/data/...", "docs/*.md"]},
    "tools": {"allow": ["bash:make *", "read_file:/etc/hostname"], "deny": ["write_file:secrets/**"]}
  }
}`

func writeConfig(t *testing.T, content string) (path, proj string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj = filepath.Join(dir, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, proj
}

func TestLoad(t *testing.T) {
	path, proj := writeConfig(t, testConfig)
	user := filepath.Join(filepath.Dir(proj), "home", ".gemini")
	var audit bytes.Buffer
	scope := NewScope(proj, user)
	g, err := Load(path, Options{Scope: scope,
		Prompter: &scripted{answer: func(Request) Answer { return AnswerOnce }},
		Audit:    &audit, Now: func() time.Time { return fixed }, Session: "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode() != ModeAllow || g.Level() != LevelReadOnly {
		t.Errorf("mode %v, level %v; want allow, read-only", g.Mode(), g.Level())
	}
	if got := g.Scope().Patterns(); strings.Join(got, ",") != "/opt/data/...,docs/*.md" {
		t.Errorf("scope patterns %q", got)
	}
	ctx := context.Background()
	checks := []struct {
		name string
		err  error
		want string
	}{
		{"allow grant", g.checkBash(ctx, "git status"), "allow"},
		{"managed ask rule, matched by its line", g.checkBash(ctx, "git -C x push origin main"), "allow"}, // asked, answered once
		{"deny grant", g.checkBash(ctx, "curl -s x"), "deny"},
		{"tool allow", g.checkBash(ctx, "make all"), "allow"},
		{"never-allow", g.checkBash(ctx, "git push -f"), "deny"},
		{"user root in scope", g.checkFileRead(ctx, "Read", user+"/config/config.json"), "allow"},
		{"scope tree", g.checkFileRead(ctx, "Read", "/opt/data/a/b"), "allow"},
		{"scope glob, relative to the project", g.checkFileRead(ctx, "Read", proj+"/docs/x.md"), "allow"},
		{"tool deny, relative to the project", g.checkFileWrite(ctx, "Write", proj+"/secrets/k"), "deny"},
		{"write at read-only, allow mode", g.checkFileWrite(ctx, "Write", proj+"/x.go"), "allow"},
		{"tool allow outside the scope", g.checkFileRead(ctx, "Read", "/etc/hostname"), "allow"},
	}
	for _, c := range checks {
		if got := outcome(t, c.err); got != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.name, got, c.err, c.want)
		}
	}
	if len(g.approvalsMade()) != 1 || g.approvalsMade()[0].Key != "git -C x push origin main" {
		t.Errorf("approvals: %+v", g.approvalsMade())
	}
	if audit.Len() == 0 {
		t.Errorf("the Audit option was not used")
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	g, err := Load(filepath.Join(dir, "none.json"), Options{Scope: NewScope(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode() != ModeAsk || g.Level() != LevelLocalChanges {
		t.Errorf("mode %v, level %v; want ask, local-changes", g.Mode(), g.Level())
	}
	if err := g.checkBash(context.Background(), "ls"); !errors.Is(err, ErrNeedsApproval) {
		t.Errorf("ls with no config: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		shim string
		want string
	}{
		{`{"mode": "sometimes"}`, `agentShim.mode: unknown value "sometimes"`},
		{`{"profile": "god-mode"}`, `agentShim.profile: unknown profile "god-mode"`},
		{`{"pathScope": {"allow": ["/..."]}}`, `agentShim.pathScope.allow[0]: path pattern "/...": allows the whole file system`},
		{`{"tools": {"allow": ["*"]}}`, `agentShim.tools.allow[0]: pattern "*": allows every tool`},
		{`{"tools": {"deny": ["bash:[x"]}}`, `agentShim.tools.deny[0]: pattern "bash:[x": unclosed [`},
	}
	for _, tc := range tests {
		path, proj := writeConfig(t, `{"agentShim": `+tc.shim+`}`)
		_, err := Load(path, Options{Scope: NewScope(proj)})
		if err == nil {
			t.Errorf("%s: no error", tc.shim)
			continue
		}
		if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s: …%s…", tc.shim, err, path, tc.want)
		}
	}
	path, proj := writeConfig(t, `{"agentShim": `)
	if _, err := Load(path, Options{Scope: NewScope(proj)}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("broken JSON: %v", err)
	}
}

// TestLoadOptions: every field of Options is used or refused.
func TestLoadOptions(t *testing.T) {
	path, proj := writeConfig(t, testConfig)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"mode", Options{Mode: ModeYolo}, "Options.Mode is config.json's agentShim.mode"},
		{"level", Options{Level: LevelFullAccess}, "Options.Level is config.json's agentShim.profile"},
	} {
		if _, err := Load(path, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want …%s…", tc.name, err, tc.want)
		}
	}

	// Policy and Tools add to the file's; Scope gives the roots.
	p := matcher.New()
	p.Add(matcher.Deny, "npm publish", matcher.Source{})
	tools, err := NewToolPolicy(proj, nil, []string{"bash:make install"})
	if err != nil {
		t.Fatal(err)
	}
	scope := NewScope(proj)
	g, err := Load(path, Options{Policy: p, Tools: tools, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want Verdict
	}{
		{"npm publish", Deny},  // Options.Policy
		{"make install", Deny}, // Options.Tools deny
		{"make all", Allow},    // config.json's tools.allow
		{"curl -s x", Deny},    // config.json's deny grant
		{"git status", Allow},  // config.json's allow grant
	} {
		if got := g.DecideBash(c.in).Verdict; got != c.want {
			t.Errorf("%s: %v, want %v", c.in, got, c.want)
		}
	}
	if !g.Scope().contains(proj+"/a") || g.Scope() == scope {
		t.Errorf("the scope is not a copy of Options.Scope with its root")
	}
	if len(scope.Patterns()) != 0 {
		t.Errorf("Load changed the caller's scope: %q", scope.Patterns())
	}
}

// TestLoadHost: the host's settings come from the file and from its
// compact copy alike.
func TestLoadHost(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		shim           string
		on, know       bool
		shell, runtime string
		secrets        []string
	}{
		{`{"version": 1, "rules": [], "requireHook": true}`, true, true, "", "", nil},
		{`{"version": 1, "rules": [], "shell": "/bin/zsh", "runtime": "require"}`, false, true, "/bin/zsh", "require", nil},
		{`{"version": 1, "rules": [], "secrets": ["~/.vault-token", "/etc/k\tey"]}`, false, true, "", "", []string{"~/.vault-token", "/etc/k\tey"}},
		{`{"version": 1, "rules": []}`, false, true, "", "", nil},
		{"", false, true, "", "", nil}, // no file: the defaults
	} {
		cfg := filepath.Join(dir, "missing.json")
		if tc.shim != "" {
			cfg = filepath.Join(dir, "config.json")
			if err := os.WriteFile(cfg, []byte(`{"agentShim": `+tc.shim+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// From the file, then (cached) from the compact copy.
		cache := t.TempDir()
		for _, opts := range []Options{{}, {CacheDir: cache}, {CacheDir: cache}} {
			g, err := Load(cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if h, know := g.Host(); h.RequireHook != tc.on || know != tc.know || h.Shell != tc.shell || h.Runtime != tc.runtime || !slices.Equal(h.Secrets, tc.secrets) {
				t.Errorf("%s (cache %q): Host() = %+v, %v, want %v, %q, %q, %v", tc.shim, opts.CacheDir, h, know, tc.on, tc.shell, tc.runtime, tc.know)
			}
		}
	}
	if h, know := New(Options{}).Host(); !reflect.DeepEqual(h, Host{}) || know {
		t.Errorf("New: Host() = %+v, %v, want zero, false", h, know)
	}
}

// TestLoadPrograms: the overlays' program facts agents-setup copied into
// agentShim.programs hold in the gate's decisions, read from config.json
// or from its compact copy; a fact that cannot be read fails the load with
// the file, the fact's file and its line.
func TestLoadPrograms(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	text := `{"userSettings": {"globalPermissionGrants": {"allow": ["command(regex:^mytool run(\\s.*)?$)"]}},
  "agentShim": {"version": 2, "profile": "local-changes",
    "rules": [{"file": ".agents/config/permissions/read_only.txt", "overlay": ".", "category": "read_only", "lines": [[1, "mytool run", "` + statefile.Digest(`command(regex:^mytool run(\s.*)?$)`) + `"]]}],
    "programs": [{"file": ".agents/config/programs.txt", "text": "[mytool]\nexec --hook\nwrite --out\n"}]}}`
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Scope: NewScope(dir)}, cachedOptions(dir, filepath.Join(dir, "cache")), cachedOptions(dir, filepath.Join(dir, "cache"))} {
		g, err := Load(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d := g.DecideBash("mytool run x"); d.Verdict != Allow {
			t.Errorf("mytool run x: %v (%s)", d.Verdict, d.Reason)
		}
		for _, line := range []string{"mytool run --hook 'rm -rf ~'", "mytool run --hook=x", "mytool run --out " + filepath.Join(dir, ".git", "config")} {
			if d := g.DecideBash(line); d.Verdict == Allow {
				t.Errorf("%s: allowed (%s), though programs.txt says otherwise", line, d.Reason)
			}
		}
	}
	bad := strings.Replace(text, `exec --hook`, `frobnicate --hook`, 1)
	if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(cfg, Options{Scope: NewScope(dir)})
	if err == nil || !strings.Contains(err.Error(), "config.json") || !strings.Contains(err.Error(), ".agents/config/programs.txt:2") {
		t.Errorf("a bad fact: %v", err)
	}
}

// TestLiftKeepsOverlayFloor: a tool allow pattern, or a session answer for
// the program (t), lifts a command no rule matches, but never a floor,
// and a floor an overlay's program fact sets is a floor like the built-in
// ones: `mytool --hook CMD` runs CMD, so neither lifts it.
func TestLiftKeepsOverlayFloor(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	text := `{"userSettings": {"globalPermissionGrants": {}},
  "agentShim": {"version": 2, "profile": "local-changes", "tools": {"allow": ["bash:mytool *"]},
    "programs": [{"file": ".agents/config/programs.txt", "text": "[mytool]\nexec --hook\n"}]}}`
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Scope: NewScope(dir)}, cachedOptions(dir, filepath.Join(dir, "cache")), cachedOptions(dir, filepath.Join(dir, "cache"))} {
		g, err := Load(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d := g.DecideBash("mytool build x"); d.Verdict != Allow {
			t.Errorf("mytool build x: %v (%s), want the tool pattern to allow it", d.Verdict, d.Reason)
		}
		for _, line := range []string{`mytool --hook "rm -rf build"`, `mytool --hook=x`} {
			if d := g.DecideBash(line); d.Verdict == Allow {
				t.Errorf("%s: allowed by the tool pattern (%s), though programs.txt makes --hook a floor", line, d.Reason)
			}
		}
		g.Apply(Request{Tool: "Bash", Key: "mytool other", Programs: []string{"mytool"}}, AnswerTool)
		if d := g.DecideBash(`mytool --hook "rm -rf build"`); d.Verdict == Allow {
			t.Errorf("after t for mytool: allowed (%s)", d.Reason)
		}
	}
}
