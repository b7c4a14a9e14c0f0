// Package install puts agent-shim's hook into an agent's settings, and
// takes it out again: the user's own settings file, or the agent's
// managed tier (settings a user-level write cannot override, which only
// root can write). What each agent reads, where and how is package
// agents'; this package edits the files.
//
// Install merges one group per event into the settings with the command
// of the agent's hook (agents.Agent.HookCommand). Every other byte of the
// file is kept (package fileedit); a run with nothing to change writes
// nothing. The write is atomic and goes to the file a symbolic link names
// (the link stays), under the lock statefile.Lock takes beside that file,
// after a copy of the old content in <state>/backups/. What install added
// beyond its hook groups (a "hooks" or "env" object, the companion file's
// edits, the shell link) is recorded in <state>/installs.json, so that
// uninstall removes exactly that. A settings file the agent could not
// read as one document — not JSON, or an object holding a key twice — is
// refused with its file and line, and nothing is written.
//
// The managed tier's files are written 0644 (the agent, running as the
// user, reads them). The shim its hook runs must itself be out of the
// user's reach: a binary in ~/go/bin can be replaced by the very agent
// the tier is meant to hold; install says so (UserWritable).
package install

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/statefile"
)

// Options say what to install and where.
type Options struct {
	Agent *agents.Agent
	// Settings is the settings file to edit: the tier's own when "".
	Settings string
	// Config is the config.json the hook is to read ("" for the
	// agent's default).
	Config string
	// Shell also makes the agent's shell agent-shim (shell mode), for an
	// agent whose settings name its shell (Agent.ShellEnv).
	Shell bool
	// Managed is the agent's managed tier, not the user's settings.
	Managed bool
	// Exe is the absolute path of the shim the hook runs.
	Exe string
	// Policy is the policy the second line is compiled from (package
	// secondline), placed beside the hook; nil: no second line.
	Policy *secondline.Policy
	// StateDir holds installs.json and backups/.
	StateDir string
	Getenv   func(string) string
	// Now is the clock of backup names; time.Now when nil.
	Now func() time.Time
}

