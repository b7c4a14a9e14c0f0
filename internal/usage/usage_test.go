package usage

import (
	"runtime/debug"
	"testing"
)

func TestClosest(t *testing.T) {
	commands := []string{"hook", "explain", "recommend", "run", "install", "uninstall", "doctor", "log", "replay", "rules"}
	for _, tc := range []struct {
		in, want string
	}{
		{"explian", "explain"},  // two neighbours swapped
		{"expain", "explain"},   // one left out
		{"explainn", "explain"}, // one too many
		{"docter", "doctor"},
		{"instal", "install"},
		{"unistall", "uninstall"},
		{"replya", "replay"},
		{"hok", "hook"},
		{"uninst", "uninstall"}, // a beginning of one
		{"lg", "log"},
		{"reco", "recommend"},
		{"bogus", ""},
		{"x", ""},
		{"", ""},
		{"explain", ""}, // a known word is not mistyped
		{"hooks", "hook"},
		{"lock", ""}, // two edits from log, hook: too far for a short word
	} {
		t.Logf("input: %q", tc.in)
		if got := Closest(tc.in, commands); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	flags := []string{"json", "config", "cwd", "wide", "dry-run", "settings"}
	for _, tc := range []struct{ in, want string }{
		{"jsn", "json"},
		{"conifg", "config"},
		{"dryrun", "dry-run"},
		{"setings", "settings"},
		{"verbose", ""},
	} {
		if got := Closest(tc.in, flags); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"explian", "explain", 1},
		{"régle", "règle", 1},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"installed from a clone", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261202071346-fd06953abcde"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fd06953abcde0123"}, {Key: "vcs.time", Value: "2026-12-02T07:13:46Z"}, {Key: "vcs.modified", Value: "false"}}},
			"agent-shim v0.0.0-20261202071346-fd06953abcde (commit fd06953abcde0123, 2026-12-02T07:13:46Z, go1.26.8)"},
		{"with local changes", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fd06953"}, {Key: "vcs.modified", Value: "true"}}},
			"agent-shim (devel) (commit fd06953 with local changes, go1.26.8)"},
		{"a release", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "agent-shim v1.2.3"},
		{"nothing known", debug.BuildInfo{}, "agent-shim (devel)"},
	} {
		if got := versionLine("agent-shim", &tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
