package gate

import (
	"context"
	"fmt"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

// benchPolicy is a policy of the size of a real checkout's: about 400 rules
// over about 100 programs, in every list, git with many subcommands.
func benchPolicy() *matcher.Policy {
	p := matcher.New()
	git := []string{"status", "log", "diff", "show", "branch", "fetch", "pull", "add", "commit",
		"checkout", "switch", "stash", "rebase", "merge", "tag", "remote", "blame", "grep",
		"rev-parse", "ls-files", "cherry-pick", "worktree", "submodule", "describe", "config --get"}
	for _, s := range git {
		p.Add(matcher.Allow, "git "+s, matcher.Source{Category: "read_only", File: "permissions/read_only.txt"})
	}
	for _, l := range []string{"git push", "git push --force", "git reset --hard", "git clean -fdx", "git branch -D"} {
		p.Add(matcher.Deny, l, matcher.Source{Category: "never_allow"})
	}
	for i := range 95 {
		prog := fmt.Sprintf("tool%02d", i)
		p.Add(matcher.Allow, prog+" list", matcher.Source{Category: "read_only"})
		p.Add(matcher.Allow, prog+" show --all", matcher.Source{Category: "read_only"})
		p.Add(matcher.Ask, prog+" deploy", matcher.Source{Category: "external_changes"})
		p.Add(matcher.Deny, prog+" wipe -rf /", matcher.Source{Category: "never_allow"})
	}
	return p
}

func BenchmarkCheckBash(b *testing.B) {
	proj := b.TempDir()
	g := New(Options{Policy: benchPolicy(), Level: LevelLocalChanges, Scope: NewScope(proj)})
	ctx := context.Background()
	if n := len(benchPolicy().Rules()); n < 400 {
		b.Fatalf("policy has %d rules", n)
	}
	for _, bc := range []struct{ name, cmd string }{
		{"git-status", "git status"},
		{"pipeline", "git -C sub log --oneline -n 20 | grep fix | head -5"},
		{"redirect", "git diff > changes.patch"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if err := g.checkBash(ctx, bc.cmd); bc.name == "git-status" && err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = g.checkBash(ctx, bc.cmd)
			}
		})
	}
}

func BenchmarkCheckFileWrite(b *testing.B) {
	proj := b.TempDir()
	g := New(Options{Level: LevelLocalChanges, Scope: NewScope(proj)})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := g.checkFileWrite(ctx, "Write", proj+"/src/main.go"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatcherDecide is the matcher alone on the same policy, the
// floor under checkBash.
func BenchmarkMatcherDecide(b *testing.B) {
	p := benchPolicy()
	p.Decide("git status")
	b.ReportAllocs()
	for b.Loop() {
		p.Decide("git status")
	}
}