// Report is what Install or Uninstall did, in sentences for people.
type Report struct {
	Notes    []string
	Warnings []string
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// ShellLinkName is the link shell mode runs as: Claude Code wants "bash"
// or "zsh" in its shell's name.
const ShellLinkName = "agent-shim-bash"

// LinkPath is where the shell link goes: ~/.local/bin/agent-shim-bash.
func LinkPath(getenv func(string) string) string {
	return filepath.Join(getenv("HOME"), ".local", "bin", ShellLinkName)
}

// settings resolves o.Settings to the tier's file when unset.
func (o *Options) settings() error {
	if o.Settings != "" {
		return nil
	}
	tier := &o.Agent.User
	if o.Managed {
		tier = &o.Agent.Managed
	}
	p, err := tier.Path(o.Getenv)
	o.Settings = p
	return err
}

func (o *Options) tier() *agents.Tier {
	if o.Managed {
		return &o.Agent.Managed
	}
	return &o.Agent.User
}

// Install puts the hook into the agent's settings (see the package doc).
// The report says what was done, also when an error stopped it.
func Install(ctx context.Context, o Options) (*Report, error) {
	r := &Report{}
	if err := o.settings(); err != nil {
		return r, err
	}
	a := o.Agent
	cmd := a.HookCommand(o.Exe, o.Config)
	key := recordKey(a.Name, o.Settings)
	rec := &agents.Record{Agent: a.Name, Settings: o.Settings}
	if err := o.records(ctx, func(m map[string]*agents.Record) bool {
		if old := m[key]; old != nil {
			rec = old
		}
		return false
	}); err != nil {
		return r, err
	}
	link := ""
	if o.Shell && a.ShellEnv != "" {
		var err error
		if link, err = o.shellLink(r, rec); err != nil {
			return r, err
		}
	}
	comp := a.Companion()
	if comp != nil && !o.Managed {
		// The companion is edited after the settings (what it says may
		// name the hook's place there): one that cannot be edited stops
		// install before anything is written.
		if err := comp.Check(comp.Path(o.Settings)); err != nil {
			return r, err
		}
	}
	var rules *secondline.Output
	rulesFile := ""
	if o.Policy != nil && a.Rules.Compile != nil {
		out := a.Rules.Compile(o.Policy)
		rules = &out
		if rulesFile = a.RulesFile(o.Settings, o.Managed); rulesFile != "" {
			// A file in the way stops install before anything is written.
			if data, err := os.ReadFile(rulesFile); err == nil && !bytes.HasPrefix(data, rulesHeader) && sum(data) != rec.RulesHash {
				return r, fmt.Errorf("%s exists and is not agent-shim's second line: move it away and run install again", rulesFile)
			}
		}
	}
	if _, err := os.Stat(o.Settings); errors.Is(err, fs.ErrNotExist) {
		rec.SettingsCreated = true
	}
	mode := fs.FileMode(0o600)
	if o.Managed {
		mode = 0o644 // read by the agent, as the user
	}
	tier := o.tier()
	var changed bool
	var err error
	if tier.TOML() {
		_, changed, err = o.editTOML(ctx, r, o.Settings, mode, func(data []byte) ([]byte, error) {
			return tier.SetTOML(o.Settings, data, cmd)
		})
	} else {
		changed, err = o.editJSON(ctx, r, o.Settings, mode, func(data []byte) ([]byte, error) {
			data, err := installGroups(o.Settings, data, a, cmd, rec)
			if err == nil && o.Managed {
				data, err = tier.Pin(o.Settings, data, rec)
			}
			if err == nil && rules != nil && rulesFile == "" {
				data, err = mergeRules(o.Settings, data, a, *rules, rec)
			}
			if err != nil || link == "" {
				return data, err
			}
			return setShellEnv(a, o.Settings, data, link, rec)
		})
	}
	if err != nil {
		return r, err
	}
	if changed {
		r.note("installed the %s hook in %s (%s): %s", a.Name, o.Settings, strings.Join(a.Events(), ", "), cmd)
	} else {
		r.note("the %s hook is already installed in %s", a.Name, o.Settings)
	}
	switch tierPath, _ := tier.Path(o.Getenv); {
	case o.Managed && !tier.Holds(o.Settings, o.Getenv):
		// --settings for a test or an image: the file is written as the
		// tier's would be, but the agent does not read it there.
		r.note("%s is written as %s's managed tier would be, but it is not that tier (%s): it guards the agent once it is copied there", o.Settings, a.Name, tierPath)
	case o.Managed:
		r.note("%s is %s's managed tier: a user-level settings file cannot remove the hook%s", o.Settings, a.Name, tier.Caveat)
	}
	if o.Managed {
		if who := UserWritable(o.Exe); who != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s can be replaced without root (%s): the agent could replace the guard itself; install agent-shim where only root writes (such as /usr/local/bin) and run install --managed from there", o.Exe, who))
		}
	}
	if comp != nil && !o.Managed {
		if err := o.setCompanion(ctx, r, comp, rec); err != nil {
			return r, err
		}
	}
	switch {
	case rules != nil && rulesFile != "":
		if err := o.placeRules(ctx, r, rulesFile, *rules, rec, mode); err != nil {
			return r, err
		}
	case rules != nil && len(rec.RulesAdded) > 0:
		r.note("merged the second line into %s's %s: %d rules from %d of the policy's (what they leave out: agent-shim rules --notes %s)", o.Settings, a.Rules.Member, rules.Patterns, rules.Compiled, a.Name)
	}
	if link != "" {
		r.note("%s's %s tool now runs through shell mode: env.%s=%s", a.Title, a.ShellTool, a.ShellEnv, link)
	}
	return r, o.records(ctx, func(m map[string]*agents.Record) bool {
		if sameRecord(m[key], rec) {
			return false
		}
		m[key] = rec
		return true
	})
}

