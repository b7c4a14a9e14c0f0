package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	// Scripts are the hook scripts Install wrote (Method script), by
	// path: what each held then, and the identity of the file (its
	// change time moves at any write, even one that puts the same bytes
	// back). Verify holds them to it.
	Scripts map[string]scriptRecord `json:"scripts,omitempty"`
}

type scriptRecord struct {
	Digest   string             `json:"digest"` // SHA-256 of the content, hex
	Identity statefile.Identity `json:"identity"`
}

// errChanged is wrapped by Verify when a hook script agents-setup
// installed was changed since.
var errChanged = errors.New("changed since agents-setup installed it")

// Verify checks the hook scripts recorded in stateDir against what Install
// wrote: a script present with another content, or written since (even
// with the same bytes put back), is an error wrapping errChanged and
// naming it. agents-setup calls it before it acts, so that a rewritten
// hook script, which runs as the person at their next checkout, cannot
// make agents-setup apply for them. A script that is gone is no error
// (Status reports it: it runs nothing).
func Verify(stateDir string) error {
	rec, err := readRecord(stateDir)
	if err != nil {
		return err
	}
	for _, e := range rec.Repos {
		for path, want := range e.Scripts {
			fi, err := os.Lstat(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("verifying hook script: %w", err)
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("verifying hook script %s: %w (no longer a regular file)", path, errChanged)
			}
			data, err := statefile.ReadRegular(path, statefile.MaxSmall)
			if err != nil {
				return fmt.Errorf("verifying hook script: %w", err)
			}
			if digest(data) != want.Digest {
				return fmt.Errorf("verifying hook script %s: %w (its content differs)", path, errChanged)
			}
			if id, ok := statefile.IdentityOf(fi); ok && id != want.Identity {
				return fmt.Errorf("verifying hook script %s: %w (it was written since)", path, errChanged)
			}
		}
	}
	return nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// recordScripts returns the record of the hook scripts of r that are ours.
func recordScripts(r repo) (map[string]scriptRecord, error) {
	if r.method != Script {
		return nil, nil
	}
	out := map[string]scriptRecord{}
	for _, event := range hookEvents {
		path := filepath.Join(r.hooksDir, event)
		data, err := statefile.ReadRegular(path, statefile.MaxSmall)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recording hook script: %w", err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, fmt.Errorf("recording hook script: %w", err)
		}
		if !isOurs(data) {
			continue
		}
		id, _ := statefile.IdentityOf(fi)
		out[path] = scriptRecord{Digest: digest(data), Identity: id}
	}
	return out, nil
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
