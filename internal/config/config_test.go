package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
	"github.com/google/go-cmp/cmp"
)

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GEMINI_CONFIG_DIR": "/c", "GEMINI_HOME": "/g", "HOME": "/h"}, "/c/config.json"},
		{map[string]string{"GEMINI_HOME": "/g", "HOME": "/h"}, "/g/config/config.json"},
		{map[string]string{"HOME": "/h"}, "/h/.gemini/config/config.json"},
	}
	for _, tc := range tests {
		t.Logf("env: %v", tc.env)
		got, err := DefaultPath(func(k string) string { return tc.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if _, err := DefaultPath(func(string) string { return "" }); err == nil {
		t.Error("no environment: got no error")
	}
}

func TestLoadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Exists || f.Path != path || len(f.Grants.Allow)+len(f.Grants.Ask)+len(f.Grants.Deny) != 0 {
		t.Errorf("got %+v, want an empty, non-existing file", f)
	}
}

func TestParse(t *testing.T) {
	in := `{
  "userSettings": {"globalPermissionGrants": {"allow": ["command(regex:^ls$)"], "ask": ["command(git push)"], "deny": []}},
  "agentShim": {
    "version": 1,
    "profile": "local-changes",
    "rules": [{"line": "ls", "category": "read_only", "source": {"overlay": ".", "file": "p/read_only.txt", "line": 3}, "grants": ["command(regex:^ls$)"]}],
    "mode": "ask",
    "shell": "/bin/bash",
    "pathScope": {"allow": ["/tmp/..."]},
    "tools": {"allow": ["bash:git *"], "deny": ["write_file:/etc/*"]},
    "secrets": ["~/.vault-token", "/etc/keys"]
  }
}`
	f, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Path:   "config.json",
		Exists: true,
		Grants: Grants{Allow: []string{"command(regex:^ls$)"}, Ask: []string{"command(git push)"}, Deny: []string{}},
		Shim: Shim{
			Version: 1,
			Profile: "local-changes",
			Rules: []Rule{{Line: "ls", Category: "read_only",
				Source: Source{Overlay: ".", File: "p/read_only.txt", Line: 3},
				Grants: []string{"command(regex:^ls$)"}}},
			Mode:      "ask",
			Shell:     "/bin/bash",
			PathScope: PathScope{Allow: []string{"/tmp/..."}},
			Tools:     Tools{Allow: []string{"bash:git *"}, Deny: []string{"write_file:/etc/*"}},
			Secrets:   []string{"~/.vault-token", "/etc/keys"},
		},
	}
	if f.Path != want.Path || f.Exists != want.Exists {
		t.Errorf("got Path %q, Exists %v", f.Path, f.Exists)
	}
	if diff := cmp.Diff(want.Grants, f.Grants); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Shim, f.Shim); diff != "" {
		t.Errorf("shim (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", "config.json: empty file; expected a JSON object"},
		{" \n\t", "config.json: empty file; expected a JSON object"},
		{"{\n  \"userSettings\": {\n    \"x\": 1,,\n  }\n}", "config.json:3:12: invalid character ',' looking for beginning of object key string"},
		{"{\"a\": tru}", "config.json:1:10: invalid character '}' in literal true (expecting 'e')"},
		{"{", "config.json:1:2: unexpected end of JSON input"},
		{"{} {}", "config.json:1:4: invalid character '{' after top-level value"},
		{`{"a": "\x"}`, `config.json:1:9: invalid character 'x' in string escape code`},
		{`{"a": "\u12g4"}`, `config.json:1:12: invalid character 'g' in \u hexadecimal character escape`},
		{"{\"a\": \"\t\"}", `config.json:1:8: invalid character '\t' in string literal`},
		{`{"a": 01}`, "config.json:1:8: invalid character '1' after object key:value pair"},
		{`{"a": -}`, "config.json:1:8: invalid character '}' in numeric literal"},
		{`{"a": [1 2]}`, "config.json:1:10: invalid character '2' after array element"},
		{`{"a" 1}`, "config.json:1:6: invalid character '1' after object key"},
		{`{'a': 1}`, `config.json:1:2: invalid character '\'' looking for beginning of object key string`},
		{"[]", "config.json:1:1: top level: expected an object, found array"},
		{`{"userSettings": []}`, "config.json:1:18: userSettings: expected an object, found array"},
		{`{"userSettings": {"globalPermissionGrants": {"allow": "x"}}}`, "config.json:1:55: userSettings.globalPermissionGrants.allow: expected an array, found string"},
		{`{"userSettings": {"globalPermissionGrants": {"deny": [1]}}}`, "config.json:1:55: userSettings.globalPermissionGrants.deny[0]: expected a string, found number"},
		{`{"userSettings": {"globalPermissionGrants": {"deny": [null]}}}`, "config.json:1:55: userSettings.globalPermissionGrants.deny[0]: expected a string, found null"},
		{`{"userSettings": {"globalPermissionGrants": {"ask": [""]}}}`, "config.json: userSettings.globalPermissionGrants.ask[0]: empty grant"},
		{`{"agentShim": []}`, "config.json:1:15: agentShim: expected an object, found array"},
		{`{"agentShim": {"rules": [{"line": "ls"}, {"category": "read_only"}]}}`, `config.json:1:42: agentShim.rules[1]: missing "line"`},
		{`{"agentShim": {"rules": {}}}`, "config.json:1:25: agentShim.rules: expected an array, found object"},
		{`{"agentShim": {"rules": [{"line": "ls", "source": {"line": "3"}}]}}`, "config.json:1:60: agentShim.rules[0].source.line: expected an integer, found string"},
		{`{"agentShim": {"version": "1"}}`, "config.json:1:27: agentShim.version: expected an integer, found string"},
		{`{"agentShim": {"version": 1.5}}`, "config.json:1:27: agentShim.version: expected an integer, found 1.5"},
		{`{"agentShim": {"tools": {"allow": [true]}}}`, "config.json:1:36: agentShim.tools.allow[0]: expected a string, found boolean"},
		{`{"agentShim": {"pathScope": {"allow": {}}}}`, "config.json:1:39: agentShim.pathScope.allow: expected an array, found object"},
		{`{"agentShim": {"secrets": "~/.x"}}`, "config.json:1:27: agentShim.secrets: expected an array, found string"},
		// A syntax error inside a value of the wrong shape is reported as such.
		{`{"agentShim": [1,]}`, "config.json:1:18: invalid character ']' looking for beginning of value"},
		{strings.Repeat("[", 10001), "config.json:1:10002: exceeded max depth"},
		{`{"a":` + strings.Repeat("[", 10001), "config.json:1:10006: exceeded max depth"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %.80q", tc.in)
		_, err := Parse("config.json", []byte(tc.in))
		if err == nil {
			t.Errorf("got no error, want %q", tc.want)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestLoadReadError(t *testing.T) {
	_, err := Load(t.TempDir()) // a directory
	if err == nil {
		t.Fatal("loading a directory: got no error")
	}
}

// TestMarshalKeepsUnknownKeysAndOrder checks that writing back keeps every
// key this package does not own, at every level, in its order.
func TestMarshalKeepsUnknownKeysAndOrder(t *testing.T) {
	in := `{"zeta": {"nested": [1, 2, {"b": 1, "a": 2}]},
 "agentShim": {"tools": {"deny": ["write_file:/etc/*"]}, "custom": true, "rules": [], "mode": "yolo", "profile": "read-only", "version": 1},
 "userSettings": {"theme": "dark", "globalPermissionGrants": {"deny": ["command(rm)"], "extra": "<&>", "allow": []}, "after": null},
 "alpha": "x"}`
	f, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "zeta": {
    "nested": [
      1,
      2,
      {
        "b": 1,
        "a": 2
      }
    ]
  },
  "agentShim": {
    "tools": {
      "deny": [
        "write_file:/etc/*"
      ]
    },
    "custom": true,
    "rules": [],
    "mode": "yolo",
    "profile": "read-only",
    "version": 1
  },
  "userSettings": {
    "theme": "dark",
    "globalPermissionGrants": {
      "deny": [
        "command(rm)"
      ],
      "extra": "<&>",
      "allow": [],
      "ask": []
    },
    "after": null
  },
  "alpha": "x"
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	assertSameJSON(t, in, string(out), "ask")

	// Writing the result back once more is byte-identical.
	g, err := Parse("config.json", out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Errorf("second Marshal differs:\n%s", again)
	}
}

// assertSameJSON checks that a and b decode to the same value, ignoring the
// grants lists named in added (Marshal writes missing lists as []).
func assertSameJSON(t *testing.T, a, b string, added ...string) {
	t.Helper()
	var va, vb map[string]any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatal(err)
	}
	for _, k := range added {
		gpg := vb["userSettings"].(map[string]any)["globalPermissionGrants"].(map[string]any)
		delete(gpg, k)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("not the same JSON:\n%s\n%s", a, b)
	}
}

func TestMarshalUpdates(t *testing.T) {
	in := `{"userSettings": {"globalPermissionGrants": {"allow": ["a"], "ask": [], "deny": []}}, "other": 1}`
	f, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	f.Grants.Allow = append(f.Grants.Allow, "command(regex:^a<b$)")
	f.Grants.Deny = nil
	f.Shim.Profile = "full-access"
	f.Shim.Rules = []Rule{{Line: "a<b", Category: "read_only", Source: Source{Overlay: "builtin", File: "read_only.txt", Line: 1}}}
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "userSettings": {
    "globalPermissionGrants": {
      "allow": [
        "a",
        "command(regex:^a<b$)"
      ],
      "ask": [],
      "deny": []
    }
  },
  "other": 1,
  "agentShim": {
    "version": 2,
    "profile": "full-access",
    "rules": [
      {"line": "a<b", "category": "read_only", "source": {"overlay": "builtin", "file": "read_only.txt", "line": 1}, "grants": []}
    ]
  }
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}

	// The user's keys are written only when changed in memory.
	g, err := Parse("config.json", out)
	if err != nil {
		t.Fatal(err)
	}
	g.Shim.Mode = "allow"
	out, err = g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"mode": "allow"`) || strings.Contains(string(out), `"shell"`) {
		t.Errorf("changing mode only:\n%s", out)
	}
}

func TestMarshalNewFile(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"userSettings\": {\n    \"globalPermissionGrants\": {\n      \"allow\": [],\n      \"ask\": [],\n      \"deny\": []\n    }\n  }\n}\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
}

func TestDuplicateKeys(t *testing.T) {
	// encoding/json (and the agent) keep the last of duplicate keys, so a
	// write would drop the first copy with the grants a person added
	// there: Parse refuses the file instead, at the second key, at any
	// depth.
	for _, tc := range []struct{ in, want string }{
		{`{"userSettings": {"globalPermissionGrants": {"allow": ["old"], "deny": [], "allow": ["new"]}}}`,
			`config.json:1:76: duplicate key "allow" in userSettings.globalPermissionGrants`},
		{"{\n \"agentShim\": {},\n \"agentShim\": {}\n}", `config.json:3:2: duplicate key "agentShim" (`},
		{`{"other": {"a": 1, "b": {"c": 2, "c": 3}}}`, `config.json:1:34: duplicate key "c" in other.b`},
		{`{"a\u0062": 1, "ab": 2}`, `duplicate key "ab"`},
	} {
		t.Logf("input: %q", tc.in)
		_, err := Parse("config.json", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	// The same key in two objects is no duplicate.
	if _, err := Parse("config.json", []byte(`{"a": {"k": 1}, "b": {"k": 2}}`)); err != nil {
		t.Error(err)
	}
	// Many keys: past the small-object scan.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d": %d, `, i, i)
	}
	b.WriteString(`"k3": 0}`)
	if _, err := Parse("config.json", []byte(b.String())); err == nil || !strings.Contains(err.Error(), `duplicate key "k3"`) {
		t.Errorf("40 keys: got %v", err)
	}
}

