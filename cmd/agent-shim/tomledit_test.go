package main

import (
	"errors"
	"strings"
	"testing"
)

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
		d, err := parseTOML("config.toml", got)
		if err != nil {
			t.Fatalf("wrote invalid TOML: %v", err)
		}
		if on, set := codexFeature(d.value, "hooks"); !on || !set {
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
			if err == nil || !strings.Contains(err.Error(), tc.refuse) || !errors.Is(err, errTOMLEdit) {
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
	cmd := guardedCommand(guardTimeout(), "/usr/local/bin/agent-shim hook codex")
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
