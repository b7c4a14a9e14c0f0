package approvals

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	in := `{"tool":"Bash","key":"npm test","decision":"once","time":"2025-06-01T12:00:00Z","session":"a"}

{"tool":"Read","key":"/x","decision":"always","time":"2025-06-01T12:00:01Z","session":"b"}
{"tool":"Bash","key":"npm ru`
	got, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []gate.Approval{
		{Tool: "Bash", Key: "npm test", Decision: "once", Time: fixed, Session: "a"},
		{Tool: "Read", Key: "/x", Decision: "always", Time: fixed.Add(time.Second), Session: "b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for _, bad := range []string{
		"not json\n",
		`{"tool":"Bash"}` + "\n",
		`{"tool":"Bash","decision":"once"}` + "\nnope\n",
	} {
		if _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("Read(%q): no error", bad)
		} else {
			t.Logf("%q: %v", bad, err)
		}
	}
}

func TestPath(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}
	getenv := func(k string) string { return env[k] }
	if p, _ := Path(getenv); p != "/s/agent-shim/approvals.jsonl" {
		t.Errorf("with XDG_STATE_HOME: %s", p)
	}
	delete(env, "XDG_STATE_HOME")
	if p, _ := Path(getenv); p != "/h/.local/state/agent-shim/approvals.jsonl" {
		t.Errorf("with HOME: %s", p)
	}
	delete(env, "HOME")
	if _, err := Path(getenv); err == nil {
		t.Errorf("no HOME: no error")
	}
}

func TestRecommend(t *testing.T) {
	bash := func(keys ...string) []gate.Approval {
		var out []gate.Approval
		for _, k := range keys {
			out = append(out, gate.Approval{Tool: "Bash", Key: k, Decision: "once", Time: fixed})
		}
		return out
	}
	tests := []struct {
		name string
		in   []gate.Approval
		want []Recommendation
	}{
		{"program and subcommand", bash("npm run build", "npm run test", "npm run build"), []Recommendation{{
			Pattern: "npm run", Grant: "command(npm run)",
			Reason:   "approved 3 times in 2 distinct command lines starting with `npm run`",
			Evidence: []string{"npm run build", "npm run test"},
		}}},
		{"narrowed to the shared words", bash("cargo build --release", "cargo build"), []Recommendation{{
			Pattern: "cargo build", Grant: "command(cargo build)",
			Reason:   "approved 2 times in 2 distinct command lines starting with `cargo build`",
			Evidence: []string{"cargo build", "cargo build --release"},
		}}},
		{"every command of a line, git normalized", bash("git -C sub fetch origin && go vet ./...", "git fetch --all; go vet ./x"), []Recommendation{
			{Pattern: "git fetch", Grant: "command(git fetch)",
				Reason:   "approved 2 times in 2 distinct command lines starting with `git fetch`",
				Evidence: []string{"git -C sub fetch origin && go vet ./...", "git fetch --all; go vet ./x"}},
			{Pattern: "go vet", Grant: "command(go vet)",
				Reason:   "approved 2 times in 2 distinct command lines starting with `go vet`",
				Evidence: []string{"git -C sub fetch origin && go vet ./...", "git fetch --all; go vet ./x"}},
		}},
		{"one approval is not enough", bash("npm run build"), nil},
		{"other tools are not commands", []gate.Approval{
			{Tool: "WebFetch", Key: "npm run a", Decision: "once"}, {Tool: "WebFetch", Key: "npm run b", Decision: "once"},
		}, nil},
		{"shells and interpreters", bash("bash -c 'ls'", "bash -c 'ls'", "python3 x.py", "python3 y.py", "sh x.sh", "sh x.sh", "node a.js", "node a.js"), nil},
		// From the program table: every interpreter and script language.
		{"table interpreters", bash("Rscript a.R", "Rscript b.R", "python3.12 x.py", "python3.12 y.py", "nawk 1 f", "nawk 1 g", "php -r 1", "php -r 2"), nil},
		{"runners", bash("env FOO=1 ls", "env FOO=1 ls", "sudo apt update", "sudo apt update", "doas x", "doas x", "xargs ls", "xargs ls", "find . -name x", "find . -name x"), nil},
		{"bare destructive programs", bash("rm -rf build", "rm -rf dist", "curl https://a", "curl https://b"), nil},
		{"dynamic commands", bash("$CMD run", "$CMD run", "npm run $X", "npm run $X"), nil},
		{"globs", bash("ls *.go", "ls *.go"), []Recommendation{{
			Pattern: "ls", Grant: "command(ls)", Reason: "approved 2 times in 1 distinct command lines starting with `ls`",
			Evidence: []string{"ls *.go"},
		}}},
	}
	for _, tc := range tests {
		got := Recommend(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
		for _, r := range got {
			if strings.ContainsAny(r.Pattern, "*?[") {
				t.Errorf("%s: pattern %q holds a glob", tc.name, r.Pattern)
			}
		}
	}
	// Deterministic: the same approvals in another order give the same
	// recommendations.
	in := bash("npm run a", "make x", "npm run b", "make y", "go test ./a", "go test ./b")
	first := Recommend(in)
	for i := range 20 {
		rev := append([]gate.Approval(nil), in...)
		for j := range rev {
			k := (j*7 + i) % len(rev)
			rev[j], rev[k] = rev[k], rev[j]
		}
		if diff := cmp.Diff(first, Recommend(rev)); diff != "" {
			t.Fatalf("order changed the result:\n%s", diff)
		}
	}
}

var fixed = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
