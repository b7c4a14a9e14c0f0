// Package setupstate is agents-setup's state between runs: state.json
// (the profile, digests of the managed grants, a fingerprint of the last
// run's inputs, the history) and the backups that --rollback restores.
//
// A change writes its backup first (the config and state before it, and
// the grants it will manage), then the config, then state.json; package
// setup journals the change so that a crash in between is completed or
// undone by the next run.
//
// Each config file has its own state directory, keyed to the file's
// absolute path, so two checkouts or two configs never share state.
package setupstate

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
)

// ErrCorrupt is wrapped by Load when state.json cannot be read as state.
var ErrCorrupt = errors.New("corrupt state file")

// Version is the version of state.json this package writes.
const Version = 1

// KeepBackups is how many config backups are kept.
const KeepBackups = 10

// Digests returns the digests of g, per list.
func Digests(g statefile.Grants) statefile.Grants {
	d := func(list []string) []string {
		out := make([]string, len(list))
		for i, x := range list {
			out[i] = statefile.Digest(x)
		}
		return out
	}
	return statefile.Grants{Allow: d(g.Allow), Ask: d(g.Ask), Deny: d(g.Deny)}
}

// Dir returns the state directory of the config file at configPath:
// stateDir when given, else $XDG_STATE_HOME/agents-setup/<key> (with
// $HOME/.local/state as the default), the key being a readable name and a
// hash of the config's absolute path.
func Dir(stateDir, configPath string, getenv func(string) string) (string, error) {
	if stateDir != "" {
		return filepath.Abs(stateDir)
	}
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	base, err := statefile.StateHome(getenv)
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	return filepath.Join(base, "agents-setup", key(abs)), nil
}

// readable replaces each run of characters other than A-Za-z0-9._- with
// one underscore.
func readable(s string) string {
	var b strings.Builder
	run := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		switch {
		case ok:
			b.WriteRune(r)
			run = false
		case !run:
			b.WriteByte('_')
			run = true
		}
	}
	return b.String()
}

// key names the state directory of a config path: the last two path
// elements made readable, then a hash of the whole path.
func key(abs string) string {
	sum := sha256.Sum256([]byte(abs))
	name := filepath.Base(filepath.Dir(abs)) + "-" + filepath.Base(abs)
	name = strings.Trim(readable(name), "_.-")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return name + "-" + hex.EncodeToString(sum[:8])
}

// State is the content of state.json.
type State struct {
	Version int `json:"version"`
	// Config is the absolute path of the config file this state manages.
	Config string `json:"config"`
	// Profile is the last applied profile, "" after a reset.
	Profile string `json:"profile"`
	// Fingerprint identifies the inputs of the last run (manifests,
	// profile, ad-hoc rules, the config's identity); a run with the same one has
	// nothing to do.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Managed are the digests (see statefile.Digest) of the grants the last run
	// manages, per list. statefile.Grants are regular expressions of a few KB each,
	// and the shim's rules with their text are in the config itself (and
	// in the backups), so state.json stays small and quick to read.
	Managed statefile.Grants `json:"managed"`
	// History lists what was done, oldest first.
	History []Entry `json:"history"`
	// NextBackup numbers the next backup file.
	NextBackup int `json:"nextBackup"`
	// Held lists what the last git hook run held back (see Held).
	Held []Held `json:"held,omitempty"`
}

// Entry is one change recorded in the history.
type Entry struct {
	Time    time.Time `json:"time"`
	Action  string    `json:"action"` // apply, reset or rollback
	Profile string    `json:"profile,omitempty"`
	// Backup names the backup holding what the config (and the state)
	// was before this change; "" once the backup was pruned, or for a
	// rollback, which is not itself undone.
	Backup string `json:"backup,omitempty"`
	// Created reports that the change created the config file.
	Created bool `json:"created,omitempty"`
	// Wrote is a digest (SHA-256, hex) of the content the change wrote,
	// "absent" when it removed the file: a rollback that finds the config
	// still so restores the backup exactly, and otherwise keeps the hand
	// edits made since.
	Wrote string `json:"wrote,omitempty"`
	// Undone marks a change a later rollback undid. It stays in the
	// history, and can no longer be rolled back.
	Undone bool `json:"undone,omitempty"`
}

