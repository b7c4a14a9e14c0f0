package setup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agent-shim/agent-shim/internal/setupstate"
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
//  5. the temporary config is exchanged with config.json (renameat2
//     RENAME_EXCHANGE) — the commit. What was swapped out is compared
//     with what was read: an edit that came after step 4 is exchanged
//     back and re-merged like one step 4 found, never lost. Where the
//     system cannot exchange, a rename;
//  6. the directory is synced, state.json and adhoc.json are written,
//     old backups pruned;
//  7. the journal is removed.
//
// The journal names the temporary config (a name only this file's
// recovery removes, statefile.WriteTxnTemp), and the commit is what
// becomes of that name: before step 5 it holds the new content; the
// exchange moves that content into config.json in the same atomic step.
// So the next run tells a finished change from a phantom one by that
// file alone, whatever an editor did to config.json since: if it still
// holds the new content the commit never happened and the preparation is
// removed (the journal first, so that a crash while undoing cannot look
// like a commit); otherwise the change happened and the recorded state
// is written: the change enters the history exactly once.
//
// An error before step 5 removes what steps 1–3 wrote: nothing changed.
// An error after it (a failed sync of the directory included) is
// "written, but …": the history entry is made where it can be, and the
// journal kept for the next run to complete. Temporary files of a crashed
// run are removed by the next one (statefile.RemoveStale, RemoveStaleTxn).

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
	// Temp is the temporary config the commit moves into place (for a
	// removal, the tombstone it renames config.json over); "" for a
	// journal of an older agents-setup: then the content of the config
	// decides.
	Temp string `json:"temp,omitempty"`
	// State is state.json once the config is in place.
	State setupstate.State `json:"state"`
	// Adhoc is adhoc.json once the config is in place; nil: unchanged.
	Adhoc *adhocRecord `json:"adhoc,omitempty"`
	// KeepBackups says the state before the change could not be read (a
	// --reset then): the backups it references are not pruned, and the
	// old state.json is kept beside the new one.
	KeepBackups bool `json:"keepBackups,omitempty"`
}

