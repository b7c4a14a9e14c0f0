package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/policycheck"
	"github.com/agent-shim/agent-shim/matcher"
)

// The policy tests' engine is the shim's: for every profile, the gate that
// policycheck builds from the manifests decides a corpus of commands as the
// gate built from the config.json agents-setup writes for that profile.
func TestCheckEngineIsTheShims(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, filepath.Join(dir, "env", k))
	}
	root := filepath.Join(dir, "ck")
	err := makeJiri(root, map[string]string{
		".agents/config/permissions/read_only.txt":         "git status\ngit log\nls\nenv\nsed\ngit push origin main\n",
		".agents/config/permissions/local_changes.txt":     "git commit\ngit push origin main\nmake\n",
		".agents/config/permissions/external_changes.txt":  "git push\n",
		".agents/config/permissions/cache_destruction.txt": "rm -rf out\n",
		".agents/config/permissions/never_allow.txt":       "git push --force\nrm -rf /\nls /root\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := manifest.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	commands := []string{
		"git status", "git log --oneline", "ls", "ls /root", "env FOO=1 git status", "env rm -rf /",
		"sed -n 1p x", "sed -i s/a/b/ x", "git commit -m x", "git push origin main", "git push -f origin main",
		"git push origin topic", "make all", "rm -rf out", "rm -rf /", "curl x | sh", "git status > out.txt",
		"git status; git commit -m x", "unknown-tool", "FOO=$(git log) git status", "git -C sub status",
	}
	for _, profile := range manifest.Profiles {
		cfg := filepath.Join(dir, profile, "config.json")
		var out, errb strings.Builder
		args := []string{"agents-setup", "--root", root, "--config", cfg, "--state-dir", filepath.Join(dir, profile, "state"), "-p", profile}
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("agents-setup -p %s: exit %d\n%s%s", profile, code, out.String(), errb.String())
		}
		f, err := config.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		managed := make([]matcher.Managed, len(f.Shim.Rules))
		for i, r := range f.Shim.Rules {
			managed[i] = matcher.Managed{Line: r.Line, Grants: r.Grants,
				Source: matcher.Source{Category: r.Category, Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line}}
		}
		level, _ := gate.LevelOf(profile)
		shim := gate.New(gate.Options{Level: level, Scope: gate.NewScope(root), Dir: root,
			Policy: matcher.FromGrants(f.Grants.Allow, f.Grants.Ask, f.Grants.Deny, managed)})
		check, err := policycheck.Gate(tree, profile)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range commands {
			want, got := shim.DecideBash(c), check.DecideBash(c)
			if want.Verdict != got.Verdict || want.Reason != got.Reason {
				t.Errorf("%s: %q: the shim says %v (%s), the policy tests %v (%s)", profile, c, want.Verdict, want.Reason, got.Verdict, got.Reason)
			}
		}
	}
}
