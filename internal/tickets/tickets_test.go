package tickets

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
)

// tenv is the hook's and shell mode's view of a state directory in a
// temporary directory.
type tenv struct {
	getenv func(string) string
}

// testNow is the tickets' clock in the tests.
var testNow = time.Now

func (e *tenv) store() Store {
	return Store{Dir: filepath.Join(e.getenv("XDG_STATE_HOME"), "agent-shim"), Now: func() time.Time { return testNow() }}
}

func (e *tenv) recordTicket(ag *agents.Agent, c *gate.Call, d gate.Decision) error {
	return e.store().Record(ag, c, d)
}

func (e *tenv) takeTicket(line string) (*Ticket, string, error) {
	return e.store().TakeLine(line, e.getenv)
}

// ticketEnv is a state directory in a temporary directory, working in
// its proj.
func ticketEnv(t *testing.T) (*tenv, string) {
	t.Helper()
	root := t.TempDir()
	vars := map[string]string{
		"HOME":           filepath.Join(root, "home"),
		"XDG_STATE_HOME": filepath.Join(root, "state"),
	}
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	return &tenv{getenv: func(k string) string { return vars[k] }}, root
}

func hookCall(session, cwd, command string) *gate.Call {
	raw, _ := json.Marshal(command)
	return &gate.Call{SessionID: session, Cwd: cwd, Event: "PreToolUse", ToolName: "Bash",
		ToolInput: map[string]json.RawMessage{"command": raw}}
}

func setNow(t *testing.T, at time.Time) {
	t.Helper()
	old := testNow
	t.Cleanup(func() { testNow = old })
	testNow = func() time.Time { return at }
}

func TestTicketOnce(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	claude := agents.Claude
	if err := e.recordTicket(claude, hookCall("s1", proj, "git push origin main"), gate.Decision{Verdict: gate.Ask}); err != nil {
		t.Fatal(err)
	}
	tdir := filepath.Join(root, "state", "agent-shim", "tickets")
	entries, err := ticketFiles(tdir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("tickets: %v, %v", entries, err)
	}
	fi, err := os.Stat(filepath.Join(tdir, entries[0].Name()))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ticket mode: %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(root, "state", "agent-shim", "cache.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a key was made: %v", err)
	}

	for _, tc := range []struct {
		line, cwd string
	}{
		{"git push origin dev", proj},   // another command
		{"git push origin main ", proj}, // not the exact command
		{"git push origin main", root},  // another directory
	} {
		t.Logf("input: %q in %s", tc.line, tc.cwd)
		t.Chdir(tc.cwd)
		if tk, _, err := e.takeTicket(tc.line); tk != nil || err != nil {
			t.Fatalf("took %+v, %v", tk, err)
		}
	}
	t.Chdir(proj)
	tk, cmd, err := e.takeTicket("git push origin main")
	if err != nil || tk == nil || tk.Kind != Ask || cmd != "git push origin main" {
		t.Fatalf("took %+v %q, %v", tk, cmd, err)
	}
	// Used: gone.
	if tk, _, err := e.takeTicket("git push origin main"); tk != nil || err != nil {
		t.Fatalf("took a used ticket: %+v, %v", tk, err)
	}
}