// digest identifies a config's content; nil (no file) is "absent".
func digest(data []byte) string {
	if data == nil {
		return "absent"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func journalPath(st setupstate.Store) string { return filepath.Join(st.Dir, journalFile) }

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
	stepExchanged  = "exchanged"
	stepSync       = "config-sync"
	stepState      = "state"
	stepAdhoc      = "adhoc"
	stepPrune      = "prune"
	stepDone       = "done"
)

// Steps lists the write steps of a transaction, in order (for tests).
var Steps = []string{stepBackup, stepConfigTemp, stepStateTemp, stepJournal, stepConfig, stepExchanged, stepSync, stepState, stepAdhoc, stepPrune, stepDone}

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
	backup setupstate.Backup
	// state is the state after the change; its Fingerprint is set after
	// the commit by fingerprint, when not nil.
	state       setupstate.State
	fingerprint func(info os.FileInfo) string
	// adhoc returns adhoc.json after the change, given the backup's
	// name and the history; nil: unchanged.
	adhoc func(backup string, history []setupstate.Entry) *adhocRecord
	// keepBackups: see journal.KeepBackups.
	keepBackups bool
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
	setupstate.TrimRefs(&st)
	var adhoc *adhocRecord
	if c.adhoc != nil {
		adhoc = c.adhoc(name, st.History)
	}

	// 2. The temporary files.
	if err := step(stepConfigTemp); err != nil {
		return fail(err)
	}
	var cfgTmp string
	if c.data != nil || c.before != nil {
		// The new content, or for a removal a tombstone that the commit
		// renames config.json over.
		content := c.data
		if content == nil {
			content = []byte(tombstone)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return fail(fmt.Errorf("writing config: %w", err))
		}
		if cfgTmp, _, err = statefile.WriteTxnTemp(target, content, 0o600); err != nil {
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
	j := journal{Version: journalVersion, Action: c.action, Target: target, Before: digest(c.before), After: digest(c.data), Backup: name, Temp: cfgTmp, State: st, Adhoc: adhoc, KeepBackups: c.keepBackups}
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
	var lost string   // an edit the exchange could not put back
	var stepErr error // a test seam's error after the exchange
	switch {
	case c.data != nil:
		lost, stepErr, err = swapIn(cfgTmp, target, c.before)
	case c.before != nil:
		lost, stepErr, err = removeVia(cfgTmp, target, c.before)
	default:
		// Nothing was there to remove: something is now?
		if _, serr := os.Lstat(target); serr == nil {
			err = errChanged
		}
	}
	if err != nil {
		return fail(err)
	}

	// 6. and 7.: the record. The config is in place; an error now leaves
	// the journal, and the next run completes the record.
	after := func(err error) (string, error) {
		return name, fmt.Errorf("%s written, but recording it failed: %w; the next run of agents-setup completes the record", s.o.display(s.configPath), err)
	}
	if lost != "" {
		return after(fmt.Errorf("config.json was edited at the moment it was replaced, and the edit could not be put back: it is in %s, merge it by hand", lost))
	}
	syncErr := stepErr
	if syncErr == nil {
		syncErr = step(stepSync)
	}
	if syncErr == nil {
		syncErr = statefile.SyncDir(filepath.Dir(target))
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
	if c.keepBackups {
		if _, err := s.store.KeepUnreadable(s.o.now()); err != nil {
			return after(err)
		}
	}
	if err := s.store.Save(&st); err != nil {
		// The prepared copy (without the fingerprint) was written where
		// this one fails; it is enough.
		if cerr := statefile.Commit(stateTmp, s.store.Path()); cerr != nil {
			return after(err)
		}
	}
	if syncErr != nil {
		// The history has the change; the journal stays, so the next run
		// checks the commit again and completes the record.
		return name, fmt.Errorf("%s written, but syncing its directory failed: %w; the next run of agents-setup completes the record", s.o.display(s.configPath), syncErr)
	}
	if err := s.finish(&j, &st); err != nil {
		return after(err)
	}
	return name, nil
}

// finish does what follows the state: the ad-hoc record, pruning, and
// removing the journal.
func (s *session) finish(j *journal, st *setupstate.State) error {
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
	if !j.KeepBackups {
		if err := s.store.Prune(st); err != nil {
			return err
		}
	}
	if err := step(stepDone); err != nil {
		return err
	}
	if err := os.Remove(journalPath(s.store)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", journalPath(s.store), err)
	}
	return nil
}

// swapIn moves the temporary config tmp into place at target, which held
// before when it was last read (nil: no file). It exchanges the two, so
// that what it replaced can be compared with before: an edit made since
// is exchanged back, and errChanged returned, the config being the
// edited one again and tmp the new content. With no file before, the
// rename fails if one appeared. Where the system cannot exchange, it
// renames. lost names the file holding an edit it found but could not
// put back (the config is then the new content); stepErr is the test
// seam's error after the exchange, which comes after the commit.
func swapIn(tmp, target string, before []byte) (lost string, stepErr, err error) {
	if before == nil {
		err := statefile.RenameNoReplace(tmp, target)
		switch {
		case errors.Is(err, fs.ErrExist):
			return "", nil, errChanged
		case errors.Is(err, errors.ErrUnsupported):
			return "", nil, os.Rename(tmp, target)
		}
		return "", nil, err
	}
	err = statefile.Exchange(tmp, target)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return "", nil, os.Rename(tmp, target)
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, errChanged // removed since it was read
	case err != nil:
		return "", nil, err
	}
	// Committed: a crash here must be found so. An error here (a test
	// seam only) comes after the commit: see stepErr.
	stepErr = step(stepExchanged)
	out, rerr := statefile.ReadRegular(tmp, statefile.MaxConfig)
	if rerr == nil && bytes.Equal(out, before) {
		os.Remove(tmp) // left over, it is removed with the journal
		return "", stepErr, nil
	}
	if err := statefile.Exchange(tmp, target); err != nil {
		lost = target + ".edit-" + strconv.Itoa(os.Getpid())
		if os.Rename(tmp, lost) != nil {
			lost = tmp
		}
		return lost, stepErr, nil
	}
	return "", nil, errChanged
}

// tombstone is the content of the temporary file a removal renames
// config.json over: no config is ever that.
const tombstone = "agents-setup: config.json is being removed\n"

// removeVia removes target, which held before when it was last read, by
// renaming it over the tombstone tomb — the commit — and then comparing
// what it moved with before: an edit made since is put back and
// errChanged returned. lost and stepErr are as swapIn's.
func removeVia(tomb, target string, before []byte) (lost string, stepErr, err error) {
	if err := os.Rename(target, tomb); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, errChanged // removed since it was read
		}
		return "", nil, err
	}
	stepErr = step(stepExchanged)
	out, rerr := statefile.ReadRegular(tomb, statefile.MaxConfig)
	if rerr == nil && bytes.Equal(out, before) {
		os.Remove(tomb)
		return "", stepErr, nil
	}
	err = statefile.RenameNoReplace(tomb, target)
	if errors.Is(err, errors.ErrUnsupported) {
		err = os.Rename(tomb, target)
	}
	if err != nil {
		lost = target + ".edit-" + strconv.Itoa(os.Getpid())
		if os.Rename(tomb, lost) != nil {
			lost = tomb
		}
		return lost, stepErr, nil
	}
	return "", nil, errChanged
}

