package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/matcher"
)

const cacheConfig = `{
  "userSettings": {"globalPermissionGrants": {
    "allow": ["command(regex:^git status$)", "command(regex:^ls$)"],
    "ask": ["command(regex:^git push\\b.*$)"],
    "deny": ["command(regex:^git push -f$)"]
  }},
  "agentShim": {
    "version": 1, "profile": "local-changes", "mode": "ask",
    "pathScope": {"allow": ["/opt/data/..."]},
    "tools": {"allow": ["bash:make *"], "deny": ["write_file:/etc/*"]},
    "rules": [
      {"line": "git push --force", "category": "never_allow",
       "source": {"overlay": ".", "file": ".agents/config/permissions/never_allow.txt", "line": 2},
       "grants": ["command(regex:^git push -f$)"]},
      {"line": "git status", "category": "read_only",
       "source": {"overlay": ".", "file": ".agents/config/permissions/read_only.txt", "line": 1},
       "grants": ["command(regex:^git status$)"]}
    ]
  }
}
`

// countLoads counts the reads of config.json itself.
func countLoads(t *testing.T) *int {
	n := new(int)
	orig := loadConfig
	loadConfig = func(path string) (*config.File, error) {
		*n++
		return orig(path)
	}
	t.Cleanup(func() { loadConfig = orig })
	return n
}

// cachedOptions are Load's options with a compact copy in cache and its
// key in dir/state.
func cachedOptions(dir, cache string) Options {
	return Options{Scope: NewScope(dir), CacheDir: cache}
}