// Uninstall takes out what Install put in, as its record says.
func Uninstall(ctx context.Context, o Options) (*Report, error) {
	r := &Report{}
	if err := o.settings(); err != nil {
		return r, err
	}
	a := o.Agent
	key := recordKey(a.Name, o.Settings)
	rec := &agents.Record{Agent: a.Name, Settings: o.Settings}
	if err := o.records(ctx, func(m map[string]*agents.Record) bool {
		if old := m[key]; old != nil {
			rec = old
		}
		return false
	}); err != nil {
		return r, err
	}
	tier := o.tier()
	if _, err := os.Stat(o.Settings); err == nil {
		var changed bool
		if tier.TOML() {
			_, changed, err = o.editTOML(ctx, r, o.Settings, 0o644, func(data []byte) ([]byte, error) {
				return tier.UnsetTOML(o.Settings, data)
			})
		} else {
			changed, err = o.editJSON(ctx, r, o.Settings, 0o600, func(data []byte) ([]byte, error) {
				data, err := uninstallGroups(o.Settings, data, a, rec)
				if err == nil && o.Managed {
					data, err = tier.Unpin(o.Settings, data, rec)
				}
				if err == nil && len(rec.RulesAdded) > 0 {
					data, err = unmergeRules(o.Settings, data, a, rec)
				}
				if err != nil || a.ShellEnv == "" {
					return data, err
				}
				return unsetShellEnv(a, o.Settings, data, o.Getenv, rec)
			})
		}
		if err != nil {
			return r, err
		}
		if data, err := os.ReadFile(o.Settings); err == nil && rec.SettingsCreated && (string(bytes.TrimSpace(data)) == "{}" || tier.TOML() && len(bytes.TrimSpace(data)) == 0) {
			if err := removeWithLock(o.Settings); err != nil {
				return r, err
			}
		}
		if changed {
			r.note("removed the %s hook from %s", a.Name, o.Settings)
		} else {
			r.note("no %s hook in %s", a.Name, o.Settings)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	} else {
		r.note("no %s hook in %s", a.Name, o.Settings)
	}
	if rec.Link != "" {
		if fi, err := os.Lstat(rec.Link); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(rec.Link); err == nil && strings.HasPrefix(filepath.Base(t), "agent-shim") {
				if err := os.Remove(rec.Link); err != nil {
					return r, err
				}
				r.note("removed %s", rec.Link)
			}
		}
	}
	if comp := a.Companion(); comp != nil && rec.Config != "" && !o.Managed {
		if err := o.unsetCompanion(ctx, r, comp, rec); err != nil {
			return r, err
		}
	}
	if err := removeRules(r, rec); err != nil {
		return r, err
	}
	return r, o.records(ctx, func(m map[string]*agents.Record) bool {
		if m[key] == nil {
			return false
		}
		delete(m, key)
		return true
	})
}

