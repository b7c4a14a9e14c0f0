package secondline

import (
	"encoding/json"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
)

// policy2 is the reference policy of adversarial-2.tsv and the corpora
// after it (../../../shared/corpus/README.md), as config.json grants.
func policy2(t testing.TB) *config.File {
	t.Helper()
	if len(neverAllow) == 0 {
		t.Fatal("the never-allow list is not set (never_test.go)")
	}
	allow := []string{"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build",
		"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
		"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"}
	ask := []string{"git push", "git commit", "rm", "sed -i", "curl", "wget"}
	deny := []string{"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"}
	grants := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = "command(" + l + ")"
		}
		return out
	}
	doc := map[string]any{"userSettings": map[string]any{"globalPermissionGrants": map[string]any{
		"allow": grants(allow), "ask": grants(ask), "deny": grants(deny)}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse("config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func policy2Compiled(t testing.TB) *Policy {
	return Compile(Rules(policy2(t), neverAllow), programs.Builtin())
}
