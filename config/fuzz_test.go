package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse checks the hand-written decoder against encoding/json: it
// accepts exactly the valid documents of the right shape and decodes the
// same grants and shim section from them.
func FuzzParse(f *testing.F) {
	f.Add(`{"userSettings": {"globalPermissionGrants": {"allow": ["command(regex:^ls\\s+-l$)"], "ask": [], "deny": ["\u00e9\ud83d\ude00"]}}}`)
	f.Add(`{"agentShim": {"version": 1, "profile": "read-only", "rules": [{"line": "ls", "category": "read_only", "source": {"overlay": ".", "file": "f", "line": 2}, "grants": ["a"]}], "mode": "ask", "shell": "/bin/sh", "pathScope": {"allow": ["/tmp"]}, "tools": {"allow": ["x"], "deny": ["y"]}}, "other": [1, -2.5e3, true, false, null, {"k": "v"}]}`)
	f.Add(`{"a": "\ud800"}`)
	f.Add(`{"a": "` + "\xff" + `"}`)
	f.Add(`{"userSettings": null, "agentShim": null}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Parse("config.json", []byte(in))
		var want document
		werr := json.Unmarshal([]byte(in), &want)
		if !json.Valid([]byte(in)) {
			if err == nil {
				t.Fatalf("accepted invalid JSON %q", in)
			}
			return
		}
		if err != nil {
			// Parse is stricter than encoding/json in these ways only.
			stricter := strings.Contains(err.Error(), `missing "line"`) ||
				strings.Contains(err.Error(), "empty grant") ||
				strings.Contains(err.Error(), "found null") || // a null list element
				strings.Contains(err.Error(), "expected an integer") ||
				hasFoldedKey(in)
			if werr == nil && !stricter {
				t.Fatalf("rejected %q: %v", in, err)
			}
			return
		}
		if werr != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", in, werr)
		}
		if hasFoldedKey(in) {
			return
		}
		var wantGrants Grants
		if want.UserSettings != nil && want.UserSettings.GlobalPermissionGrants != nil {
			wantGrants = *want.UserSettings.GlobalPermissionGrants
		}
		if diff := cmp.Diff(wantGrants, got.Grants, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("grants of %q (-encoding/json +Parse):\n%s", in, diff)
		}
		var wantShim Shim
		if want.AgentShim != nil {
			wantShim = *want.AgentShim
		}
		if diff := cmp.Diff(wantShim, got.Shim, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("shim of %q (-encoding/json +Parse):\n%s", in, diff)
		}
		// Writing it back gives valid JSON that parses to the same.
		out, err := got.Marshal()
		if err != nil {
			t.Fatalf("Marshal of %q: %v", in, err)
		}
		again, err := Parse("config.json", out)
		if err != nil {
			t.Fatalf("Parse of Marshal output %q: %v", out, err)
		}
		if got.Shim.Version == 0 && again.Shim.Version == Version {
			again.Shim.Version = 0 // Marshal fills in the version
		}
		if diff := cmp.Diff(got.Grants, again.Grants, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("grants changed by Marshal (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(got.Shim, again.Shim, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("shim changed by Marshal (-before +after):\n%s", diff)
		}
	})
}

// document is what encoding/json decodes, for comparison.
type document struct {
	UserSettings *struct {
		GlobalPermissionGrants *Grants `json:"globalPermissionGrants"`
	} `json:"userSettings"`
	AgentShim *Shim `json:"agentShim"`
}

// hasFoldedKey reports whether in has a key that matches one of ours only
// case-insensitively, which encoding/json would take and Parse ignores,
// or an escaped key that could spell one of ours.
func hasFoldedKey(in string) bool {
	lower := strings.ToLower(in)
	for _, k := range []string{"userSettings", "globalPermissionGrants", "agentShim", "allow", "ask", "deny", "rules", "line", "category", "source", "overlay", "file", "grants", "version", "profile", "mode", "shell", "pathScope", "tools"} {
		if strings.Count(lower, `"`+strings.ToLower(k)+`"`) != strings.Count(in, `"`+k+`"`) {
			return true
		}
	}
	return strings.Contains(in, `\u`)
}
