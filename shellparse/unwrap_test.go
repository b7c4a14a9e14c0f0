package shellparse

import "testing"

// TestRunnerNames: the runner list names each runner once (a map literal
// would not compile otherwise; the list needs the check).
func TestRunnerNames(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range runners {
		if seen[r.name] || r.spec == nil {
			t.Errorf("runner %q listed twice or without a spec", r.name)
		}
		seen[r.name] = true
	}
	if spec, ok := runners.lookup("env"); !ok || !spec.assigns {
		t.Errorf("lookup(env) = %v, %v", spec, ok)
	}
	if _, ok := runners.lookup("git"); ok {
		t.Error("git is not a runner")
	}
}