// bigConfig builds a config the size of Fuchsia's policy: 385 grants with
// their rules section.
func bigConfig(tb testing.TB) []byte { return scaledConfig(tb, 1) }

// scaledConfig is bigConfig with scale times the rules.
func scaledConfig(tb testing.TB, scale int) []byte {
	tb.Helper()
	f := &File{Path: "config.json"}
	cats := []string{"read_only", "local_changes", "external_changes", "device_ops", "cache_destruction", "batch_execution", "never_allow"}
	for i := range 385 * scale {
		tool := []string{"git", "fx", "ffx", "jiri", "ls", "cat", "rm"}[i%7]
		line := fmt.Sprintf("%s sub%d --flag%d", tool, i, i%5)
		grant := fmt.Sprintf(`command(regex:^(\S+=\S*\s+)*(\S*/)?%s(\s+(-C\s+\S+|-c\s+\S+|--no-pager|--git-dir=\S+))*\s+sub%d(\s+\S+)*\s+--flag%d(\s.*)?$)`, tool, i, i%5)
		switch cat := cats[i%7]; cat {
		case "never_allow":
			f.Grants.Deny = append(f.Grants.Deny, grant)
		case "external_changes", "cache_destruction", "batch_execution":
			f.Grants.Ask = append(f.Grants.Ask, grant)
		default:
			f.Grants.Allow = append(f.Grants.Allow, grant)
		}
		f.Shim.Rules = append(f.Shim.Rules, Rule{
			Line: line, Category: cats[i%7],
			Source: Source{Overlay: "vendor/x", File: "vendor/x/.agents/config/permissions/" + cats[i%7] + ".txt", Line: i + 1},
			Grants: []string{grant},
		})
	}
	f.Shim.Profile = "local-changes"
	data, err := f.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.json")
	data := bigConfig(b)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		f, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Shim.Rules) != 385 {
			b.Fatalf("got %d rules", len(f.Shim.Rules))
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLoadScale loads configs of 1, 10 and 50 times Fuchsia's rules.
func BenchmarkLoadScale(b *testing.B) {
	for _, scale := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("x%d", scale), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "config.json")
			data := scaledConfig(b, scale)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				if len(f.Shim.Rules) != 385*scale || len(f.Shim.Rules[0].Grants) != 1 {
					b.Fatalf("got %d rules", len(f.Shim.Rules))
				}
			}
		})
	}
}

