package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// TestRehomeHook: a hook command of ours comes back in its own form
// (plain, or in the same guard) with the shim and config.json replaced;
// a command not ours is refused.
func TestRehomeHook(t *testing.T) {
	for _, a := range All {
		t.Logf("agent: %s", a.Name)
		for _, cfg := range []string{"", "/etc/agent-shim.json"} {
			cmd := a.HookCommand("/usr/local/bin/agent-shim", cfg)
			got, ok := a.RehomeHook(cmd, "/tmp/x/agent-shim", "/tmp/x/config.json")
			want := a.HookCommand("/tmp/x/agent-shim", "/tmp/x/config.json")
			if !ok || got != want {
				t.Errorf("RehomeHook(%q) = %q, %v; want %q", cmd, got, ok, want)
			}
			plain := a.PlainCommand("/usr/local/bin/agent-shim", cfg)
			if got, ok := a.RehomeHook(plain, "/tmp/x/agent-shim", ""); !ok || got != a.PlainCommand("/tmp/x/agent-shim", "") {
				t.Errorf("RehomeHook(%q) = %q, %v: a plain command stays plain", plain, got, ok)
			}
		}
		if _, ok := a.RehomeHook("my-linter --fix", "/tmp/x/agent-shim", ""); ok {
			t.Errorf("a command not ours was rehomed")
		}
	}
}

// TestCopyTrust: the person's trust of the Codex hook carries over to a
// copy whose hooks.json is elsewhere and whose command changed; a hook the
// person had not trusted, or had changed since, stays untrusted.
func TestCopyTrust(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	from := "/home/u/.codex/hooks.json"
	hooks := func(exe string) []byte {
		return []byte(`{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": ` + quote(Codex.HookCommand(exe, "")) + `, "timeout": 30}]}]}}`)
	}
	fromData := hooks("/usr/local/bin/agent-shim")
	key, hash, ok := codexTrust(getenv, from, fromData)
	if !ok {
		t.Fatal("no hook to trust")
	}
	trusted := []byte("model = \"o3\"\n\n[hooks.state." + fileedit.Quote(key) + "]\ntrusted_hash = " + fileedit.Quote(hash) + "\n")

	dir := t.TempDir()
	to := filepath.Join(dir, ".codex", "hooks.json")
	toGetenv := func(k string) string { return map[string]string{"HOME": dir}[k] }
	toData := hooks(filepath.Join(dir, "bin", "agent-shim"))
	toKey, toHash, _ := codexTrust(toGetenv, to, toData)
	comp := filepath.Join(dir, ".codex", "config.toml")

	out, err := Codex.CopyTrust(getenv, from, fromData, trusted, toGetenv, comp, trusted, to, toData)
	if err != nil {
		t.Fatal(err)
	}
	d, err := fileedit.ParseTOML(comp, out)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := fileedit.Lookup(d.Value, "hooks", "state", toKey, "trusted_hash"); v != toHash {
		t.Errorf("the copy's hook is not trusted:\n%s", out)
	}

	for name, cfg := range map[string][]byte{
		"not trusted": []byte("model = \"o3\"\n"),
		"changed":     []byte("[hooks.state." + fileedit.Quote(key) + "]\ntrusted_hash = \"sha256:00\"\n"),
		"disabled":    []byte("[hooks.state." + fileedit.Quote(key) + "]\ntrusted_hash = " + fileedit.Quote(hash) + "\nenabled = false\n"),
	} {
		out, err := Codex.CopyTrust(getenv, from, fromData, cfg, toGetenv, comp, cfg, to, toData)
		if err != nil || string(out) != string(cfg) || strings.Contains(string(out), toKey) {
			t.Errorf("%s: the copy got trust the person did not give (%v):\n%s", name, err, out)
		}
	}
	if out, err := Claude.CopyTrust(getenv, from, fromData, trusted, toGetenv, comp, trusted, to, toData); err != nil || string(out) != string(trusted) {
		t.Errorf("an agent without trust: %v, %s", err, out)
	}
}

func quote(s string) string {
	q, err := fileedit.Encode(s)
	if err != nil {
		panic(err)
	}
	return q
}

// TestHooksOff: each agent's switch turns its hooks off in a copy of its
// settings, as doctor reads the switch.
func TestHooksOff(t *testing.T) {
	for _, a := range All {
		t.Logf("agent: %s", a.Name)
		dir := t.TempDir()
		settings := filepath.Join(dir, "settings.json")
		if a == Codex {
			settings = filepath.Join(dir, "hooks.json")
		}
		if err := os.WriteFile(settings, []byte("{\"model\": \"x\"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := a.Headless.HooksOff(settings); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(settings)
		root, err := a.Parse(settings, data)
		if err != nil {
			t.Fatal(err)
		}
		f := &Found{Path: settings, Data: data, Root: root, UserPath: settings, UserData: data, Getenv: func(string) string { return "" }}
		checks := a.Off(f)
		if c := a.Companion(); c != nil {
			cdata, _ := os.ReadFile(c.Path(settings))
			checks = append(checks, c.Checks(f, cdata)...)
		}
		off := false
		for _, c := range checks {
			off = off || c.Status == Fail && (strings.Contains(c.Detail, "runs no hook") || strings.Contains(c.Detail, "runs no hooks"))
		}
		if !off {
			t.Errorf("after HooksOff, doctor does not see hooks off: %+v\n%s", checks, data)
		}
	}
}
