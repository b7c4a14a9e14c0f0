//go:build linux && (amd64 || arm64)

package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What the layer refuses it returns as data, for the caller to say what
// would allow it: an execution (the program, its argv, the decider's
// reason), a metadata call outside the writable directories (the call,
// the file, and that the scope would allow it).
func TestRunRefusedData(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	in, outside := filepath.Join(dir, "in"), filepath.Join(dir, "outside")
	files(t, dir, map[string]string{"in/": "", "outside/canary": "c"})
	canary := filepath.Join(outside, "canary")
	r := &recorder{deny: map[string]bool{"touch": true}}
	st, stdout, out := runScriptWith(t, in, Config{Decide: r.decide, Confine: true, Writable: []string{in, "/dev/null"}},
		"touch made; chmod 666 "+canary+"; echo done; exit 3")
	if st.Code != 3 || stdout != "done\n" {
		t.Fatalf("status %+v, stdout %q\n%s", st, stdout, out)
	}
	touch := slices.IndexFunc(st.Refused, func(x Refusal) bool { return x.Kind == "exec" })
	chmod := slices.IndexFunc(st.Refused, func(x Refusal) bool { return x.Kind == "metadata" })
	switch {
	case touch < 0 || filepath.Base(st.Refused[touch].Path) != "touch" || !slices.Equal(st.Refused[touch].Argv, []string{"touch", "made"}) ||
		st.Refused[touch].Reason != "denied by the test" || st.Refused[touch].Scope:
		t.Errorf("the refused execution: %+v", st.Refused)
	case chmod < 0 || st.Refused[chmod].Path != canary || st.Refused[chmod].Call != "fchmodat" || !st.Refused[chmod].Scope:
		t.Errorf("the refused chmod: %+v", st.Refused)
	case touch > chmod:
		t.Errorf("not in order: %+v", st.Refused)
	}
	if _, err := os.Stat(filepath.Join(in, "made")); err == nil {
		t.Error("the refused touch ran")
	}
}