// writeStateTemp writes st to a temporary file beside state.json: a
// state directory that cannot take it (read-only, full, state.json a
// directory) fails the transaction before anything changed.
func writeStateTemp(store setupstate.Store, st *setupstate.State) (string, string, error) {
	cp := *st
	cp.Fingerprint = ""
	setupstate.Normalize(&cp)
	data, err := json.MarshalIndent(&cp, "", "  ")
	if err != nil {
		return "", "", err
	}
	return statefile.WriteTemp(store.Path(), append(data, '\n'), 0o600)
}

// readConfig reads the config's content; nil when there is no file.
func readConfig(path string) ([]byte, error) {
	data, err := statefile.ReadRegular(path, statefile.MaxConfig)
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
	note, err := s.recoverJournal()
	if err != nil {
		return "", err
	}
	// The temporary configs a journal may name go once it is dealt with.
	removed, err = statefile.RemoveStaleTxn(s.configPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	stale = append(stale, removed...)
	if note == "" && len(stale) > 0 {
		note = fmt.Sprintf("removed %d temporary file(s) of an interrupted run", len(stale))
	}
	return note, nil
}

// recoverJournal completes or undoes the transaction of a journal left by
// a crash; "" when there is none.
func (s *session) recoverJournal() (string, error) {
	data, err := statefile.ReadRegular(journalPath(s.store), statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || j.Version != journalVersion {
		return "", &HintError{fmt.Errorf("reading %s: %w: %v", journalPath(s.store), setupstate.ErrCorrupt, err), "compare config.json with the newest backup in " + s.o.display(filepath.Join(s.store.Dir, "backups")) + ", then remove it"}
	}
	now, err := readConfig(j.Target)
	if err != nil {
		return "", fmt.Errorf("reading config: %w", err)
	}
	cur := digest(now)
	recorded := s.stErr == nil && slices.ContainsFunc(s.st.History, func(e setupstate.Entry) bool { return e.Backup == j.Backup && j.Backup != "" })
	committed, kept, err := j.committed(cur)
	if err != nil {
		return "", err
	}
	switch {
	case recorded:
		// The state was written; only the tail of the record is left.
	case !committed:
		// The crash came before the commit: undo the preparation, the
		// journal first (a crash while undoing must not leave a journal
		// whose temporary file is gone: that reads as a commit).
		if err := os.Remove(journalPath(s.store)); err != nil {
			return "", err
		}
		if j.Temp != "" {
			os.Remove(j.Temp)
		}
		if j.Backup != "" {
			os.Remove(filepath.Join(s.store.Dir, "backups", filepath.Base(j.Backup)))
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
		if j.KeepBackups {
			if _, err := s.store.KeepUnreadable(s.o.now()); err != nil {
				return "", err
			}
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
	note := "completed an interrupted " + j.Action + " of " + s.o.display(s.configPath)
	if kept != "" {
		note += "; an edit made at the moment of its commit is in " + s.o.display(kept) + ": merge it by hand"
	}
	return note, nil
}

// committed tells whether the journal's change was committed, the config's
// content now being cur. With a temporary config named, that file
// decides (see the top of this file): still the new content, no commit;
// gone, or holding what the exchange swapped out, a commit. When what it
// holds is neither the content before nor after, the exchange swapped out
// an edit and the crash came before it could be put back: kept names the
// file it is moved to, for the person to merge.
func (j *journal) committed(cur string) (ok bool, kept string, err error) {
	if j.Temp == "" {
		return !(cur == j.Before && j.Before != j.After), "", nil
	}
	data, err := statefile.ReadRegular(j.Temp, statefile.MaxConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, "", nil
	case err != nil:
		return false, "", err
	}
	if string(data) == tombstone && j.After == digest(nil) {
		return false, "", nil // the removal's rename never happened
	}
	switch digest(data) {
	case j.After:
		return j.Before == j.After, "", nil
	case j.Before:
		return true, "", nil
	}
	kept = j.Target + ".edit-" + strconv.FormatInt(time.Now().Unix(), 10)
	if err := os.Rename(j.Temp, kept); err != nil {
		return false, "", fmt.Errorf("keeping an edit found in %s: %w", j.Temp, err)
	}
	return true, kept, nil
}

func unionDigests(a, b statefile.Grants) statefile.Grants {
	return union(a, b)
}
