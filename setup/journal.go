package setup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agent-shim/agent-shim/statefile"
)

// A change to config.json is a transaction over three files in two
// directories: config.json, state.json and a backup. It is prepared whole,
// then committed in this order:
//
//  1. the backup (the config and state before the change) is written;
//  2. the new config is written to a temporary file beside config.json,
//     and the new state to one beside state.json;
//  3. the journal, pending.json in the state directory, records the
//     change: the config's content before and after (by digest), the
//     backup, and the state and ad-hoc record to write once the config is
//     in place;
//  4. config.json is re-read: if someone changed it since it was read (an
//     editor, a script: they take no lock), the change is abandoned and
//     re-merged with their edit (see apply);
//  5. the temporary config is renamed over config.json — the commit;
//  6. state.json and adhoc.json are written, old backups pruned;
//  7. the journal is removed.
//
// An error before step 5 removes what steps 1–3 wrote: nothing changed.
// A crash before step 5 leaves a journal whose "before" matches
// config.json, and the next run removes it and its backup; a crash after
// step 5 leaves one whose "after" matches, and the next run writes the
// recorded state: the change enters the history exactly once. Temporary
// files of a crashed run are removed by the next one (statefile.RemoveStale).

const (
	journalFile    = "pending.json"
	journalVersion = 1
)

// journal is the content of pending.json.
type journal struct {
	Version int    `json:"version"`
	Action  string `json:"action"`
	// Target is the file written: config.json or the end of its links.
	Target string `json:"target"`
	// Before and After are digests of the config's content (see digest).
	Before string `json:"before"`
	After  string `json:"after"`
	// Backup is the backup the change wrote.
	Backup string `json:"backup"`
	// State is state.json once the config is in place.
	State statefile.State `json:"state"`
	// Adhoc is adhoc.json once the config is in place; nil: unchanged.
	Adhoc *adhocRecord `json:"adhoc,omitempty"`
}

