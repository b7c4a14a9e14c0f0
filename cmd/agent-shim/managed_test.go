package main

import (
	"encoding/json"
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
		rec := &installRecord{}
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
		var v struct {
			HooksConfig struct{ Enabled *bool }
		}
		if err := json.Unmarshal(blankedForTest(t, got), &v); err != nil || v.HooksConfig.Enabled == nil || !*v.HooksConfig.Enabled {
			t.Errorf("%q: hooksConfig.enabled is not true (%v)", got, err)
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

func blankedForTest(t *testing.T, data []byte) []byte {
	t.Helper()
	b, err := blankComments(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