func TestCompactPolicy(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	cache := filepath.Join(dir, "cache")
	if err := os.WriteFile(cfg, []byte(cacheConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	loads := countLoads(t)
	lines := []string{"git status", "git push -f", "git push origin +main", "git push", "ls", "make all", "rm -rf /", "npm test",
		"/usr/sbin/mkf[s] /dev/sda", "/usr/bin/gi? push -f", "/sbin/shutdow? now"}
	decide := func(g *Gate) []string {
		var out []string
		for _, l := range lines {
			d := g.DecideBash(l)
			out = append(out, l+" => "+d.Verdict.String()+": "+d.Reason)
		}
		return out
	}
	direct, err := Load(cfg, Options{Scope: NewScope(dir)})
	if err != nil {
		t.Fatal(err)
	}
	want := decide(direct)
	*loads = 0

	for i := range 3 {
		g, err := Load(cfg, cachedOptions(dir, cache))
		if err != nil {
			t.Fatal(err)
		}
		got := decide(g)
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("load %d: %s, want %s", i, got[j], want[j])
			}
		}
		if g.Mode() != direct.Mode() || g.Level() != direct.Level() {
			t.Errorf("load %d: mode/level %v/%v, want %v/%v", i, g.Mode(), g.Level(), direct.Mode(), direct.Level())
		}
	}
	if *loads != 1 {
		t.Errorf("config.json read %d times over 3 loads, want once", *loads)
	}

	// A changed config.json is read again at once: the copy never
	// outlives the file it was made from.
	changed := []byte(`{"userSettings": {"globalPermissionGrants": {"deny": ["command(regex:^git status$)"]}}}`)
	if err := os.WriteFile(cfg, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := Load(cfg, cachedOptions(dir, cache))
	if err != nil {
		t.Fatal(err)
	}
	if d := g.DecideBash("git status"); d.Verdict != Deny {
		t.Errorf("after the change, git status is %v, want deny", d.Verdict)
	}
	if *loads != 2 {
		t.Errorf("config.json read %d times, want 2 after a change", *loads)
	}

	// A replaced file with the same size and times is still new (inode).
	repl := filepath.Join(dir, "config.new")
	if err := os.WriteFile(repl, []byte(cacheConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(repl, old, old)
	if err := os.Rename(repl, cfg); err != nil {
		t.Fatal(err)
	}
	g, err = Load(cfg, cachedOptions(dir, cache))
	if err != nil {
		t.Fatal(err)
	}
	if d := g.DecideBash("git status"); d.Verdict != Allow {
		t.Errorf("after the rename, git status is %v, want allow", d.Verdict)
	}

	// A corrupt copy is ignored, never trusted.
	abs, _ := filepath.Abs(cfg)
	if err := os.WriteFile(cachePath(cache, abs), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := *loads
	if _, err := Load(cfg, cachedOptions(dir, cache)); err != nil {
		t.Fatal(err)
	}
	if *loads != n+1 {
		t.Errorf("a corrupt copy was used")
	}

	// A bad config.json is an error with or without a cache.
	if err := os.WriteFile(cfg, []byte(`{"userSettings": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(cfg, cachedOptions(dir, cache)); err == nil {
		t.Error("bad config.json: want an error")
	}
}

// fuchsiaSizeConfig writes a config.json of the size agents-setup makes from
// a large checkout: 385 grants of about 1.5 KB, each with its rule entry.
func fuchsiaSizeConfig(tb testing.TB, path string) {
	var allow, ask, deny []string
	var rules []config.Rule
	long := strings.Repeat(`(?:[^\x00-\x20\x7f;&|<>()$\x60\\"']|\\[^\x00-\x1f\x7f])*`, 28)
	for i := range 385 {
		g := fmt.Sprintf("command(regex:^tool%d %s$)", i, long)
		line := fmt.Sprintf("tool%d sub%d", i%100, i)
		switch i % 5 {
		case 0:
			deny = append(deny, g)
		case 1:
			ask = append(ask, g)
		default:
			allow = append(allow, g)
		}
		rules = append(rules, config.Rule{Line: line, Category: "read_only",
			Source: config.Source{Overlay: ".", File: ".agents/config/permissions/read_only.txt", Line: i + 1},
			Grants: []string{g}})
	}
	doc := map[string]any{
		"userSettings": map[string]any{"globalPermissionGrants": map[string]any{"allow": allow, "ask": ask, "deny": deny}},
		"agentShim":    map[string]any{"version": 1, "profile": "local-changes", "rules": rules},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.json")
	fuchsiaSizeConfig(b, cfg)
	fi, _ := os.Stat(cfg)
	b.Logf("config.json: %d bytes", fi.Size())
	for _, bc := range []struct {
		name  string
		cache string
	}{{"Direct", ""}, {"Compact", filepath.Join(dir, "cache")}} {
		b.Run(bc.name, func(b *testing.B) {
			opts := Options{Scope: NewScope(dir)}
			if bc.cache != "" {
				opts = cachedOptions(dir, bc.cache)
			}
			b.ReportAllocs()
			for b.Loop() {
				g, err := Load(cfg, opts)
				if err != nil {
					b.Fatal(err)
				}
				g.DecideBash("git status")
			}
		})
	}
}

// TestCopyCannotLiftNever: the compact copy decides as config.json does,
// so it must live where the agent cannot write (see Load); but even a copy
// written by someone who can (yolo, full access, everything allowed, no
// rule of the never-allow list) leaves the never-allow list standing:
// its rules come from the binary. Copies of older formats are not read.
func TestCopyCannotLiftNever(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	cache := filepath.Join(dir, "cache")
	if err := os.WriteFile(cfg, []byte(cacheConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := cachedOptions(dir, cache)
	if _, err := Load(cfg, opts); err != nil { // writes the real copy
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(cfg)
	cp := cachePath(cache, abs)
	fi, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := stampOf(fi)
	forged := &compact{Version: compactVersion, Path: abs, Stamp: st, Mode: "yolo", Profile: "full-access", Count: 1,
		Sections: []matcher.Section{{Name: "", Rules: []matcher.Stored{{Text: "command(*)", Decision: matcher.Allow}}}}}
	if err := os.WriteFile(cp, forged.marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	loads := countLoads(t)
	g, err := Load(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if *loads != 0 || g.Mode() != ModeYolo {
		t.Fatalf("the copy was not used (config.json read %d times, mode %v)", *loads, g.Mode())
	}
	for _, l := range []string{"rm -rf /", "rm -rf ~", "git push --force origin main", "git -C x push -f", "mkfs.ext4 /dev/sda",
		"dd if=/dev/zero of=/dev/sda", "/sbin/mkf[s] /dev/sda", "git reset --hard", "bash -c 'git push -f'"} {
		if d := g.DecideBash(l); d.Verdict != Deny || !strings.Contains(d.Reason, "never allowed") {
			t.Errorf("%s: %v (%s), want the never-allow list to deny it", l, d.Verdict, d.Reason)
		}
	}
	if d := g.DecideBash("git status"); d.Verdict != Allow {
		t.Errorf("git status: %v (%s): the copy was read", d.Verdict, d.Reason)
	}
	for v := 1; v < compactVersion; v++ {
		old := strings.Replace(string(forged.marshal()), compactHeader, fmt.Sprintf("agent-shim compact policy %d", v), 1)
		if err := os.WriteFile(cp, []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		if g, err := Load(cfg, opts); err != nil || g.Mode() != ModeAsk {
			t.Errorf("a copy of format %d was read: %v, mode %v", v, err, g.Mode())
		}
	}
}

// TestCompactRegions: a copy whose header is authentic but whose regions
// were changed, moved, emptied, cut short or taken from another copy
// never changes a verdict to a weaker one; the commands that need such a
// region are asked about, and the copy is made again from config.json.
// regionConfig has a deny rule the built-in never-allow rules do not repeat.
const regionConfig = `{
  "userSettings": {"globalPermissionGrants": {
    "allow": ["command(regex:^git status$)", "command(regex:^ls$)", "command(regex:^make\\b.*$)"],
    "ask": ["command(regex:^git push\\b.*$)"],
    "deny": ["command(regex:^make deploy$)"]
  }},
  "agentShim": {
    "version": 1, "profile": "local-changes", "mode": "ask",
    "rules": [
      {"line": "make deploy", "category": "never_allow",
       "source": {"overlay": ".", "file": ".agents/config/permissions/never_allow.txt", "line": 2},
       "grants": ["command(regex:^make deploy$)"]},
      {"line": "git status", "category": "read_only",
       "source": {"overlay": ".", "file": ".agents/config/permissions/read_only.txt", "line": 1},
       "grants": ["command(regex:^git status$)"]}
    ]
  }
}
`

func TestCompactRegions(t *testing.T) {
	t.Run("read", testCompactRegions)
	t.Run("in pieces", func(t *testing.T) {
		old := headRead
		headRead = 64 // every region read when a decision needs it
		defer func() { headRead = old }()
		testCompactRegions(t)
	})
}

func testCompactRegions(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	cache := filepath.Join(dir, "cache")
	if err := os.WriteFile(cfg, []byte(regionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := cachedOptions(dir, cache)
	load := func() *Gate {
		g, err := Load(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	load()
	direct, err := Load(cfg, Options{Scope: NewScope(dir)})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(cfg)
	cp := cachePath(cache, abs)
	real, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	text := string(real)
	// The table's first and second entries, swapped.
	table := strings.Index(text, "\nend\n") + len("\nend\n")
	e0, e1 := text[table:table+tableLine], text[table+tableLine:table+2*tableLine]
	for _, tc := range []struct{ name, data string }{
		{"two regions swapped", text[:table] + e1 + e0 + text[table+2*tableLine:]},
		{"a region emptied", text[:table] + e0[:17] + "00000000\n" + text[table+tableLine:]},
		{"cut short", text[:len(text)-100]},
	} {
		if err := os.WriteFile(cp, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		g := load()
		for _, line := range []string{"make deploy", "make", "git status", "git push origin main", "ls"} {
			d, want := g.DecideBash(line), direct.DecideBash(line)
			if d.Verdict != want.Verdict && (d.Verdict != Ask || !strings.Contains(d.Reason, "cannot be read")) {
				t.Errorf("%s: %s is %v (%s), want %v or ask because the copy cannot be read", tc.name, line, d.Verdict, d.Reason, want.Verdict)
			}
		}
		// The next load reads config.json again and answers as before.
		if v := load().DecideBash("make deploy").Verdict; v != Deny {
			t.Errorf("%s: after the bad copy, make deploy is %v, want deny", tc.name, v)
		}
		if v := load().DecideBash("git status").Verdict; v != Allow {
			t.Errorf("%s: after the bad copy, git status is %v, want allow", tc.name, v)
		}
	}
}

// TestCompactCorpus decides every line of both adversarial corpora with a
// gate read from config.json and with one read from its compact copy: the
// same verdicts and reasons, for managed rules and for hand grants.
func TestCompactCorpus(t *testing.T) {
	var lines []string
	for _, name := range []string{"adversarial.tsv", "adversarial-2.tsv"} {
		data, err := os.ReadFile(filepath.Join("..", "matcher", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if i > 0 {
				cmd, _, _ := strings.Cut(l, "\t")
				lines = append(lines, strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(cmd))
			}
		}
	}
	lists := map[string][]string{
		"allow": {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build", "git grep", "find", "make", "npm test", "jiri runp"},
		"ask":   {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		"deny":  {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	}
	for _, managed := range []bool{true, false} {
		var g config.Grants
		var rules []config.Rule
		for _, list := range []string{"allow", "ask", "deny"} {
			for i, line := range lists[list] {
				grant := "command(" + line + ")"
				if managed {
					grant = fmt.Sprintf("command(regex:^managed-%s-%d$)", list, i)
					rules = append(rules, config.Rule{Line: line, Category: list, Source: config.Source{Overlay: ".", File: list + ".txt", Line: i + 1}, Grants: []string{grant}})
				}
				switch list {
				case "allow":
					g.Allow = append(g.Allow, grant)
				case "ask":
					g.Ask = append(g.Ask, grant)
				default:
					g.Deny = append(g.Deny, grant)
				}
			}
		}
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.json")
		f, err := config.Parse(cfg, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		f.Grants, f.Shim.Rules, f.Shim.Profile = g, rules, "local-changes"
		data, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, data, 0o600); err != nil {
			t.Fatal(err)
		}
		direct, err := Load(cfg, Options{Scope: NewScope(dir)})
		if err != nil {
			t.Fatal(err)
		}
		opts := cachedOptions(dir, filepath.Join(dir, "cache"))
		if _, err := Load(cfg, opts); err != nil { // writes the copy
			t.Fatal(err)
		}
		for _, line := range lines {
			cached, err := Load(cfg, opts) // a fresh gate a line, as the hook has
			if err != nil {
				t.Fatal(err)
			}
			want, got := direct.DecideBash(line), cached.DecideBash(line)
			if want.Verdict != got.Verdict || want.Reason != got.Reason {
				t.Errorf("managed=%v %q:\n config.json: %v %s\n copy:        %v %s", managed, line, want.Verdict, want.Reason, got.Verdict, got.Reason)
			}
		}
	}
}

// TestCompactNeverList: the never-allow rules are not in the compact
// copy; a gate read from it denies them all the same.
func TestCompactNeverList(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	cache := filepath.Join(dir, "cache")
	if err := os.WriteFile(cfg, []byte(regionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := cachedOptions(dir, cache)
	lines := []string{"rm -rf /", "mkfs.ext4 /dev/sda", "dd if=/dev/zero of=/dev/sda", "/sbin/mkf[s] /dev/sda", "git push --force"}
	check := func(name string) {
		t.Helper()
		g, err := Load(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if d := g.DecideBash(l); d.Verdict != Deny || !strings.Contains(d.Reason, "never allowed") {
				t.Errorf("%s: %s: %v (%s)", name, l, d.Verdict, d.Reason)
			}
		}
	}
	check("config.json")
	loads := countLoads(t)
	check("the copy")
	if *loads != 0 {
		t.Fatalf("the copy was not used: config.json read %d times", *loads)
	}
	abs, _ := filepath.Abs(cfg)
	data, err := os.ReadFile(cachePath(cache, abs))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "\tbuiltin\t") || strings.Contains(string(data), "mkfs") {
		t.Errorf("the copy holds never-allow rules:\n%s", data)
	}
}
