package agents

import (
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"strings"
	"testing"
)

// TestPinGeminiHooks: the system settings end with hooksConfig.enabled
// true, everything else as it was; a false or a hooksConfig that is not an
// object is refused, never overwritten; unpinGeminiHooks gives back the
// input.
func TestPinGeminiHooks(t *testing.T) {
	tests := []struct {
		in, want, refuse string
	}{
		{in: "{}", want: "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}"},
		{in: "{\n  \"hooks\": {}\n}\n", want: "{\n  \"hooks\": {},\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}\n"},
		{in: "{\n  \"hooksConfig\": {\"notifications\": false}\n}\n", want: "{\n  \"hooksConfig\": {\"notifications\": false, \"enabled\": true}\n}\n"},
		{in: "{\n  // chosen by hand\n  \"hooksConfig\": {\"enabled\": true}\n}\n", want: "{\n  // chosen by hand\n  \"hooksConfig\": {\"enabled\": true}\n}\n"},
		{in: "{\"hooksConfig\": {\"enabled\": false}}", refuse: "1:29: hooksConfig.enabled is false"},
		{in: "{\"hooksConfig\": {\"enabled\": \"yes\"}}", refuse: "not a boolean"},
		{in: "{\"hooksConfig\": []}", refuse: "1:17: hooksConfig is not an object"},
		{in: "[]", refuse: "not a JSON object"},
		{in: "{", refuse: "settings.json"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		rec := &Record{}
		got, err := pinGeminiHooks("settings.json", []byte(tc.in), rec)
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("got %q, %v; want an error with %q", got, err, tc.refuse)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("got\n%q, %v\nwant\n%q", got, err, tc.want)
			continue
		}
		root, err := fileedit.ParseJSONC("settings.json", got)
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if en := fileedit.Decoded(got, root.Member("hooksConfig").Member("enabled")); en != true {
			t.Errorf("%q: hooksConfig.enabled is %v, not true", got, en)
		}
		if again, err := pinGeminiHooks("settings.json", got, rec); err != nil || string(again) != string(got) {
			t.Errorf("a second run changed it: %q, %v", again, err)
		}
		back, err := unpinGeminiHooks("settings.json", got, rec)
		if err != nil || string(back) != tc.in || len(rec.Created) != 0 {
			t.Errorf("unpin gave %q, %v (record %q); want %q", back, err, rec.Created, tc.in)
		}
	}
}