func TestTicketKinds(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	tests := []struct {
		agent   string
		verdict gate.Verdict
		want    string // "" is no ticket
	}{
		{"claude-code", gate.Allow, Seen},
		{"claude-code", gate.Ask, Ask},
		{"claude-code", gate.Default, Ask},
		{"claude-code", gate.Deny, ""},
		{"codex", gate.Ask, ""}, // answered deny: nothing runs
		{"codex", gate.Allow, Seen},
		{"gemini-cli", gate.Ask, ""},
		{"gemini-cli", gate.Default, Ask},
	}
	for i, tc := range tests {
		t.Logf("input: %s %v", tc.agent, tc.verdict)
		cmd := "cmd" + strings.Repeat("x", i)
		if err := e.recordTicket(agents.ByName(tc.agent), hookCall("s", proj, cmd), gate.Decision{Verdict: tc.verdict}); err != nil {
			t.Fatal(err)
		}
		tk, _, err := e.takeTicket(cmd)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if tk != nil {
			got = tk.Kind
		}
		if got != tc.want {
			t.Errorf("ticket %q, want %q", got, tc.want)
		}
	}
	// Other tools leave none.
	in := &gate.Call{SessionID: "s", Cwd: proj, Event: "PreToolUse", ToolName: "Write",
		ToolInput: map[string]json.RawMessage{"file_path": json.RawMessage(`"x"`)}}
	if err := e.recordTicket(agents.Claude, in, gate.Decision{Verdict: gate.Allow}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := ticketFiles(filepath.Join(root, "state", "agent-shim", "tickets")); len(entries) != 0 {
		t.Fatalf("left %d tickets", len(entries))
	}
}

func TestTicketExpired(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	setNow(t, t0)
	for _, cmd := range []string{"a", "b"} {
		if err := e.recordTicket(agents.Claude, hookCall("s", proj, cmd), gate.Decision{Verdict: gate.Ask}); err != nil {
			t.Fatal(err)
		}
	}
	setNow(t, t0.Add(TTL))
	if tk, _, _ := e.takeTicket("a"); tk == nil {
		t.Fatal("a ticket at its expiry was refused")
	}
	setNow(t, t0.Add(TTL+time.Second))
	if tk, _, _ := e.takeTicket("b"); tk != nil {
		t.Fatal("an expired ticket was taken")
	}
	// Writing a ticket removes the expired ones.
	if err := e.recordTicket(agents.Claude, hookCall("s", proj, "c"), gate.Decision{Verdict: gate.Ask}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := ticketFiles(filepath.Join(root, "state", "agent-shim", "tickets")); len(entries) != 1 {
		t.Fatalf("%d tickets left, want 1", len(entries))
	}
}

// ticketFiles lists the tickets in tdir (not the prune marker).
func ticketFiles(tdir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(tdir)
	return slices.DeleteFunc(entries, func(de os.DirEntry) bool { return strings.HasPrefix(de.Name(), ".") }), err
}

// A hook call reads the ticket directory at most once per pruneEvery, so
// a long session's tickets do not make every call slower; expired tickets
// still go within that time.
func TestTicketPruneRate(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	tdir := filepath.Join(root, "state", "agent-shim", "tickets")
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	record := func(cmd string) {
		t.Helper()
		if err := e.recordTicket(agents.Claude, hookCall("s", proj, cmd), gate.Decision{Verdict: gate.Ask}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		entries, err := ticketFiles(tdir)
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	setNow(t, t0)
	record("a")
	setNow(t, t0.Add(TTL+time.Second)) // a has expired
	record("b")
	if n := count(); n != 1 {
		t.Fatalf("%d tickets after the first prune, want 1 (b)", n)
	}
	setNow(t, t0.Add(2*TTL+2*time.Second)) // b has expired
	record("c")
	if n := count(); n != 1 {
		t.Fatalf("%d tickets, want 1 (c): pruning after pruneEvery", n)
	}
	t1 := t0.Add(3 * TTL)
	setNow(t, t1)
	record("x") // expires at t1+TTL
	setNow(t, t1.Add(TTL-10*time.Second))
	record("d") // prunes (c), x still valid
	setNow(t, t1.Add(TTL+20*time.Second))
	record("e") // x has expired, but the last prune was 30 s ago
	if n := count(); n != 3 {
		t.Fatalf("%d tickets, want 3 (x, d, e): no second read within pruneEvery", n)
	}
	// A marker dated in the future (an agent's touch -d) does not stop
	// pruning.
	future := t1.Add(10 * TTL)
	if err := os.Chtimes(filepath.Join(tdir, ".pruned"), future, future); err != nil {
		t.Fatal(err)
	}
	setNow(t, t1.Add(TTL+25*time.Second))
	record("f")
	if n := count(); n != 3 {
		t.Fatalf("%d tickets, want 3 (d, e, f): a marker dated in the future must not stop pruning", n)
	}
}

// TestTicketMismatch: a ticket file whose content does not match the line,
// the directory, the agent process or the time is not taken. (Tickets are
// trusted by where they are, the protected state directory; that no
// process of the tree can write there is TestTreeCannotForgeThePolicy's.)
func TestTicketMismatch(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	tdir := filepath.Join(root, "state", "agent-shim", "tickets")
	record := func(cmd string, v gate.Verdict) string {
		t.Helper()
		if err := e.recordTicket(agents.Claude, hookCall("s", proj, cmd), gate.Decision{Verdict: v}); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(tdir)
		for _, de := range entries {
			data, _ := os.ReadFile(filepath.Join(tdir, de.Name()))
			if strings.Contains(string(data), `"command":"`+cmd+`"`) {
				return filepath.Join(tdir, de.Name())
			}
		}
		t.Fatalf("no ticket for %q", cmd)
		return ""
	}
	edit := func(path string, f func(*Ticket)) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tk Ticket
		if err := json.Unmarshal(data, &tk); err != nil {
			t.Fatal(err)
		}
		f(&tk)
		data, _ = json.Marshal(&tk)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		line    string
		verdict gate.Verdict
		forge   func(path string)
	}{
		{"expired", "a", gate.Ask, func(p string) { edit(p, func(tk *Ticket) { tk.Expires = testNow().Unix() - 1 }) }},
		{"seen made ask", "b", gate.Allow, func(p string) { edit(p, func(tk *Ticket) { tk.Kind = Ask }) }},
		{"other command", "c", gate.Ask, func(p string) { edit(p, func(tk *Ticket) { tk.Command = "c2" }) }},
		{"other directory", "d", gate.Ask, func(p string) { edit(p, func(tk *Ticket) { tk.Dir = root }) }},
		{"unknown kind", "e", gate.Ask, func(p string) { edit(p, func(tk *Ticket) { tk.Kind = "always" }) }},
		// Bound to another agent process.
		{"other pids", "f", gate.Ask, func(p string) { edit(p, func(tk *Ticket) { tk.PIDs = []int{os.Getpid()} }) }},
		{"not JSON", "g", gate.Ask, func(p string) { os.WriteFile(p, []byte("ask"), 0o600) }},
	}
	for _, tc := range tests {
		t.Logf("input: %s", tc.name)
		tc.forge(record(tc.line, tc.verdict))
		if tk, _, err := e.takeTicket(tc.line); tk != nil && tk.Kind == Ask || err != nil {
			t.Errorf("%s: took %+v, %v", tc.name, tk, err)
		}
	}
}

func TestTicketSession(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	vars := map[string]string{"XDG_STATE_HOME": filepath.Join(root, "state"), "CLAUDE_CODE_SESSION_ID": "s2"}
	e.getenv = func(k string) string { return vars[k] }
	if err := e.recordTicket(agents.Claude, hookCall("s1", proj, "x"), gate.Decision{Verdict: gate.Ask}); err != nil {
		t.Fatal(err)
	}
	if tk, _, _ := e.takeTicket("x"); tk != nil {
		t.Fatal("took another session's ticket")
	}
	vars["CLAUDE_CODE_SESSION_ID"] = "s1"
	if tk, _, _ := e.takeTicket("x"); tk == nil {
		t.Fatal("refused the session's own ticket")
	}
}

// TestTicketRace: of shells racing for one ticket, exactly one gets it.
func TestTicketRace(t *testing.T) {
	e, root := ticketEnv(t)
	proj := filepath.Join(root, "proj")
	if err := e.recordTicket(agents.Claude, hookCall("s", proj, "x"), gate.Decision{Verdict: gate.Ask}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tk, _, _ := e.takeTicket("x"); tk != nil {
				mu.Lock()
				got++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != 1 {
		t.Fatalf("%d shells took the ticket, want 1", got)
	}
}

// TestMarshal: a ticket spelled out is what encoding/json writes of it,
// for strings with every character JSON escapes, with and without the
// fields it leaves out when empty.
func TestMarshal(t *testing.T) {
	for _, s := range []string{"", "git push origin main", "a && b > c < d", "quote \" back \\ tab \t nl \n nul \x00",
		"bad \xff utf8", "sep \u2028", "日本"} {
		for _, tk := range []Ticket{
			{Kind: Ask, Agent: "claude-code", Session: s, Dir: "/p/" + s, Command: s, Expires: 1796190974, PIDs: []int{12, 1}, Nonce: "ab12"},
			{Kind: Seen, Agent: s, Dir: s, Command: "ls " + s, Expires: -1},
		} {
			got, err := tk.marshal()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&tk)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%q:\n got %s\nwant %s", s, got, want)
			}
		}
	}
}