func BenchmarkMarshal(b *testing.B) {
	f, err := Parse("config.json", bigConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used:
// on a shared machine it is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLoadMatchesParse checks that Load, which shares the file's memory
// with the strings it decodes, yields what Parse does and marshals alike.
func TestLoadMatchesParse(t *testing.T) {
	data := bigConfig(t)
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(parsed.Grants, loaded.Grants); diff != "" {
		t.Errorf("grants (-Parse +Load):\n%s", diff)
	}
	if diff := cmp.Diff(parsed.Shim, loaded.Shim); diff != "" {
		t.Errorf("shim (-Parse +Load):\n%s", diff)
	}
	out, err := loaded.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(data) {
		t.Error("Marshal of a loaded file differs from the file")
	}
}

func TestRuntimeAndRequireHook(t *testing.T) {
	f, err := Parse("c.json", []byte(`{"agentShim": {"runtime": "require", "requireHook": true, "other": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Shim.Runtime != "require" || !f.Shim.RequireHook {
		t.Fatalf("got runtime %q requireHook %v", f.Shim.Runtime, f.Shim.RequireHook)
	}
	f.Shim.RequireHook = false
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"requireHook": false`) || !strings.Contains(string(out), `"runtime": "require"`) {
		t.Fatalf("marshal lost a change or a kept key:\n%s", out)
	}
	for _, bad := range []string{`{"agentShim": {"requireHook": "yes"}}`, `{"agentShim": {"requireHook": 1}}`, `{"agentShim": {"runtime": true}}`} {
		if _, err := Parse("c.json", []byte(bad)); err == nil {
			t.Errorf("Parse(%s) = nil error, want a shape error", bad)
		}
	}
}

// TestRulesByDigest: a rule whose grants are all in the lists names them
// by digest, and reading the file back gives the same rules; a rule with a
// grant outside the lists keeps the text; files that spell the text (as
// older versions wrote them) still read the same.
func TestRulesByDigest(t *testing.T) {
	ls, push := "command(regex:^ls$)", "command(git push)"
	f, err := Parse("config.json", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	f.Grants = Grants{Allow: []string{ls}, Ask: []string{push}, Deny: []string{}}
	rules := []Rule{
		{Line: "ls", Category: "read_only", Source: Source{Overlay: ".", File: "p/read_only.txt", Line: 3}, Grants: []string{ls}},
		{Line: "git push", Category: "external_changes", Source: Source{Overlay: "builtin", File: "external_changes.txt", Line: 1}, Grants: []string{push, ls}},
		{Line: "gone", Category: "read_only", Grants: []string{"command(gone)", ls}},
		{Line: "none", Category: "read_only", Grants: []string{}},
	}
	f.Shim.Rules = rules
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), ls); n != 2 {
		t.Errorf("the grant %q is written %d times, want twice (in allow and in the rule that is not all in the lists):\n%s", ls, n, out)
	}
	if !strings.Contains(string(out), statefile.Digest(push)) {
		t.Errorf("no digest of %q:\n%s", push, out)
	}
	g, err := Parse("config.json", out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rules, g.Shim.Rules); diff != "" {
		t.Errorf("rules read back (-want +got):\n%s", diff)
	}
	again, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Errorf("second Marshal differs:\n%s\n%s", out, again)
	}

	// A digest no list holds (the grant was removed by hand) is dropped;
	// the text form is read as before, and both may be mixed.
	in := `{"userSettings": {"globalPermissionGrants": {"allow": ["` + ls + `"]}},
  "agentShim": {"rules": [
    {"line": "ls", "category": "read_only", "digests": ["` + statefile.Digest(ls) + `", "` + statefile.Digest(push) + `"]},
    {"line": "old", "category": "read_only", "grants": ["` + push + `"], "digests": ["` + statefile.Digest(ls) + `"]}]}}`
	h, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{Line: "ls", Category: "read_only", Grants: []string{ls}}, {Line: "old", Category: "read_only", Grants: []string{push, ls}}}
	if diff := cmp.Diff(want, h.Shim.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

// TestLoadSettings: the settings are those Load reads, syntax errors are
// still errors, and the partial file cannot be written back.
func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, bigConfigWith(t, `"runtime": "require", "requireHook": true, "shell": "/bin/zsh", "mode": "yolo"`), 0o600); err != nil {
		t.Fatal(err)
	}
	full, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := LoadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	want := full.Shim
	want.Rules = nil
	if diff := cmp.Diff(want, f.Shim); diff != "" {
		t.Errorf("settings (-Load +LoadSettings):\n%s", diff)
	}
	if f.Shim.Runtime != "require" || !f.Shim.RequireHook || len(f.Grants.Allow) != 0 {
		t.Errorf("got %+v", f.Shim)
	}
	if _, err := f.Marshal(); err == nil {
		t.Error("Marshal of a LoadSettings file: want an error")
	}
	for _, bad := range []string{`{"agentShim": {"rules": [}}`, `{"userSettings": {"globalPermissionGrants": {"allow": ["a",]}}}`, " \n", `{"agentShim": {"requireHook": "yes"}}`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSettings(path); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	if f, err := LoadSettings(filepath.Join(dir, "missing.json")); err != nil || f.Exists {
		t.Errorf("missing file: %+v, %v", f, err)
	}
}

// bigConfigWith is bigConfig with more members in agentShim.
func bigConfigWith(tb testing.TB, members string) []byte {
	data := string(bigConfig(tb))
	i := strings.Index(data, `"agentShim": {`)
	if i < 0 {
		tb.Fatal("no agentShim")
	}
	i += len(`"agentShim": {`)
	return []byte(data[:i] + members + "," + data[i:])
}

func BenchmarkLoadSettings(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config.json")
	data := bigConfig(b)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadSettings(path); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRuleGroups: the rules of one manifest file whose grants are in the
// lists are written as a group that names the file once; reading gives
// the same rules, and the per-rule form of version 1 still reads.
func TestRuleGroups(t *testing.T) {
	f, err := Parse("config.json", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	ro := Source{Overlay: ".", File: ".agents/config/permissions/read_only.txt"}
	f.Grants.Allow = []string{"command(git status)", "command(git log)", "command(git log --oneline)", "command(ls)"}
	f.Grants.Deny = []string{"command(rm -rf /)"}
	f.Shim.Rules = []Rule{
		{Line: "git status", Category: "read_only", Source: Source{ro.Overlay, ro.File, 7}, Grants: []string{"command(git status)"}},
		{Line: "git log", Category: "read_only", Source: Source{ro.Overlay, ro.File, 8}, Grants: []string{"command(git log)", "command(git log --oneline)"}},
		{Line: "cat", Category: "read_only", Source: Source{ro.Overlay, ro.File, 9}, Grants: []string{"command(cat)"}}, // not in the lists
		{Line: "ls", Category: "read_only", Source: Source{ro.Overlay, ro.File, 10}, Grants: []string{"command(ls)"}},
		{Line: "rm -rf /", Category: "never_allow", Source: Source{"vendor/x", "vendor/x/.agents/config/permissions/never_allow.txt", 3}, Grants: []string{"command(rm -rf /)"}},
	}
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"file": ".agents/config/permissions/read_only.txt"`); n != 3 {
		t.Errorf("the read-only file is named %d times, want 3 (a group, the rule with its grant's text, a group):\n%s", n, out)
	}
	g, err := Parse("config.json", out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f.Shim.Rules, g.Shim.Rules); diff != "" {
		t.Errorf("rules read back (-want +got):\n%s\n%s", diff, out)
	}

	old := `{"userSettings": {"globalPermissionGrants": {"allow": ["command(git status)"]}},
  "agentShim": {"version": 1, "rules": [
    {"line": "git status", "category": "read_only", "source": {"overlay": ".", "file": "r.txt", "line": 2}, "digests": ["` + statefile.Digest("command(git status)") + `"]}]}}`
	h, err := Parse("config.json", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{Line: "git status", Category: "read_only", Source: Source{".", "r.txt", 2}, Grants: []string{"command(git status)"}}}
	if diff := cmp.Diff(want, h.Shim.Rules); diff != "" {
		t.Errorf("version 1 rules (-want +got):\n%s", diff)
	}

	for _, bad := range []string{
		`{"agentShim": {"rules": [{"file": "r.txt", "line": "x", "lines": [[1, "ls", "00"]]}]}}`,
		`{"agentShim": {"rules": [{"file": "r.txt", "lines": [[1, "ls"]]}]}}`,
		`{"agentShim": {"rules": [{"file": "r.txt", "lines": [[1, "", "00"]]}]}}`,
		`{"agentShim": {"rules": [{"file": "r.txt", "lines": [["1", "ls", "00"]]}]}}`,
		`{"agentShim": {"rules": [{"file": "r.txt", "lines": [1]}]}}`,
	} {
		if _, err := Parse("config.json", []byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		} else if !strings.Contains(err.Error(), "config.json") {
			t.Errorf("%s: the error does not name the file: %v", bad, err)
		}
	}
}

// TestNewerVersion: a file written by a newer agents-setup is refused with
// the versions, never read as if it were this one's.
func TestNewerVersion(t *testing.T) {
	_, err := Parse("config.json", []byte(`{"agentShim": {"version": 99, "rules": []}}`))
	if err == nil || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("version 99: %v", err)
	}
	if _, err := Parse("config.json", []byte(`{"agentShim": {"version": 1, "rules": []}}`)); err != nil {
		t.Errorf("version 1: %v", err)
	}
}