// removeWithLock removes a file install made, and the lock beside it.
func removeWithLock(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	if err := os.Remove(statefile.LockPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// setCompanion edits the companion file for the hook now in o.Settings.
func (o *Options) setCompanion(ctx context.Context, r *Report, comp *agents.Companion, rec *agents.Record) error {
	settingsData, err := os.ReadFile(o.Settings)
	if err != nil {
		return fmt.Errorf("reading %s: %w", o.Settings, err)
	}
	path := comp.Path(o.Settings)
	var notes []string
	existed, changed, err := o.editTOML(ctx, r, path, 0o600, func(data []byte) ([]byte, error) {
		out, n, err := comp.Set(o.Getenv, path, data, o.Settings, settingsData, rec)
		notes = n
		return out, err
	})
	if err != nil || !changed {
		return err
	}
	rec.Config, rec.ConfigCreated = path, rec.ConfigCreated || !existed
	r.Notes = append(r.Notes, notes...)
	return nil
}

// unsetCompanion undoes setCompanion, removing the file when install
// made it and nothing else is left in it.
func (o *Options) unsetCompanion(ctx context.Context, r *Report, comp *agents.Companion, rec *agents.Record) error {
	path := rec.Config
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, changed, err := o.editTOML(ctx, r, path, 0o600, func(data []byte) ([]byte, error) {
		return comp.Unset(path, data, rec)
	})
	if err != nil {
		return err
	}
	if data, err := os.ReadFile(path); err == nil && rec.ConfigCreated && len(bytes.TrimSpace(data)) == 0 {
		if err := removeWithLock(path); err != nil {
			return err
		}
		r.note("removed %s", path)
		return nil
	}
	if changed {
		r.note("%s %s", comp.UnsetNote, path)
	}
	return nil
}

func recordKey(agent, settings string) string { return agent + " " + settings }

// records reads and updates installs.json under its lock.
func (o *Options) records(ctx context.Context, change func(map[string]*agents.Record) bool) error {
	path := filepath.Join(o.StateDir, "installs.json")
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	m := map[string]*agents.Record{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	default:
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if !change(m) {
		return nil
	}
	return statefile.WriteJSON(path, m, 0o600)
}

// sameRecord reports whether two records are equal.
func sameRecord(a, b *agents.Record) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// editJSON applies change to the settings file at path (an absent file
// is an empty object) under its lock, and writes the result atomically
// when it differs, after a backup. The file a symbolic link names is the
// one written.
func (o *Options) editJSON(ctx context.Context, r *Report, path string, mode fs.FileMode, change func([]byte) ([]byte, error)) (bool, error) {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	} else if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("%s is a symbolic link to nothing: not replacing the link with a file", path)
	}
	if err := os.MkdirAll(filepath.Dir(target), dirMode(mode)); err != nil {
		return false, err
	}
	unlock, err := statefile.Lock(ctx, target)
	if err != nil {
		return false, err
	}
	defer unlock()
	old, err := os.ReadFile(target)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	data := old
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	data, err = change(data)
	if err != nil {
		return false, err
	}
	if existed && bytes.Equal(data, old) {
		return false, nil
	}
	if existed {
		if err := o.backup(r, target, old); err != nil {
			return false, err
		}
		if fi, err := os.Stat(target); err == nil {
			mode = fi.Mode().Perm() // a file keeps its mode
		}
	}
	return true, statefile.WriteAtomic(target, data, mode)
}

// editTOML applies change to the TOML file at path (absent: empty) under
// its lock, and writes the result atomically when it differs, after a
// backup.
func (o *Options) editTOML(ctx context.Context, r *Report, path string, mode fs.FileMode, change func([]byte) ([]byte, error)) (existed, changed bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), dirMode(mode)); err != nil {
		return false, false, err
	}
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return false, false, err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	existed = err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, false, fmt.Errorf("reading %s: %w", path, err)
	}
	data, err := change(old)
	if err != nil || bytes.Equal(data, old) {
		return existed, false, err
	}
	if existed {
		if err := o.backup(r, path, old); err != nil {
			return existed, false, err
		}
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm() // a file keeps its mode
		}
	}
	return existed, true, statefile.WriteAtomic(path, data, mode)
}

// dirMode is the mode of a directory made for a file of mode: others may
// enter it when they may read the file.
func dirMode(mode fs.FileMode) fs.FileMode {
	if mode&0o044 != 0 {
		return 0o755
	}
	return 0o700
}

// backup keeps a copy of a file's content before install changes it.
func (o *Options) backup(r *Report, path string, data []byte) error {
	bdir := filepath.Join(o.StateDir, "backups")
	if err := os.MkdirAll(bdir, 0o700); err != nil {
		return err
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var nonce [4]byte
	rand.Read(nonce[:])
	p := filepath.Join(bdir, fmt.Sprintf("%s-%s-%x", readableName(path), now().UTC().Format("20060102T150405"), nonce))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return fmt.Errorf("backing up %s: %w", path, err)
	}
	r.note("backup of %s: %s", path, p)
	return nil
}

// readableName names a backup after the last two elements of path.
func readableName(path string) string {
	s := filepath.Base(filepath.Dir(path)) + "-" + filepath.Base(path)
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "_"), "._-")
}

