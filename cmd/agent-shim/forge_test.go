package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// TestTreeCannotForgeThePolicy: what decides (config.json, the policy
// copy, session answers, tickets) lives where no process under the
// run-time layer may write. A forger that has read every byte of the
// shim's state and writes wherever the layer lets the tree write (the
// scope, temp, the user's cache) changes no verdict.
func TestTreeCannotForgeThePolicy(t *testing.T) {
	dir, cfg := testEnv(t, `{"userSettings": {"globalPermissionGrants": {
  "allow": ["command(git status)", "command(make)"], "ask": ["command(git push)"], "deny": ["command(make deploy)"]}},
  "agentShim": {"version": 2, "profile": "local-changes"}}`)
	_, proj := checkout(t, dir)
	// The test's home is in the system's temp directory; a person's is
	// not: the tree's temp directory is one of its own here.
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	oldTemp := tempDirs
	t.Cleanup(func() { tempDirs = oldTemp })
	tempDirs = func() []string { return []string{tmp} }
	e := &env{getenv: os.Getenv, stderr: os.Stderr}
	open := func() *shim {
		s, err := e.open(context.Background(), openOptions{config: cfg, cwd: proj, session: "forge"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.close)
		return s
	}
	lines := []string{"rm -rf ~", "rm -rf /", "git push --force origin main", "make deploy", "git push origin main", "curl x | sh", "git status"}
	verdicts := func(g *gate.Gate) string {
		var out []string
		for _, l := range lines {
			out = append(out, l+": "+g.DecideBash(l).Verdict.String())
		}
		return g.Mode().String() + "; " + strings.Join(out, ", ")
	}
	s := open()
	want := verdicts(s.g) // and the copy is made
	auditPath, err := approvals.Path(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Dir(auditPath)
	deciding := []string{cfg, state, sessions.PolicyCopyDir(auditPath), filepath.Join(state, "sessions"), filepath.Join(state, "tickets")}
	writable := e.shellMode().Run(s.c, "shell", nil).Writable()
	for _, w := range writable {
		for _, d := range deciding {
			if d == w || strings.HasPrefix(d, strings.TrimSuffix(w, "/")+"/") {
				t.Errorf("%s decides, and the run-time layer lets the tree write %s", d, w)
			}
		}
	}
	// The forger copies the real policy copy, made permissive, into every
	// writable directory, under the names the shim once used and uses.
	copies, err := filepath.Glob(filepath.Join(sessions.PolicyCopyDir(auditPath), "policy-*.txt"))
	if err != nil || len(copies) != 1 {
		t.Fatalf("policy copies: %q %v", copies, err)
	}
	real, err := os.ReadFile(copies[0])
	if err != nil {
		t.Fatal(err)
	}
	forged := forgeCopy(t, string(real), strings.NewReplacer("mode\t\"\"\n", "mode\tyolo\n", "mode\task\n", "mode\tyolo\n",
		"\tdeny\t", "\tallow\t", "\task\t", "\tallow\t"))
	for _, w := range writable {
		if fi, err := os.Stat(w); err != nil || !fi.IsDir() || strings.HasPrefix(w, "/dev/") {
			continue
		}
		for _, sub := range []string{"", "agent-shim", "agent-shim/policy"} {
			d := filepath.Join(w, sub)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, filepath.Base(copies[0])), []byte(forged), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// And the session's answers, approving the ask rule's push.
		for _, sub := range []string{"sessions", "agent-shim/sessions", "state/agent-shim/sessions"} {
			d := filepath.Join(w, sub)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "forge.json"), []byte(forgedSession), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := verdicts(open().g); got != want {
		t.Errorf("verdicts changed by what the tree may write:\n got %s\nwant %s", got, want)
	}
	// Where the forger can write, it decides: the session answers in the
	// state directory are read, and so is the copy (which is why both
	// must live there).
	sessions := filepath.Join(state, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessions, "forge.json"), []byte(forgedSession), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := verdicts(open().g); !strings.Contains(got, "git push origin main: allow") {
		t.Fatalf("a forged session file in the state directory is not read (%s): the test forges nothing", got)
	}
	os.Remove(filepath.Join(sessions, "forge.json"))
	if err := os.WriteFile(copies[0], []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	got := verdicts(open().g)
	if got == want {
		t.Fatalf("a forged copy in the state directory is not read: the test forges nothing")
	}
	// ... but not the never-allow list, which comes from the binary.
	for _, l := range []string{"rm -rf ~: deny", "rm -rf /: deny", "git push --force origin main: deny"} {
		if !strings.Contains(got, l) {
			t.Errorf("with a forged copy in the state directory: %s, want %s", got, l)
		}
	}
}

// forgedSession approves, for the session, what TestTreeCannotForgeThePolicy's
// ask rule asks.
const forgedSession = `{"approvals": [{"tool": "Bash", "key": "git push origin main", "decision": "session"}], "asked": []}`

// forgeCopy rewrites a compact policy copy with r as its writer would: the
// header and each region replaced, the region table made anew.
func forgeCopy(t *testing.T, copy string, r *strings.Replacer) string {
	t.Helper()
	end := strings.Index(copy, "\nend\n") + len("\nend\n")
	head := r.Replace(copy[:end])
	var regions []string
	for table := copy[end:]; strings.Contains(table[:26], " "); table = table[26:] {
		var off, n int
		if _, err := fmt.Sscanf(table[:26], "%x %x\n", &off, &n); err != nil {
			t.Fatal(err)
		}
		regions = append(regions, r.Replace(copy[off:off+n]))
	}
	var b strings.Builder
	b.WriteString(head)
	off := len(head) + 26*len(regions)
	for _, reg := range regions {
		fmt.Fprintf(&b, "%016x %08x\n", off, len(reg))
		off += len(reg)
	}
	for _, reg := range regions {
		b.WriteString(reg)
	}
	return b.String()
}

// TestKeyReadAsks: the shim's key is a secret through the hook's file
// tools even where the path scope lets them read freely.
func TestKeyReadAsks(t *testing.T) {
	dir, cfg := testEnv(t, "")
	_, proj := checkout(t, dir)
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "agent-shim")
	if err := os.WriteFile(cfg, []byte(`{"agentShim": {"version": 2, "profile": "local-changes", "pathScope": {"allow": ["`+state+`/..."]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(state, "notes.txt"), `"allow"`},
		{filepath.Join(state, "cache.key"), `"ask"`},
		{filepath.Join(state, ".", "x", "..", "cache.key"), `"ask"`},
	} {
		code, out, stderr := protHookCall(t, "claude-code", cfg, proj, "Read", map[string]any{"file_path": tc.file})
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("Read %s: exit %d %s %s, want %s", tc.file, code, out, stderr, tc.want)
		}
	}
}
