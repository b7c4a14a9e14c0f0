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
				hasFoldedKey(in) ||
				strings.Contains(err.Error(), "duplicate key") && hasDuplicateKey(in)
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
// case-insensitively, which encoding/json would take and Parse ignores. It
// decodes the keys (escapes included) with encoding/json's tokenizer: an
// oracle, not a filter on the input's spelling.
func hasFoldedKey(in string) bool {
	folded, _ := keyFacts(in)
	return folded
}

// hasDuplicateKey reports whether an object of in holds a key twice, which
// Parse refuses and encoding/json takes (keeping the last copy).
func hasDuplicateKey(in string) bool {
	_, dup := keyFacts(in)
	return dup
}

var ourKeys = []string{"userSettings", "globalPermissionGrants", "agentShim", "allow", "ask", "deny", "rules", "line", "category", "source", "overlay", "file", "grants", "version", "profile", "mode", "shell", "runtime", "requireHook", "pathScope", "tools", "secrets"}

func keyFacts(in string) (folded, dup bool) {
	dec := json.NewDecoder(strings.NewReader(in))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return folded, dup
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.key {
			if top.keys[s] {
				dup = true
			}
			top.keys[s] = true
			for _, k := range ourKeys {
				if s != k && strings.EqualFold(s, k) {
					folded = true
				}
			}
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
