package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-shim/agent-shim/statefile"
)

// recordFile, in the state directory, lists the repositories hooks were
// installed in. It lives outside the repositories because what it guards
// against, a jiri update rewriting the hooks directory, would take a record
// kept there with it.
const recordFile = "hooks.json"

type record struct {
	Version int                    `json:"version"`
	Repos   map[string]recordEntry `json:"repos"`
}

type recordEntry struct {
	Method   string `json:"method"`
	HooksDir string `json:"hooksDir"`
}

func readRecord(stateDir string) (record, error) {
	rec := record{Version: 1, Repos: map[string]recordEntry{}}
	if stateDir == "" {
		return rec, nil
	}
	path := filepath.Join(stateDir, recordFile)
	b, err := statefile.ReadRegular(path, statefile.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("reading hook record: %w", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("reading hook record %s: %w (remove it and install the hooks again)", path, err)
	}
	if rec.Repos == nil {
		rec.Repos = map[string]recordEntry{}
	}
	return rec, nil
}

// updateRecord edits the record under its lock (statefile.Lock: bounded by
// ctx, never waiting forever) and writes it atomically.
func updateRecord(ctx context.Context, stateDir string, edit func(*record)) error {
	if stateDir == "" {
		return nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("writing hook record: %w", err)
	}
	path := filepath.Join(stateDir, recordFile)
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return fmt.Errorf("locking hook record: %w", err)
	}
	defer unlock()
	rec, err := readRecord(stateDir)
	if err != nil {
		return err
	}
	edit(&rec)
	return statefile.WriteJSON(path, rec, 0o600)
}