// digest identifies a config's content; nil (no file) is "absent".
func digest(data []byte) string {
	if data == nil {
		return "absent"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func journalPath(st statefile.Store) string { return filepath.Join(st.Dir, journalFile) }

// stepHook is a test seam: it is called before each write step of a
// transaction with the step's name, and an error it returns is that
// step's error. Tests make it fail (a full disk) or exit the process (a
// crash) at every step in turn.
var stepHook func(step string) error

// The steps, in order. Steps before stepConfig change nothing visible.
const (
	stepBackup     = "backup"
	stepConfigTemp = "config-temp"
	stepStateTemp  = "state-temp"
	stepJournal    = "journal"
	stepConfig     = "config" // the commit
	stepState      = "state"
	stepAdhoc      = "adhoc"
	stepPrune      = "prune"
	stepDone       = "done"
)

// Steps lists the write steps of a transaction, in order (for tests).
var Steps = []string{stepBackup, stepConfigTemp, stepStateTemp, stepJournal, stepConfig, stepState, stepAdhoc, stepPrune, stepDone}

func step(name string) error {
	if stepHook == nil {
		return nil
	}
	return stepHook(name)
}

// errChanged says config.json changed under a transaction before its
// commit: nothing was written, and the caller re-reads and re-merges.
var errChanged = errors.New("config.json changed while agents-setup was writing it")

// change is one prepared transaction.
type change struct {
	action string
	before []byte // the config's content as read; nil: no file
	data   []byte // the new content; nil: remove the file
	backup statefile.Backup
	// state is the state after the change; its Fingerprint is set after
	// the commit by fingerprint, when not nil.
	state       statefile.State
	fingerprint func(info os.FileInfo) string
	// adhoc returns adhoc.json after the change, given the backup's
	// name and the history; nil: unchanged.
	adhoc func(backup string, history []statefile.Entry) *adhocRecord
}

// commit runs the transaction c (see the top of this file). On an error
// before the config is replaced nothing has changed; errChanged says the
// config changed under it. The returned name is the backup's.
func (s *session) commit(c *change) (string, error) {
	target, err := statefile.Target(s.configPath)
	if err != nil {
		return "", fmt.Errorf("writing config: %w (nothing written)", err)
	}
	var undo []func()
	fail := func(err error) (string, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		if errors.Is(err, errChanged) {
			return "", err
		}
		return "", fmt.Errorf("%w (nothing written)", err)
	}

	// 1. The backup.
	st := c.state
	if err := step(stepBackup); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(s.store.Dir, 0o700); err != nil {
		return fail(fmt.Errorf("writing state: %w", err))
	}
	name, err := s.store.SaveBackup(&st, &c.backup)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, func() { os.Remove(filepath.Join(s.store.Dir, "backups", name)) })
	st.History = slices.Clone(st.History)
	st.History[len(st.History)-1].Backup = name
	statefile.TrimRefs(&st)
	var adhoc *adhocRecord
	if c.adhoc != nil {
		adhoc = c.adhoc(name, st.History)
	}

	// 2. The temporary files.
	if err := step(stepConfigTemp); err != nil {
		return fail(err)
	}
	var cfgTmp string
	if c.data != nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return fail(fmt.Errorf("writing config: %w", err))
		}
		if cfgTmp, _, err = statefile.WriteTemp(target, c.data, 0o600); err != nil {
			return fail(err)
		}
		undo = append(undo, func() { os.Remove(cfgTmp) })
	}
	if err := step(stepStateTemp); err != nil {
		return fail(err)
	}
	stateTmp, _, err := writeStateTemp(s.store, &st)
	if err != nil {
		return fail(err)
	}
	defer os.Remove(stateTmp) // used only when the final write fails

	// 3. The journal.
	if err := step(stepJournal); err != nil {
		return fail(err)
	}
	j := journal{Version: journalVersion, Action: c.action, Target: target, Before: digest(c.before), After: digest(c.data), Backup: name, State: st, Adhoc: adhoc}
	if err := statefile.WriteJSON(journalPath(s.store), &j, 0o600); err != nil {
		return fail(err)
	}
	undo = append(undo, func() { os.Remove(journalPath(s.store)) })

	// 4. The config is still what was read.
	now, err := readConfig(target)
	if err != nil {
		return fail(fmt.Errorf("reading config: %w", err))
	}
	if (now == nil) != (c.before == nil) || string(now) != string(c.before) {
		return fail(errChanged)
	}

	// 5. The commit.
	if err := step(stepConfig); err != nil {
		return fail(err)
	}
	if c.data != nil {
		err = statefile.Commit(cfgTmp, target)
	} else if err = os.Remove(target); errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return fail(err)
	}

	// 6. and 7.: the record. The config is in place; an error now leaves
	// the journal, and the next run completes the record.
	after := func(err error) (string, error) {
		return name, fmt.Errorf("%s written, but recording it failed: %w; the next run of agents-setup completes the record", s.o.display(s.configPath), err)
	}
	if c.fingerprint != nil {
		info, err := os.Stat(s.configPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return after(err)
		}
		st.Fingerprint = c.fingerprint(info)
	}
	if err := step(stepState); err != nil {
		return after(err)
	}
	if err := s.store.Save(&st); err != nil {
		// The prepared copy (without the fingerprint) was written where
		// this one fails; it is enough.
		if cerr := statefile.Commit(stateTmp, s.store.Path()); cerr != nil {
			return after(err)
		}
	}
	if err := s.finish(&j, &st); err != nil {
		return after(err)
	}
	return name, nil
}

