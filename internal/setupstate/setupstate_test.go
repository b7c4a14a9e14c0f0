//go:build unix

package setupstate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
	"github.com/google/go-cmp/cmp"
)

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	got, err := Dir("/explicit/state", "/x/config.json", env(nil))
	if err != nil || got != "/explicit/state" {
		t.Errorf("--state-dir: got %q, %v", got, err)
	}
	a, err := Dir("", "/home/u/.gemini/config/config.json", env(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "/s/agents-setup/config-config.json-") {
		t.Errorf("XDG_STATE_HOME: got %q", a)
	}
	b, err := Dir("", "/home/u/other/config/config.json", env(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b, "/home/u/.local/state/agents-setup/config-config.json-") {
		t.Errorf("HOME: got %q", b)
	}
	if filepath.Base(a) == filepath.Base(b) {
		t.Errorf("two configs share a state key: %q", filepath.Base(a))
	}
	// Relative XDG_STATE_HOME is ignored, as the XDG spec says.
	c, _ := Dir("", "/home/u/.gemini/config/config.json", env(map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/home/u"}))
	if !strings.HasPrefix(c, "/home/u/.local/state/") {
		t.Errorf("relative XDG_STATE_HOME: got %q", c)
	}
	if _, err := Dir("", "/x/config.json", env(nil)); err == nil {
		t.Error("no HOME: got no error")
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "state")}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&State{Version: Version}, st); diff != "" {
		t.Errorf("missing state (-want +got):\n%s", diff)
	}
	st.Config = "/x/config.json"
	st.Profile = "read-only"
	st.Managed = statefile.Grants{Allow: []string{"a"}}
	st.History = []Entry{{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Action: "apply", Profile: "read-only", Backup: "000001.json", Created: true}}
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestLoadCorrupt(t *testing.T) {
	for _, in := range []string{"", "{", `{"version": 1, "managed": []}`, `{"version": 99}`, "null"} {
		t.Logf("input: %q", in)
		s := Store{Dir: t.TempDir()}
		if err := os.WriteFile(s.Path(), []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.Load()
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("got %v, want ErrCorrupt", err)
			continue
		}
		if !strings.Contains(err.Error(), s.Path()) {
			t.Errorf("error does not name the file: %v", err)
		}
	}
}

func TestBackupsPruneAndRollback(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	st := &State{}
	// 13 applies, each backing up what was there: the first one created
	// the file.
	for i := range 13 {
		b := &Backup{Existed: i > 0, Content: string(rune('a' + i)), Profile: "p" + string(rune('a'+i))}
		name, err := s.SaveBackup(st, b)
		if err != nil {
			t.Fatal(err)
		}
		st.History = append(st.History, Entry{Action: "apply", Backup: name, Created: i == 0})
		if err := s.Prune(st); err != nil {
			t.Fatal(err)
		}
	}
	names, err := s.Backups()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != KeepBackups || names[0] != "000004.json" || names[9] != "000013.json" {
		t.Errorf("backups kept: %v", names)
	}
	if n := len(Undoable(st)); n != KeepBackups {
		t.Errorf("undoable: %d, want %d", n, KeepBackups)
	}
	if _, _, err := s.Rollback(st, 11); err == nil {
		t.Error("rolling back past the kept backups: got no error")
	}
	b, undone, err := s.Rollback(st, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Before the third newest apply (the 11th, index 10) the file held 'k'.
	if b.Content != "k" || !b.Existed || b.Profile != "pk" {
		t.Errorf("rollback 3 restores %+v", b)
	}
	if len(undone) != 3 || undone[0].Backup != "000013.json" || undone[2].Backup != "000011.json" {
		t.Errorf("undone: %+v", undone)
	}
	// The undone changes stay in the history, marked.
	if len(st.History) != 13 || len(Undoable(st)) != 7 || !st.History[12].Undone || st.History[9].Undone {
		t.Errorf("history after rollback: %d entries, %d undoable", len(st.History), len(Undoable(st)))
	}
	if err := s.Prune(st); err != nil {
		t.Fatal(err)
	}
	if names, _ := s.Backups(); len(names) != 7 {
		t.Errorf("backups after rollback and prune: %v", names)
	}
	if _, _, err := s.Rollback(st, 0); err == nil {
		t.Error("rollback 0: got no error")
	}
}

// TestBackupCompressed: a large config is kept gzipped in its backup and
// read back exactly; a small one stays plain text.
func TestBackupCompressed(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	st := &State{}
	big := strings.Repeat(`"command(regex:^[ \t]*(?:[^\x00-\x20]|\\[^\x00-\x1f])+$)",`+"\n", 500)
	for _, content := range []string{big, "{}\n"} {
		name, err := s.SaveBackup(st, &Backup{Existed: true, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(s.Dir, "backups", name))
		if err != nil {
			t.Fatal(err)
		}
		if compressed := strings.Contains(string(raw), `"gzip"`); compressed != (content == big) || (content == big && len(raw) > len(big)/5) {
			t.Errorf("backup of %d bytes is %d bytes, compressed: %v", len(content), len(raw), compressed)
		}
		b, err := s.LoadBackup(name)
		if err != nil {
			t.Fatal(err)
		}
		if b.Content != content || b.Gzip != "" {
			t.Errorf("content read back differs (%d bytes, want %d)", len(b.Content), len(content))
		}
	}
	// A backup holding both forms is corrupt, not one or the other.
	if err := statefile.WriteJSON(filepath.Join(s.Dir, "backups", "000099.json"), &Backup{Content: "x", Gzip: gzipText("y")}, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadBackup("000099.json"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("both forms: got %v, want ErrCorrupt", err)
	}
}

// TestStoreStrange: state.json and a backup that are a FIFO or /dev/zero
// are errors naming them, never a hang.
func TestStoreStrange(t *testing.T) {
	for _, tc := range strange[:2] {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			tc.make(t, s.Path())
			os.MkdirAll(s.backupDir(), 0o700)
			tc.make(t, filepath.Join(s.backupDir(), "000001.json"))
			within(t, func() {
				if _, err := s.Load(); !errors.Is(err, statefile.ErrNotRegular) || !strings.Contains(err.Error(), s.Path()) {
					t.Errorf("Load: %v", err)
				}
				if _, err := s.LoadBackup("000001.json"); !errors.Is(err, statefile.ErrNotRegular) {
					t.Errorf("LoadBackup: %v", err)
				}
			})
		})
	}
}

// strange makes the file at path something a reader must refuse: a FIFO
// with no writer (an open would wait for one forever), a link to
// /dev/zero (endless), or a directory.
var strange = []struct {
	name string
	make func(t *testing.T, path string)
}{
	{"fifo", func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}},
	{"dev-zero", func(t *testing.T, path string) {
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}},
	{"directory", func(t *testing.T, path string) {
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}},
}

// within fails the test when f does not return within a few seconds: a
// reader that blocks on a FIFO is the defect under test.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hung")
	}
}