// Held is a change of the manifests that a git hook run did not apply
// because it would widen the policy: it waits for a person to run
// agents-setup.
type Held struct {
	// List is the grant list ("allow", "ask", "deny") and Change what
	// would happen to the rule there: "add" or "remove".
	List   string `json:"list"`
	Change string `json:"change"`
	Line   string `json:"line"`
	File   string `json:"file,omitempty"`
	Num    int    `json:"num,omitempty"`
}

// Backup is what a config file and its state were before a change.
type Backup struct {
	Time time.Time `json:"time"`
	// Existed is false when the config file did not exist: restoring
	// the backup deletes it.
	Existed bool   `json:"existed"`
	Content string `json:"content,omitempty"`
	// Gzip is Content compressed (gzip, base64) when that is smaller:
	// SaveBackup writes it instead of Content, LoadBackup restores Content.
	// A config of hundreds of regex grants compresses tenfold or more.
	Gzip string `json:"gzip,omitempty"`
	// Profile and Managed are the state before the change.
	Profile string           `json:"profile"`
	Managed statefile.Grants `json:"managed"`
	// Next are the digests of the grants the change manages. The backup
	// is written before the config and state.json after it, so a backup
	// newer than state.json (see Pending) is a change that may have
	// written the config but not the state: both Managed and Next count
	// as managed then, and no grant is taken for the user's.
	Next statefile.Grants `json:"next"`
}

// Store is the state directory of one config file.
type Store struct {
	Dir string
}

// Path returns the path of state.json.
func (s Store) Path() string { return filepath.Join(s.Dir, "state.json") }

func (s Store) backupDir() string { return filepath.Join(s.Dir, "backups") }

// Load reads state.json. A missing file yields an empty state; one that
// cannot be decoded an error wrapping ErrCorrupt.
func (s Store) Load() (*State, error) {
	path := s.Path()
	data, err := statefile.ReadRegular(path, statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Version: Version}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("reading state %s: %w: %v", path, ErrCorrupt, err)
	}
	if st.Version != Version {
		return nil, fmt.Errorf("reading state %s: %w: version %d, want %d", path, ErrCorrupt, st.Version, Version)
	}
	return &st, nil
}

// Save writes state.json atomically.
func (s Store) Save(st *State) error {
	Normalize(st)
	return statefile.WriteJSON(s.Path(), st, 0o600)
}

// Normalize sets st's version and turns nil lists into empty ones, as
// Save writes them.
func Normalize(st *State) {
	st.Version = Version
	st.Managed = nonNil(st.Managed)
	if st.History == nil {
		st.History = []Entry{}
	}
}

func nonNil(g statefile.Grants) statefile.Grants {
	for _, l := range []*[]string{&g.Allow, &g.Ask, &g.Deny} {
		if *l == nil {
			*l = []string{}
		}
	}
	return g
}

// SaveBackup writes b as the next backup of st and returns its name.
func (s Store) SaveBackup(st *State, b *Backup) (string, error) {
	b.Managed = nonNil(b.Managed)
	b.Next = nonNil(b.Next)
	st.NextBackup++
	name := fmt.Sprintf("%06d.json", st.NextBackup)
	out := *b
	if z := gzipText(b.Content); len(b.Content) > compressAbove && len(z) < len(b.Content) {
		out.Content, out.Gzip = "", z
	}
	if err := statefile.WriteJSON(filepath.Join(s.backupDir(), name), &out, 0o600); err != nil {
		st.NextBackup--
		return "", err
	}
	return name, nil
}

// LoadBackup reads the backup called name.
func (s Store) LoadBackup(name string) (*Backup, error) {
	path := filepath.Join(s.backupDir(), filepath.Base(name))
	data, err := statefile.ReadRegular(path, statefile.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("reading backup: %w", err)
	}
	var b Backup
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("reading backup %s: %w: %v", path, ErrCorrupt, err)
	}
	if b.Gzip != "" {
		if b.Content != "" {
			return nil, fmt.Errorf("reading backup %s: %w: both content and gzip", path, ErrCorrupt)
		}
		if b.Content, err = gunzipText(b.Gzip); err != nil {
			return nil, fmt.Errorf("reading backup %s: %w: %v", path, ErrCorrupt, err)
		}
		b.Gzip = ""
	}
	return &b, nil
}

// compressAbove is the content size past which backups are compressed.
const compressAbove = 4096