// UserWritable says who other than root could replace path or a
// directory above it ("" when nobody): the managed tier holds only while
// the shim it runs does.
func UserWritable(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("%s: %v", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case ok && st.Uid != 0:
			return fmt.Sprintf("%s belongs to uid %d", p, st.Uid)
		case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0:
			return p + " is writable by everyone"
		case fi.Mode().Perm()&0o020 != 0 && ok && st.Gid != 0:
			return fmt.Sprintf("%s is writable by group %d", p, st.Gid)
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// shellLink makes ~/.local/bin/agent-shim-bash a link to the shim
// (making the directory on a fresh home). A file there that is not a
// link to an agent-shim is left alone, and install fails.
func (o *Options) shellLink(r *Report, rec *agents.Record) (string, error) {
	if o.Getenv("HOME") == "" {
		return "", errors.New("making the shell link: HOME is not set")
	}
	link := LinkPath(o.Getenv)
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return "", fmt.Errorf("making the shell link: %s exists and is not a link (move it away and run install again)", link)
		}
		t, err := os.Readlink(link)
		if err != nil {
			return "", err
		}
		if t == o.Exe {
			return link, nil
		}
		if !strings.HasPrefix(filepath.Base(t), "agent-shim") {
			return "", fmt.Errorf("making the shell link: %s links to %s, not to agent-shim (move it away and run install again)", link, t)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	tmp := link + ".tmp-agent-shim"
	os.Remove(tmp)
	if err := os.Symlink(o.Exe, tmp); err != nil {
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("making the shell link: %w", err)
	}
	rec.Link = link
	r.note("%s -> %s", link, o.Exe)
	return link, nil
}

// setShellEnv sets env.<ShellEnv> to link in the agent's settings.
func setShellEnv(a *agents.Agent, path string, data []byte, link string, rec *agents.Record) ([]byte, error) {
	for range 4 {
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		d, envObj, again, err := objectAt(path, data, root, root, "env", "env", rec, true)
		if err != nil {
			return nil, err
		}
		if again {
			data = d
			continue
		}
		v := envObj.Member(a.ShellEnv)
		if v == nil {
			rec.ShellEnv = true
			return fileedit.Append(data, root, envObj, a.ShellEnv, link)
		}
		cur := fileedit.String(data, v)
		if cur == link {
			return data, nil
		}
		if !rec.ShellEnv {
			prev := string(data[v.Start:v.End])
			rec.PrevShellEnv = &prev
		}
		rec.ShellEnv = true
		q, _ := fileedit.Encode(link)
		return fileedit.Splice(data, v.Start, v.End, q), nil
	}
	return data, nil
}

// unsetShellEnv undoes setShellEnv: the variable pointing at the shell
// link goes (or gets back its old value), and the env object with it
// when install created it and it is empty.
func unsetShellEnv(a *agents.Agent, path string, data []byte, getenv func(string) string, rec *agents.Record) ([]byte, error) {
	root, err := a.Parse(path, data)
	if err != nil {
		return nil, err
	}
	envObj := root.Member("env")
	if envObj == nil || envObj.Kind != '{' {
		return data, nil
	}
	i := envObj.MemberIndex(a.ShellEnv)
	if i < 0 {
		return data, nil
	}
	v := envObj.Members[i].Val
	cur := fileedit.String(data, v)
	if !rec.ShellEnv && filepath.Base(cur) != ShellLinkName || rec.ShellEnv && cur != rec.Link && cur != LinkPath(getenv) {
		return data, nil // not ours
	}
	if rec.PrevShellEnv != nil {
		return fileedit.Splice(data, v.Start, v.End, *rec.PrevShellEnv), nil
	}
	data = fileedit.Remove(data, envObj, i)
	if len(envObj.Members) == 1 && slices.Contains(rec.Created, "env") {
		root, err := a.Parse(path, data)
		if err != nil {
			return nil, err
		}
		data = fileedit.Remove(data, root, root.MemberIndex("env"))
	}
	return data, nil
}
