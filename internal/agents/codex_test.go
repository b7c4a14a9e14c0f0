package agents

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/fileedit"
)

// TestCodexHookHash holds codexHookHash and codexHookKey to what Codex
// 0.169.0 itself reported: `codex app-server`, hooks/list over this
// hooks.json in CODEX_HOME=/tmp/ishim/ch/home, gave these keys and
// currentHash values (trustStatus "untrusted").
func TestCodexHookHash(t *testing.T) {
	const hooksJSON = `{"hooks": {"PreToolUse": [` +
		`{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 pre.py", "timeout": 10}]}, ` +
		`{"hooks": [{"type": "command", "command": "out=$(timeout -k 2 20 '/opt/a b/agent-shim' hook codex) && printf '%s\\n' \"$out\" || { echo 'agent-shim failed: blocking' >&2; exit 2; }", "timeout": 30}]}, ` +
		`{"hooks": [{"type": "command", "command": "/x/agent-shim hook codex <&>"}]}, ` +
		`{"matcher": "*", "hooks": [{"type": "command", "command": "é\u2028\u0001\t", "timeout": 0, "statusMessage": "hi"}]}]}}`
	want := []struct{ key, hash string }{
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:0:0", "sha256:75da8da1a7f7e58256dd513c58f88f24f08f6e2268eca89394bda493a71a9c9d"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:1:0", "sha256:4c1df94422b0290e5dca98448474bdfc6af628dc333654c02c6dd008b5fcc667"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:2:0", "sha256:12ffac467d6f7fa78d8560f2a247684e54d03a65fb0e153f63d666349e9017d2"},
		{"/tmp/ishim/ch/home/hooks.json:pre_tool_use:3:0", "sha256:a434a2a6daba07880d4edbe50c9a92f3a431b9a2c5c7883a6562fc045bff00cd"},
	}
	var f struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Command       string  `json:"command"`
				Timeout       *int64  `json:"timeout"`
				Async         bool    `json:"async"`
				StatusMessage *string `json:"statusMessage"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(hooksJSON), &f); err != nil {
		t.Fatal(err)
	}
	groups := f.Hooks["PreToolUse"]
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for i, g := range groups {
		h := g.Hooks[0]
		t.Logf("input: %q", h.Command)
		if got := codexHookKey("/tmp/ishim/ch/home/hooks.json", "PreToolUse", i, 0); got != want[i].key {
			t.Errorf("key %d = %q, want %q", i, got, want[i].key)
		}
		got := codexHookHash("PreToolUse", g.Matcher, codexHandler{h.Command, h.Timeout, h.Async, h.StatusMessage})
		if got != want[i].hash {
			t.Errorf("hash %d = %s, want %s", i, got, want[i].hash)
		}
	}
}

func TestCodexEventLabel(t *testing.T) {
	for in, want := range map[string]string{
		"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start",
		"UserPromptSubmit": "user_prompt_submit", "Stop": "stop", "PermissionRequest": "permission_request",
	} {
		if got := codexEventLabel(in); got != want {
			t.Errorf("codexEventLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// With CODEX_HOME set, Codex canonicalizes it: the trust key names the
// directory with its links resolved. Without it, ~/.codex as it is.
func TestCodexKeyPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	hooks := filepath.Join(link, "hooks.json")
	if got := codexKeyPath(env(map[string]string{"CODEX_HOME": link}), hooks); got != filepath.Join(real, "hooks.json") {
		t.Errorf("CODEX_HOME set: %q, want the link resolved", got)
	}
	if got := codexKeyPath(env(map[string]string{"HOME": dir}), hooks); got != hooks {
		t.Errorf("CODEX_HOME unset: %q, want %q", got, hooks)
	}
}

// setFeatureHooks edits config.toml in place or refuses; it never writes
// a file a TOML parser rejects, and unsetFeatureHooks gives back the
// original bytes.
func TestSetFeatureHooks(t *testing.T) {
	tests := []struct {
		in, want string // want "" with refuse: refused
		refuse   string // a part of the refusal
		noop     bool
	}{
		{in: "", want: "[features]\nhooks = true\n"},
		{in: "model = \"o3\"\n", want: "model = \"o3\"\n\n[features]\nhooks = true\n"},
		{in: "model = \"o3\"", want: "model = \"o3\"\n\n[features]\nhooks = true\n"},
		{in: "[features]\nweb_search_request = true # the web\n", want: "[features]\nhooks = true\nweb_search_request = true # the web\n"},
		{in: "[features]", want: "[features]\nhooks = true\n"},
		{in: "[features]\nhooks = false # off\n", want: "[features]\nhooks = true # off\n"},
		{in: "[features]\nhooks = true\n", noop: true},
		{in: "features.hooks = true\n", noop: true},
		// Issue 20, defect 5: a dotted key defines the features table; a
		// [features] header after it is a second definition.
		{in: "model = \"o3\"\nfeatures.web_search_request = true\n\n[profiles.fast]\nmodel = \"o4-mini\"\n",
			want: "model = \"o3\"\nfeatures.web_search_request = true\nfeatures.hooks = true\n\n[profiles.fast]\nmodel = \"o4-mini\"\n"},
		{in: "features.hooks = false\n[x]\ny = 1\n", want: "features.hooks = true\n[x]\ny = 1\n"},
		{in: "features.web_search_request = true", want: "features.web_search_request = true\nfeatures.hooks = true\n"},
		// Multi-line values and headers look-alikes inside strings.
		{in: "s = \"\"\"\n[features]\nhooks = false\n\"\"\"\n", want: "s = \"\"\"\n[features]\nhooks = false\n\"\"\"\n\n[features]\nhooks = true\n"},
		{in: "a = [\n  [1],\n]\n[features]\nx = 1\n", want: "a = [\n  [1],\n]\n[features]\nhooks = true\nx = 1\n"},
		{in: "[features.sub]\nx = 1\n", want: "[features.sub]\nx = 1\n\n[features]\nhooks = true\n"},
		{in: "[other]\nhooks = false\n", want: "[other]\nhooks = false\n\n[features]\nhooks = true\n"},
		// No in-place edit: refused with the lines to add.
		{in: "features = { web_search_request = true }\n", refuse: "features is not a table"},
		{in: "features = 1\n", refuse: "features is not a table"},
		{in: "[features\n", refuse: "config.toml:1:"},
		{in: "[features]\n[features]\n", refuse: "config.toml:2:"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		got, prev, added, err := setFeatureHooks("config.toml", []byte(tc.in))
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("got %q, %v; want an error with %q", got, err, tc.refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("error: %v", err)
			continue
		}
		if tc.noop {
			if string(got) != tc.in {
				t.Errorf("changed an enabled flag: %q", got)
			}
			continue
		}
		if string(got) != tc.want {
			t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			continue
		}
		d, err := fileedit.ParseTOML("config.toml", got)
		if err != nil {
			t.Fatalf("wrote invalid TOML: %v", err)
		}
		if on, set := codexFeature(d.Value, "hooks"); !on || !set {
			t.Errorf("features.hooks is not true in %q", got)
		}
		back, err := unsetFeatureHooks("config.toml", got, prev, added)
		if err != nil {
			t.Errorf("undo: %v", err)
			continue
		}
		orig := tc.in
		if orig != "" && !strings.HasSuffix(orig, "\n") && strings.HasSuffix(string(back), "\n") {
			orig += "\n" // install ended the last line
		}
		if string(back) != orig {
			t.Errorf("undo gave\n%q\nwant\n%q", back, orig)
		}
	}
}

func TestSetTrust(t *testing.T) {
	const key, hash = "/h/.codex/hooks.json:pre_tool_use:1:0", "sha256:ab"
	tests := []struct {
		in, want, refuse string
	}{
		{in: "", want: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:ab\"\n"},
		{in: "[features]\nhooks = true\n", want: "[features]\nhooks = true\n\n[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:ab\"\n"},
		{in: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:1:0\"]\nenabled = true\ntrusted_hash = \"sha256:old\" # stale\n",
			want: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:1:0\"]\nenabled = true\ntrusted_hash = \"sha256:ab\" # stale\n"},
		{in: "[hooks.state.'/h/.codex/hooks.json:pre_tool_use:1:0']\nenabled = true\n",
			want: "[hooks.state.'/h/.codex/hooks.json:pre_tool_use:1:0']\ntrusted_hash = \"sha256:ab\"\nenabled = true\n"},
		{in: "hooks = { state = {} }\n", refuse: "add these lines yourself"},
		{in: "hooks = 1\n", refuse: "add these lines yourself"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		got, prev, err := setTrust("config.toml", []byte(tc.in), key, hash)
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) || !errors.Is(err, fileedit.ErrInPlace) {
				t.Errorf("got %q, %v; want a refusal with %q", got, err, tc.refuse)
			} else if !strings.Contains(err.Error(), `trusted_hash = "sha256:ab"`) {
				t.Errorf("refusal does not give the lines: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("error: %v", err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			continue
		}
		back, err := unsetTrust("config.toml", got, key, hash, prev)
		if err != nil {
			t.Errorf("undo: %v", err)
			continue
		}
		if string(back) != tc.in {
			t.Errorf("undo gave\n%q\nwant\n%q", back, tc.in)
		}
	}
}

// requirements.toml's managed hooks: our group appended as array tables,
// an older group of ours replaced, other groups and bytes kept; removing
// gives back the file.
func TestSetCodexManaged(t *testing.T) {
	cmd := Guarded(guardTimeout(), "/usr/local/bin/agent-shim hook codex")
	group := "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " +
		`"out=$(timeout -k 2 20 /usr/local/bin/agent-shim hook codex) && printf '%s\\n' \"$out\" || { echo 'agent-shim failed: blocking' >&2; exit 2; }"` +
		"\ntimeout = 30\n"
	pin := "\n[features]\nhooks = true # agent-shim: managed hooks on\n"
	tests := []struct {
		in, want, refuse string
	}{
		{in: "", want: group + pin},
		{in: "allowed_approval_policies = [\"never\"]\n", want: "allowed_approval_policies = [\"never\"]\n\n" + group + pin},
		// The administrator's own hooks = true stays theirs.
		{in: "[features]\nhooks = true\n", want: "[features]\nhooks = true\n\n" + group},
		{in: "[hooks]\nmanaged_dir = \"/etc/codex/hooks\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/etc/codex/hooks/audit.sh\"\n",
			want: "[hooks]\nmanaged_dir = \"/etc/codex/hooks\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/etc/codex/hooks/audit.sh\"\n\n" + group + pin},
		{in: "hooks = { PreToolUse = [] }\n", refuse: "add these lines yourself"},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		got, err := setCodexManaged("requirements.toml", []byte(tc.in), cmd)
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("got %q, %v; want a refusal", got, err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("got\n%q, %v\nwant\n%q", got, err, tc.want)
			continue
		}
		again, err := setCodexManaged("requirements.toml", got, cmd)
		if err != nil || string(again) != string(got) {
			t.Errorf("second run changed the file: %q, %v", again, err)
		}
		newer, err := setCodexManaged("requirements.toml", got, strings.Replace(cmd, "/usr/local/bin", "/opt/bin", 1))
		if err != nil || strings.Count(string(newer), "agent-shim hook codex") != 1 || !strings.Contains(string(newer), "/opt/bin/agent-shim") {
			t.Errorf("a new path: %q, %v", newer, err)
		}
		back, err := unsetCodexManaged("requirements.toml", got)
		if err != nil || string(back) != tc.in {
			t.Errorf("undo gave %q, %v; want %q", back, err, tc.in)
		}
	}
}

// codexHooksOff reads only the features table, however it is written;
// "hooks" wins over its deprecated alias "codex_hooks".
func TestCodexHooksOff(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"[features]\nhooks = true\n", ""},
		{"[features]\nhooks = false\n", "features.hooks = false"},
		{"[features]\ncodex_hooks = false\n", "features.codex_hooks = false"},
		{"[features]\nhooks = true\ncodex_hooks = false\n", ""},
		{"[features]\ncodex_hooks = true\nhooks = false # off\n", "features.hooks = false"},
		{"[other]\nhooks = false\n[features]\nx = 1\n", ""},
		{"[features]\nx = 1\n[other]\nhooks = false\n", ""},
		{"hooks = false\n", ""},
		{"features.hooks = false\n", "features.hooks = false"},
		{"features = { hooks = false }\n", "features.hooks = false"},
		{"s = \"\"\"\n[features]\nhooks = false\n\"\"\"\n", ""},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		d, err := fileedit.ParseTOML("config.toml", []byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := codexHooksOff(d.Value); got != tc.want {
			t.Errorf("codexHooksOff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
