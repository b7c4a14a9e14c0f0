package gate_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/matcher"
)

// A Go agent builds one gate and consults it before every tool call:
// the tool's name and its key (the command line, the path) in, nil or the
// reason it may not run out. With no Prompter, whatever needs a person is
// refused.
func Example() {
	config := `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(git status)", "command(go test)"], "ask": ["command(git push)"]}}}`
	g, err := gate.Parse("config.json", []byte(config), gate.Options{Scope: gate.NewScope("/nonexistent/project")})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, cmd := range []string{"git status && go test ./...", "git push origin main", "sudo rm -fr //"} {
		fmt.Printf("%s: %v\n", cmd, g.Check(ctx, "Bash", cmd))
	}
	fmt.Println(g.Check(ctx, "Write", "/nonexistent/project/main.go"))
	fmt.Println(g.Check(ctx, "Read", "/etc/shadow"))
	// Output:
	// git status && go test ./...: <nil>
	// git push origin main: needs approval: matches an ask rule: `command(git push)`, and nobody can be asked
	// sudo rm -fr //: denied: never allowed: `rm -r /`
	// <nil>
	// needs approval: read of /etc/shadow, outside the scope, and nobody can be asked
}

// A person answers on a terminal; "s" approves the exact request for the
// session, and the approval is logged as one JSON line.
func ExampleNewTerminalPrompter() {
	var log bytes.Buffer
	g := gate.New(gate.Options{
		Prompter: gate.NewTerminalPrompter(strings.NewReader("s\n"), os.Stdout),
		Audit:    &log,
		Now:      func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) },
		Session:  "demo",
	})
	ctx := context.Background()
	fmt.Println(g.Check(ctx, "Bash", "npm run build"))
	fmt.Println(g.Check(ctx, "Bash", "npm run build")) // not asked again
	fmt.Print(log.String())
	// Output:
	// Bash, shell command: npm run build
	// no rule matches
	//   y  yes, once
	//   s  this exact request, for the session
	//   c  every `npm run …` command, for the session
	//   t  every npm command, for the session
	//   a  always (saves bash:npm run build)
	//   n  no
	// allow? [y/s/c/t/a/N] <nil>
	// <nil>
	// {"tool":"Bash","key":"npm run build","decision":"session","time":"2025-06-01T12:00:00Z","session":"demo"}
}

// A hook front end decides without prompting and answers in the agent's
// protocol; when the person later approves, it applies the answer.
func ExampleGate_DecideBash() {
	policy := matcher.New()
	policy.Add(matcher.Ask, "git push", matcher.Source{})
	g := gate.New(gate.Options{Policy: policy})

	d := g.DecideBash("git push origin main")
	fmt.Println(d.Verdict, "-", d.Reason)
	fmt.Println("always would save:", d.Request.Always)

	if err := g.Apply(*d.Request, gate.AnswerSession); err != nil {
		fmt.Println(err)
	}
	fmt.Println(g.DecideBash("git push origin main").Verdict)
	// Output:
	// ask - matches an ask rule: `git push`
	// always would save: bash:git push origin main
	// allow
}

// Load builds the gate the hook and shell mode build: config.json decides
// the mode, level and rules; the caller gives the scope's root.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "gate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{
  "userSettings": {"globalPermissionGrants": {"allow": ["command(git status)"], "deny": ["command(curl)"]}},
  "agentShim": {"profile": "read-only", "mode": "allow"}
}`), 0o600)
	g, err := gate.Load(config, gate.Options{Scope: gate.NewScope(dir)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Mode(), g.Level())
	for _, cmd := range []string{"git status", "curl -s https://example.com", "npm test", "echo x >> ~/.bashrc"} {
		d := g.DecideBash(cmd)
		fmt.Printf("%s: %s\n", cmd, d.Verdict)
	}
	// Options.Mode and Options.Level are config.json's.
	_, err = gate.Load(config, gate.Options{Mode: gate.ModeYolo})
	fmt.Println(err)
	// Output:
	// allow read-only
	// git status: allow
	// curl -s https://example.com: deny
	// npm test: allow
	// echo x >> ~/.bashrc: ask
	// loading the gate: Options.Mode is config.json's agentShim.mode; leave it zero
}

// An agent's hook JSON is decided as it comes: one call reads it strictly,
// checks it and decides it. Parse takes a config.json's bytes, as Load
// takes its path.
func ExampleGate_DecideJSON() {
	g, err := gate.Parse("config.json", []byte(`{"userSettings": {"globalPermissionGrants": {"allow": ["command(git status)"]}}}`),
		gate.Options{Scope: gate.NewScope("/")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range []string{
		`{"cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git status"}}`,
		`{"cwd": "/", "tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_name": "Read"}`,
		`{"cwd": "relative", "tool_name": "Bash", "tool_input": {"command": "git status"}}`,
	} {
		d, err := g.DecideJSON([]byte(in))
		fmt.Println(d.Verdict, err)
	}
	// Output:
	// allow <nil>
	// default malformed tool input: duplicate key "tool_name"
	// default malformed tool input: cwd: "relative" is not absolute
}
