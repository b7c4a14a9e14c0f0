package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/setupstate"
	"github.com/agent-shim/agent-shim/statefile"
)

// adhocFile, in the state directory, keeps the ad-hoc rules of the last
// manual apply, so that a hook run (which has no command line of its own)
// re-applies them instead of dropping them: ad-hoc rules count as managed,
// and a run without them removes them.
//
// The rules are kept by content, not by path: a --allow-list file that was
// a temporary file, or has changed since, does not change what the hook
// applies. The file sits beside state.json rather than in it because
// state.json's schema belongs to package statefile.
const adhocFile = "adhoc.json"

// adhocVersion is the version of adhoc.json this program writes.
const adhocVersion = 1

// adhocRecord is the content of adhoc.json.
type adhocRecord struct {
	Version int `json:"version"`
	// Rules are the ad-hoc rules of the last apply, in command-line order.
	Rules []adhocRule `json:"rules"`
	// Before maps the name of a backup to the ad-hoc rules in force
	// before the change it backs up, so that --rollback restores them
	// with the config; a backup without an entry had none. Entries go
	// with their backups.
	Before map[string][]adhocRule `json:"before,omitempty"`
}

// adhocRule is one ad-hoc rule: its list, its text, and where it came from
// (for the shim's rule entry: the list file as given and the line number;
// both empty for -a, -k and -d).
type adhocRule struct {
	List string `json:"list"`
	Text string `json:"text"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

func adhocPath(st setupstate.Store) string { return filepath.Join(st.Dir, adhocFile) }

// loadAdhoc reads adhoc.json; a missing file is an empty record.
func loadAdhoc(st setupstate.Store) (*adhocRecord, error) {
	path := adhocPath(st)
	data, err := statefile.ReadRegular(path, statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return &adhocRecord{Version: adhocVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ad-hoc rules: %w", err)
	}
	var rec adhocRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, &HintError{fmt.Errorf("reading ad-hoc rules %s: %w", path, err), "remove it; the next run records its own ad-hoc rules"}
	}
	if rec.Version != adhocVersion {
		return nil, &HintError{fmt.Errorf("reading ad-hoc rules %s: version %d, want %d", path, rec.Version, adhocVersion), "remove it; the next run records its own ad-hoc rules"}
	}
	for _, r := range rec.Rules {
		if listIndex(r.List) < 0 || r.Text == "" {
			return nil, &HintError{fmt.Errorf("reading ad-hoc rules %s: bad rule %+v", path, r), "remove it; the next run records its own ad-hoc rules"}
		}
	}
	return &rec, nil
}

// saveAdhoc writes adhoc.json atomically.
func saveAdhoc(st setupstate.Store, rec *adhocRecord) error {
	rec.Version = adhocVersion
	if rec.Rules == nil {
		rec.Rules = []adhocRule{}
	}
	return statefile.WriteJSON(adhocPath(st), rec, 0o600)
}

func listIndex(name string) int { return slices.Index(listNames[:], name) }

// toRecord turns ad-hoc lines and their lists into recorded rules.
func toRecord(lines []manifest.Line, to []int) []adhocRule {
	rules := make([]adhocRule, len(lines))
	for i, l := range lines {
		rules[i] = adhocRule{List: listNames[to[i]], Text: l.Text, File: l.File, Line: l.Num}
	}
	return rules
}

// fromRecord turns recorded rules back into ad-hoc lines and their lists.
func fromRecord(rules []adhocRule) ([]manifest.Line, []int) {
	lines := make([]manifest.Line, len(rules))
	to := make([]int, len(rules))
	for i, r := range rules {
		lines[i] = manifest.Line{Text: r.Text, Category: "ad-hoc", Overlay: "ad-hoc", File: r.File, Num: r.Line}
		to[i] = listIndex(r.List)
	}
	return lines, to
}

// recordAdhoc records rules as the ad-hoc rules now in force (see
// nextAdhoc), writing adhoc.json when that changes it.
func recordAdhoc(st setupstate.Store, prev *adhocRecord, rules []adhocRule, backup string, history []setupstate.Entry) error {
	next := nextAdhoc(prev, rules, backup, history)
	if next == nil {
		return nil
	}
	return saveAdhoc(st, next)
}

// nextAdhoc returns the record of rules as the ad-hoc rules now in force,
// or nil when it equals prev. backup, when not "", names the backup of the
// change that put them in force: the rules before it, if any, are kept for
// --rollback. Entries of backups no longer in the history go. A user of no
// ad-hoc rules never has the file.
func nextAdhoc(prev *adhocRecord, rules []adhocRule, backup string, history []setupstate.Entry) *adhocRecord {
	next := adhocRecord{Version: adhocVersion, Rules: rules, Before: map[string][]adhocRule{}}
	if backup != "" && len(prev.Rules) > 0 {
		next.Before[backup] = prev.Rules
	}
	for _, e := range history {
		if r, ok := prev.Before[e.Backup]; ok && e.Backup != "" && e.Backup != backup {
			next.Before[e.Backup] = r
		}
	}
	if len(next.Before) == 0 {
		next.Before = nil
	}
	if sameRecord(prev, &next) {
		return nil
	}
	if next.Rules == nil {
		next.Rules = []adhocRule{}
	}
	return &next
}

func sameRecord(a, b *adhocRecord) bool {
	if !slices.Equal(a.Rules, b.Rules) || len(a.Before) != len(b.Before) {
		return false
	}
	for k, v := range a.Before {
		w, ok := b.Before[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}