// finish does what follows the state: the ad-hoc record, pruning, and
// removing the journal.
func (s *session) finish(j *journal, st *statefile.State) error {
	if err := step(stepAdhoc); err != nil {
		return err
	}
	if j.Adhoc != nil {
		if err := saveAdhoc(s.store, j.Adhoc); err != nil {
			return err
		}
	}
	if err := step(stepPrune); err != nil {
		return err
	}
	if err := s.store.Prune(st); err != nil {
		return err
	}
	if err := step(stepDone); err != nil {
		return err
	}
	if err := os.Remove(journalPath(s.store)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", journalPath(s.store), err)
	}
	return nil
}

// writeStateTemp writes st to a temporary file beside state.json: a
// state directory that cannot take it (read-only, full, state.json a
// directory) fails the transaction before anything changed.
func writeStateTemp(store statefile.Store, st *statefile.State) (string, string, error) {
	cp := *st
	cp.Fingerprint = ""
	statefile.Normalize(&cp)
	data, err := json.MarshalIndent(&cp, "", "  ")
	if err != nil {
		return "", "", err
	}
	return statefile.WriteTemp(store.Path(), append(data, '\n'), 0o600)
}

// readConfig reads the config's content; nil when there is no file.
func readConfig(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil && data == nil {
		data = []byte{}
	}
	return data, err
}

// recover completes or undoes a transaction a crash interrupted, and
// removes the temporary files crashed runs left. It returns what it did,
// for the output ("" when there was nothing to do).
func (s *session) recover() (string, error) {
	var stale []string
	for _, p := range []string{s.configPath, s.store.Path(), adhocPath(s.store), journalPath(s.store)} {
		removed, err := statefile.RemoveStale(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		stale = append(stale, removed...)
	}
	removed, err := statefile.RemoveStaleIn(filepath.Join(s.store.Dir, "backups"))
	if err != nil {
		return "", err
	}
	stale = append(stale, removed...)
	data, err := os.ReadFile(journalPath(s.store))
	if errors.Is(err, fs.ErrNotExist) {
		if len(stale) > 0 {
			return fmt.Sprintf("removed %d temporary file(s) of an interrupted run", len(stale)), nil
		}
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", journalPath(s.store), err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || j.Version != journalVersion {
		return "", &HintError{fmt.Errorf("reading %s: %w: %v", journalPath(s.store), statefile.ErrCorrupt, err), "compare config.json with the newest backup in " + s.o.display(filepath.Join(s.store.Dir, "backups")) + ", then remove it"}
	}
	now, err := readConfig(j.Target)
	if err != nil {
		return "", fmt.Errorf("reading config: %w", err)
	}
	cur := digest(now)
	recorded := s.stErr == nil && slices.ContainsFunc(s.st.History, func(e statefile.Entry) bool { return e.Backup == j.Backup && j.Backup != "" })
	switch {
	case recorded:
		// The state was written; only the tail of the record is left.
	case cur == j.Before && j.Before != j.After:
		// The crash came before the commit: undo the preparation.
		if j.Backup != "" {
			os.Remove(filepath.Join(s.store.Dir, "backups", filepath.Base(j.Backup)))
		}
		if err := os.Remove(journalPath(s.store)); err != nil {
			return "", err
		}
		return "an interrupted " + j.Action + " had not changed config.json; its leftovers are removed", nil
	default:
		// The config was replaced (cur == j.After), or changed since by
		// someone else, which is an edit on top of the committed change:
		// either way the change happened, and it enters the history.
		if cur != j.After && s.stErr == nil {
			// Grants this change retired may still be in the edited
			// file: count them as managed too, so none becomes the
			// user's by accident.
			j.State.Managed = unionDigests(j.State.Managed, s.st.Managed)
		}
		if err := s.store.Save(&j.State); err != nil {
			return "", err
		}
	}
	st := j.State
	if recorded {
		st = *s.st
	}
	if err := s.finish(&j, &st); err != nil {
		return "", err
	}
	s.st, s.stErr = &st, nil
	return "completed an interrupted " + j.Action + " of " + s.o.display(s.configPath), nil
}

func unionDigests(a, b statefile.Grants) statefile.Grants {
	return union(a, b)
}