// gzipText returns s gzipped (fastest level: a backup is written on every
// change) and base64-encoded.
func gzipText(s string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write([]byte(s))
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func gunzipText(s string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(zr, statefile.MaxConfig+1))
	if err != nil {
		return "", err
	}
	if len(out) > statefile.MaxConfig {
		return "", fmt.Errorf("%w: more than %d bytes", statefile.ErrTooLarge, statefile.MaxConfig)
	}
	return string(out), nil
}

// TrimRefs clears the history's references to backups past the
// KeepBackups newest (and to those of undone changes): those changes can
// no longer be rolled back. It returns the backups still referenced.
func TrimRefs(st *State) map[string]bool {
	var refs []int
	for i, e := range st.History {
		switch {
		case e.Backup != "" && e.Undone:
			st.History[i].Backup = "" // it cannot be rolled back again
		case e.Backup != "":
			refs = append(refs, i)
		}
	}
	keep := map[string]bool{}
	for k, i := range refs {
		if len(refs)-k > KeepBackups {
			st.History[i].Backup = ""
			continue
		}
		keep[st.History[i].Backup] = true
	}
	return keep
}

// Prune clears the references TrimRefs clears and removes every backup
// (and any stray file) no longer referenced.
func (s Store) Prune(st *State) error {
	keep := TrimRefs(st)
	entries, err := statefile.ReadDir(s.backupDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pruning backups: %w", err)
	}
	for _, e := range entries {
		if !keep[e.Name()] {
			if err := os.Remove(filepath.Join(s.backupDir(), e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("pruning backups: %w", err)
			}
		}
	}
	return nil
}

// LastBackup returns the highest number among the backup files on disk
// (0 when there are none): a state that cannot be read gives no
// NextBackup, and a new backup must not overwrite an old one.
func (s Store) LastBackup() (int, error) {
	names, err := s.Backups()
	if err != nil {
		return 0, err
	}
	last := 0
	for _, n := range names {
		if i, err := strconv.Atoi(strings.TrimSuffix(n, ".json")); err == nil && strings.HasSuffix(n, ".json") && i > last {
			last = i
		}
	}
	return last, nil
}

// KeepUnreadable keeps the state.json that cannot be read under a name
// of its own (state.json.unreadable-<unix time>, a hard link: it is not
// read), before a reset writes a new one: its history and the backups it
// references stay for a person to look at. A missing state.json is no
// error; it returns the name kept, or "".
func (s Store) KeepUnreadable(now time.Time) (string, error) {
	kept := s.Path() + ".unreadable-" + strconv.FormatInt(now.Unix(), 10)
	err := os.Link(s.Path(), kept)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case errors.Is(err, fs.ErrExist):
		return kept, nil
	case err != nil:
		return "", fmt.Errorf("keeping the unreadable %s: %w", s.Path(), err)
	}
	return kept, nil
}

// Backups lists the backup files on disk, oldest first.
func (s Store) Backups() ([]string, error) {
	entries, err := statefile.ReadDir(s.backupDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing backups: %w", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// Undoable returns the indexes in st.History of the changes that can be
// rolled back, newest first.
func Undoable(st *State) []int {
	var idx []int
	for i := len(st.History) - 1; i >= 0; i-- {
		if st.History[i].Backup != "" && !st.History[i].Undone {
			idx = append(idx, i)
		}
	}
	return idx
}

// TrimHistory keeps the newest n history entries.
func TrimHistory(st *State, n int) {
	if len(st.History) > n {
		st.History = append([]Entry(nil), st.History[len(st.History)-n:]...)
	}
}

// Rollback undoes the n newest changes that can be undone: it marks them
// undone in the history and returns the backup taken before the oldest of
// them, which holds the config (and the state) to restore, with the
// history entries undone, newest first.
func (s Store) Rollback(st *State, n int) (*Backup, []Entry, error) {
	idx := Undoable(st)
	if n < 1 {
		return nil, nil, fmt.Errorf("rolling back %d changes: want at least 1", n)
	}
	if n > len(idx) {
		return nil, nil, fmt.Errorf("rolling back %d changes: only %d can be rolled back", n, len(idx))
	}
	oldest := st.History[idx[n-1]]
	b, err := s.LoadBackup(oldest.Backup)
	if err != nil {
		return nil, nil, err
	}
	st.History = slices.Clone(st.History)
	var undone []Entry
	for _, i := range idx[:n] {
		undone = append(undone, st.History[i])
		st.History[i].Undone = true
	}
	return b, undone, nil
}
