package setup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/policycheck"
	"github.com/agent-shim/agent-shim/internal/setupstate"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/reconcile"
	"github.com/agent-shim/agent-shim/statefile"
)

// historyKeep is how many history entries state.json keeps.
const historyKeep = 50

// listNames are the grant lists, in the order of the flags and the output.
var listNames = [3]string{"allow", "ask", "deny"}

// lists returns pointers to the three lists of g.
func lists(g *config.Grants) [3]*[]string { return [3]*[]string{&g.Allow, &g.Ask, &g.Deny} }

// session is one locked run against one config file.
type session struct {
	o          *Options
	configPath string
	store      setupstate.Store
	info       os.FileInfo // the config's, nil when it does not exist
	loaded     bool
	raw        []byte // the config's content as read; nil when missing
	file       *config.File
	fileErr    error // why the config could not be read
	st         *setupstate.State
	stErr      error // why the state could not be read
}

func (o *Options) run(ctx context.Context) error {
	modes := 0
	for _, set := range []bool{o.Status, o.RollbackSet, o.Reset} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		return Usagef("--status, --rollback and --reset exclude each other")
	}
	adhoc := len(o.Allow)+len(o.Ask)+len(o.Deny)+len(o.AllowLists)+len(o.AskLists)+len(o.DenyLists) > 0
	if modes == 1 && (o.ProfileSet || adhoc || o.Init) {
		return Usagef("--status, --rollback and --reset take no profile, ad-hoc rules or --init")
	}
	if o.Status && o.DryRun {
		return Usagef("--status writes nothing; --dry-run does not apply")
	}
	if o.JSON && !o.Status && !o.DryRun {
		return Usagef("--json goes with --lint, --dry-run or --status")
	}
	if o.JSON && o.RollbackSet {
		return Usagef("--rollback has no --json report")
	}
	if o.RollbackSet && o.Rollback < 1 {
		return Usagef("--rollback %d: want a count of at least 1", o.Rollback)
	}
	if o.ProfileSet && !slices.Contains(manifest.Profiles, o.Profile) {
		return Usagef("unknown profile %q (profiles: %s)", o.Profile, strings.Join(manifest.Profiles, ", "))
	}

	s, unlock, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	switch {
	case o.Status:
		return s.status()
	case o.RollbackSet:
		return s.rollback(ctx)
	}
	return s.apply(ctx)
}

// paths returns the config file's absolute path and its state directory.
func (o *Options) Paths() (configPath, stateDir string, err error) {
	path := o.Config
	if path == "" {
		if path, err = config.DefaultPath(o.getenv); err != nil {
			return "", "", err
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	dir, err := setupstate.Dir(o.StateDir, path, o.getenv)
	if err != nil {
		return "", "", err
	}
	return path, dir, nil
}

// open finds the config and state, takes the lock and reads both.
func (o *Options) open(ctx context.Context) (*session, func() error, error) {
	path, dir, err := o.Paths()
	if err != nil {
		return nil, nil, err
	}
	s := &session{o: o, configPath: path, store: setupstate.Store{Dir: dir}}
	unlock, err := o.lock(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	s.info, err = os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		unlock()
		return nil, nil, fmt.Errorf("reading config: %w", err)
	}
	s.st, s.stErr = s.store.Load()
	if !o.DryRun && !o.Status {
		// A run that a crash interrupted is completed or undone first.
		note, err := s.recover()
		if err != nil {
			unlock()
			return nil, nil, err
		}
		if note != "" {
			fmt.Fprintf(o.Stderr, "agents-setup: note: %s\n", note)
		}
		if s.info, err = os.Stat(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			unlock()
			return nil, nil, fmt.Errorf("reading config: %w", err)
		}
	}
	if s.stErr == nil && s.st.Config != "" && s.st.Config != path {
		s.stErr = fmt.Errorf("state %s belongs to %s, not %s", s.store.Path(), s.st.Config, path)
	}
	if s.stErr != nil {
		s.stErr = &HintError{s.stErr, fmt.Sprintf("run agents-setup --reset (it removes the rules listed in config.json's agentShim section), or remove %s", s.store.Path())}
	}
	return s, unlock, nil
}

// lock takes config.json's lock. --dry-run and --status write nothing,
// not even the lock file or its directory: they take the lock only where
// it is there already (agents-setup wrote the file before); where it is
// not, they read without it, as the agents do (every write is a rename,
// so what they read is whole).
func (o *Options) lock(ctx context.Context, path string) (unlock func() error, err error) {
	if o.DryRun || o.Status {
		if _, err := os.Lstat(statefile.LockPath(path)); errors.Is(err, fs.ErrNotExist) {
			return func() error { return nil }, nil
		}
	}
	return statefile.Lock(ctx, path)
}

// load reads and parses the config (once); fileErr says why it could not.
func (s *session) load() {
	if s.loaded {
		return
	}
	s.loaded = true
	var err error
	s.raw, err = statefile.ReadRegular(s.configPath, statefile.MaxConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.raw = nil
		s.file = &config.File{Path: s.configPath}
	case err != nil:
		s.fileErr = fmt.Errorf("reading config: %w", err)
	default:
		s.file, s.fileErr = config.Parse(s.configPath, s.raw)
	}
}

// identity identifies the config's content without reading it: its size,
// modification time and inode. Every write (ours is a rename) changes it.
func identity(info os.FileInfo) string {
	if info == nil {
		return "absent"
	}
	id := fmt.Sprintf("%d %d %v", info.Size(), info.ModTime().UnixNano(), info.Mode())
	if st, ok := statefile.IdentityOf(info); ok {
		id += fmt.Sprintf(" %d %d %d", st.Dev, st.Ino, st.Ctime)
	}
	return id
}

// adhocLines reads the ad-hoc rules: -a/-k/-d and the list files, with the
// list (0 allow, 1 ask, 2 deny) each goes to.
func (o *Options) adhocLines() ([]manifest.Line, []int, error) {
	var lines []manifest.Line
	var to []int
	for li, cmds := range [3][]string{o.Allow, o.Ask, o.Deny} {
		for _, c := range cmds {
			text := strings.TrimSpace(c)
			if text == "" {
				return nil, nil, Usagef("--%s: empty command", listNames[li])
			}
			lines = append(lines, manifest.Line{Text: text, Category: "ad-hoc", Overlay: "ad-hoc"})
			to = append(to, li)
		}
	}
	for li, files := range [3][]string{o.AllowLists, o.AskLists, o.DenyLists} {
		for _, name := range files {
			data, err := statefile.ReadRegular(name, statefile.MaxManifest)
			if err != nil {
				return nil, nil, fmt.Errorf("reading --%s-list: %w", listNames[li], err)
			}
			ls, err := manifest.ParseList(name, data, "ad-hoc", "ad-hoc")
			if err != nil {
				return nil, nil, err
			}
			for range ls {
				to = append(to, li)
			}
			lines = append(lines, ls...)
		}
	}
	return lines, to, nil
}

// findRoot returns the checkout root, or "" outside any checkout.
func (o *Options) FindRoot() (string, error) {
	if o.RootSet {
		fi, err := os.Stat(o.Root)
		if err != nil {
			return "", fmt.Errorf("--root: %w", err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("--root %s: not a directory", o.Root)
		}
		return filepath.Abs(o.Root)
	}
	wd, err := o.getwd()
	if err != nil {
		return "", err
	}
	root, err := manifest.FindRoot(wd)
	if err != nil {
		return "", nil // outside any checkout
	}
	return root, nil
}

// profile is the profile to apply: the flag, else the last one applied,
// else the default.
func (s *session) profile() string {
	switch {
	case s.o.ProfileSet:
		return s.o.Profile
	case s.o.Reset:
		return ""
	case s.stErr == nil && s.st.Profile != "":
		return s.st.Profile
	}
	return manifest.DefaultProfile
}

// fingerprint identifies the inputs of a run: equal fingerprints mean
// the same result, so an unchanged re-run can stop early.
func fingerprint(configPath, profile, manifests string, adhoc []manifest.Line, to []int, configID string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	field("agents-setup fingerprint v2")
	field(strconv.Itoa(config.Version))
	field(generator())
	field(configPath)
	field(profile)
	field(manifests)
	for i, l := range adhoc {
		field(listNames[to[i]])
		field(l.Text)
		field(l.File)
		fmt.Fprintf(h, "%d;", l.Num)
	}
	field(configID)
	return hex.EncodeToString(h.Sum(nil))
}

// generator stands for how this agents-setup turns a manifest line into
// grants: a new version that spells grants differently (or writes another
// config format, above) must rewrite a file its predecessor left, even
// when neither the manifests nor the file changed.
var generator = func() string { return strconv.Itoa(manifest.GrantsVersion) }

// apply writes the target policy (or, with --reset, none) into the config.
func (s *session) apply(ctx context.Context) error {
	o := s.o
	if s.stErr != nil && !o.Reset {
		return s.stErr
	}
	profile := s.profile()
	var rec *adhocRecord
	var adhoc []manifest.Line
	var to []int
	var err error
	if o.Hook {
		// A hook run re-applies the saved profile and the ad-hoc rules
		// of the last apply; after --reset (or a rollback to before the
		// first apply) there is no profile, and it leaves the config alone.
		if s.stErr == nil && s.stExists() && s.st.Profile == "" {
			return nil
		}
		if rec, err = loadAdhoc(s.store); err != nil {
			return err
		}
		adhoc, to = fromRecord(rec.Rules)
	} else if adhoc, to, err = o.adhocLines(); err != nil {
		return err
	}
	root, err := o.FindRoot()
	if err != nil {
		return err
	}
	if o.Init {
		if err := s.init(root); err != nil {
			return err
		}
	}
	// Outside a checkout, ad-hoc rules alone apply; else the manifests
	// (or the built-in defaults) do.
	useTree := !o.Reset && (root != "" || len(adhoc) == 0)
	manifests := "none"
	if useTree {
		if manifests, err = manifest.Fingerprint(root); err != nil {
			return err
		}
	}
	fp := fingerprint(s.configPath, profile, manifests, adhoc, to, identity(s.info))
	// A hook run that held changes back records "held:" and the
	// fingerprint: the next hook run with the same inputs stops here, a
	// manual run goes on and applies them.
	if !o.DryRun && !o.Reset && s.stErr == nil && s.st.Fingerprint != "" && (fp == s.st.Fingerprint || o.Hook && heldPrefix+fp == s.st.Fingerprint) {
		fmt.Fprintf(o.Stdout, "%s is up to date (profile %s)\n", s.o.display(s.configPath), profile)
		return nil
	}

	var tree *manifest.Tree
	if useTree {
		if tree, err = manifest.Load(root); err != nil {
			return err
		}
	} else {
		tree = &manifest.Tree{Root: root}
	}
	for _, l := range tree.Lines {
		// A tool rule (an MCP tool's arguments) that cannot be read
		// stops the apply: nothing written.
		if err := matcher.CheckToolRule(l.Text); err != nil {
			return fmt.Errorf("%s:%d: %v", l.File, l.Num, err)
		}
	}
	if !o.Reset {
		if err := policycheck.Verify(o.Stderr, tree); err != nil {
			return err // a failing policy test stops the apply: nothing written
		}
	}
	tbl, err := tree.Table()
	if err != nil {
		return err // a program fact that cannot be read: nothing written
	}
	target, rules, err := buildTarget(manifest.NewExpander(tbl), tree.Lines, adhoc, to, profile)
	if err != nil {
		return err
	}
	if o.Reset {
		target, rules = config.Grants{}, nil
	}
	if rec == nil && !o.DryRun {
		if rec, err = loadAdhoc(s.store); err != nil {
			return err
		}
	}
	adhocRules := toRecord(adhoc, to)
	action := "apply"
	if o.Reset {
		action = "reset"
	}
	hadState := s.stErr == nil && s.stExists()
	startState := s.st
	if !hadState {
		startState = &setupstate.State{}
	}

	// Someone may edit config.json without the lock while this runs: the
	// commit then finds it changed, and the merge starts again from
	// their edit, which is a hand edit like any other.
	for attempt := 1; ; attempt++ {
		s.load()
		if s.fileErr != nil {
			return fmt.Errorf("%w (nothing written)", s.fileErr)
		}
		if err := s.file.Validate(); err != nil {
			return &HintError{fmt.Errorf("%w\n(nothing written)", err), "fix config.json by hand, then run agents-setup again"}
		}
		var prevManaged config.Grants
		var unmatched int
		if !hadState {
			// Without state, the managed grants are the ones config.json's
			// rules list, so that they are not taken for the user's.
			prevManaged = managedFromRules(s.file)
		} else {
			prevManaged = fromDigests(s.file.Grants, s.st.Managed)
			if unmatched = countUnmatched(s.file.Grants, s.st.Managed); unmatched > 0 {
				// Digests that match no grant: the state does not
				// describe this file. Grants a manifest (any category)
				// or config.json's rules name are managed all the same;
				// only the others are taken for the user's.
				known := manifestGrants(tree.Lines, adhoc)
				prevManaged = union(prevManaged, union(managedFromRules(s.file), grantsIn(s.file.Grants, known)))
			}
		}

		t, r := target, rules
		var held []setupstate.Held
		// A manual run names what it widens (what a hook run would
		// hold), except the first one, which widens everything.
		var widened []setupstate.Held
		if hadState && !o.Hook && !o.Reset {
			widened = widening(s.file, prevManaged, target, rules)
		}
		if o.Hook {
			t, r, held = narrow(s.file, prevManaged, target, rules)
		}
		res := reconcile.Merge(s.file.Grants, prevManaged, t)

		next := *s.file
		next.Grants = res.Grants
		next.Shim.Version = config.Version
		next.Shim.Profile = profile
		next.Shim.Rules = r
		next.Shim.Programs = nil
		if !o.Reset {
			for _, pf := range tree.Programs {
				next.Shim.Programs = append(next.Shim.Programs, config.ProgramFile{File: pf.Name, Text: string(pf.Data)})
			}
		}
		changed := s.raw == nil || res.Changed(s.file.Grants) ||
			s.file.Shim.Profile != profile || s.file.Shim.Version != config.Version ||
			!sameRules(s.file.Shim.Rules, r) || !slices.Equal(s.file.Shim.Programs, next.Shim.Programs)

		if o.DryRun {
			s.printChanges(res, changed, profile, r)
			s.printWidening(widened)
			if changed && len(tree.Services) > 0 {
				fmt.Fprintf(o.Stdout, "would run: systemctl --user try-restart %s\n", strings.Join(tree.Services, " "))
			}
			return nil
		}

		st := *startState
		// A reset whose state cannot be read keeps that state and its
		// backups: numbered after them, never pruning them.
		keep := o.Reset && s.stErr != nil
		if keep {
			if st.NextBackup, err = s.store.LastBackup(); err != nil {
				return err
			}
		}
		st.Config = s.configPath
		st.Profile, st.Managed = profile, setupstate.Digests(res.Managed)
		if o.Reset {
			st.Profile = ""
		}
		st.Held = held
		if !changed {
			st.Fingerprint = fp
			if len(held) > 0 {
				st.Fingerprint = heldPrefix + fp
			}
			if err := recordAdhoc(s.store, rec, adhocRules, "", st.History); err != nil {
				return err
			}
			if keep {
				if _, err := s.store.KeepUnreadable(o.now()); err != nil {
					return err
				}
			}
			if err := s.store.Save(&st); err != nil {
				return err
			}
			s.logHeld(held)
			fmt.Fprintf(o.Stdout, "%s is up to date (profile %s)\n", s.o.display(s.configPath), profileName(profile))
			return nil
		}

		data, err := next.Marshal()
		if err != nil {
			return err
		}
		st.History = append(slices.Clone(st.History), setupstate.Entry{Time: o.now().UTC(), Action: action, Profile: profile, Created: s.raw == nil, Wrote: digest(data)})
		setupstate.TrimHistory(&st, historyKeep)
		c := &change{
			action: action, before: s.raw, data: data, state: st, keepBackups: keep,
			backup: setupstate.Backup{
				Time: o.now().UTC(), Existed: s.raw != nil, Content: string(s.raw),
				Profile: startState.Profile, Managed: setupstate.Digests(prevManaged),
				Next: st.Managed,
			},
			fingerprint: func(info os.FileInfo) string {
				return fingerprint(s.configPath, profile, manifests, adhoc, to, identity(info))
			},
		}
		// The ad-hoc record goes with the state: the rules before this
		// change are kept for --rollback under the backup's name.
		c.adhoc = func(backup string, history []setupstate.Entry) *adhocRecord {
			return nextAdhoc(rec, adhocRules, backup, history)
		}
		if len(held) > 0 {
			c.fingerprint = func(info os.FileInfo) string {
				return heldPrefix + fingerprint(s.configPath, profile, manifests, adhoc, to, identity(info))
			}
		}
		_, err = s.commit(c)
		if errors.Is(err, errChanged) {
			if attempt < maxAttempts {
				s.loaded = false
				continue
			}
			return &HintError{fmt.Errorf("%w, %d times (nothing written)", errChanged, attempt), "close the program that keeps rewriting it, then run agents-setup again"}
		}
		if err != nil {
			return err
		}
		s.logHeld(held)
		s.printSummary(action, profile, res, len(r), tree)
		s.printWidening(widened)
		if len(tree.Services) > 0 {
			if err := o.restart(ctx, tree.Services, o.Stdout); err != nil {
				fmt.Fprintf(o.Stderr, "agents-setup: warning: restarting services: %v\n", err)
			}
		}
		return nil
	}
}

// heldPrefix marks the fingerprint of a hook run that held changes back.
const heldPrefix = "held:"

// maxAttempts bounds how often apply re-merges a config that keeps
// changing under it.
const maxAttempts = 5

func (s *session) stExists() bool {
	_, err := os.Stat(s.store.Path())
	return err == nil
}

// display shortens a path for messages: with ~ for the home directory,
// else relative to the current directory when inside it.
func (o *Options) display(p string) string {
	inside := func(dir string) (string, bool) {
		rel, err := filepath.Rel(dir, p)
		return rel, err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if home := o.getenv("HOME"); filepath.IsAbs(home) {
		if rel, ok := inside(home); ok {
			return "~/" + rel
		}
	}
	if wd, err := o.getwd(); err == nil {
		if rel, ok := inside(wd); ok {
			return rel
		}
	}
	return p
}

func profileName(p string) string {
	if p == "" {
		return "none"
	}
	return p
}

// init writes the default manifests into the checkout.
func (s *session) init(root string) error {
	o := s.o
	if root == "" {
		return &HintError{errors.New("--init: not inside a checkout (no .jiri_root or git repository)"), "run it from the checkout or give --root DIR"}
	}
	if o.DryRun {
		fmt.Fprintf(o.Stdout, "would write the default manifests into %s\n", s.o.display(filepath.Join(root, manifest.ConfigDir, "permissions")))
		return nil
	}
	written, skipped, err := manifest.WriteDefaults(root)
	for _, f := range written {
		fmt.Fprintf(o.Stdout, "wrote %s\n", f)
	}
	for _, f := range skipped {
		fmt.Fprintf(o.Stdout, "kept existing %s\n", f)
	}
	return err
}

// buildTarget expands the manifest lines placed by the profile and the
// ad-hoc rules into the target grants and the shim's rules. A grant that
// lands in two lists stays only in the strictest (deny, then ask).
func buildTarget(x *manifest.Expander, lines []manifest.Line, adhoc []manifest.Line, to []int, profile string) (config.Grants, []config.Rule, error) {
	if profile != "" {
		if _, _, _, err := manifest.Lists(profile); err != nil {
			return config.Grants{}, nil, Usagef("%v", err)
		}
	}
	// The one policy builder, which the policy tests use too.
	target, rules, err := manifest.Build(x, lines, adhoc, to, profile)
	if adhocErr := (*manifest.AdhocError)(nil); errors.As(err, &adhocErr) {
		return target, nil, Usagef("%v", err)
	}
	return target, rules, err
}

// managedFromRules returns the grants of config.json that its agentShim
// rules list: the managed ones, when no state says so.
func managedFromRules(f *config.File) config.Grants {
	inRules := map[string]bool{}
	for _, r := range f.Shim.Rules {
		for _, g := range r.Grants {
			inRules[g] = true
		}
	}
	var res config.Grants
	e, m := lists(&f.Grants), lists(&res)
	for i := range e {
		*m[i] = []string{}
		for _, g := range *e[i] {
			if inRules[g] {
				*m[i] = append(*m[i], g)
			}
		}
	}
	return res
}

// fromDigests returns the grants of existing whose digests are in
// digests, per list.
func fromDigests(existing, digests config.Grants) config.Grants {
	var res config.Grants
	e, d, r := lists(&existing), lists(&digests), lists(&res)
	for i := range e {
		in := map[string]bool{}
		for _, x := range *d[i] {
			in[x] = true
		}
		*r[i] = []string{}
		for _, g := range *e[i] {
			if in[statefile.Digest(g)] {
				*r[i] = append(*r[i], g)
			}
		}
	}
	return res
}

func union(a, b config.Grants) config.Grants {
	var res config.Grants
	la, lb, lr := lists(&a), lists(&b), lists(&res)
	for i := range la {
		*lr[i] = append(slices.Clone(*la[i]), *lb[i]...)
		slices.Sort(*lr[i])
		*lr[i] = slices.Compact(*lr[i])
	}
	return res
}

func sameRules(a, b []config.Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Line != y.Line || x.Category != y.Category || x.Source != y.Source || !slices.Equal(x.Grants, y.Grants) {
			return false
		}
	}
	return true
}

// printSummary reports a written change.
func (s *session) printSummary(action, profile string, res reconcile.Result, nrules int, tree *manifest.Tree) {
	w := s.o.Stdout
	what := "applied profile " + profileName(profile) + " to"
	if action == "reset" {
		what = "removed the managed grants from"
	}
	fmt.Fprintf(w, "%s %s\n", what, s.o.display(s.configPath))
	added, removed := lists(&res.Added), lists(&res.Removed)
	var parts []string
	for i, name := range listNames {
		parts = append(parts, fmt.Sprintf("%s +%d -%d", name, len(*added[i]), len(*removed[i])))
	}
	src := fmt.Sprintf("%d rules", nrules)
	if tree.Builtin {
		src += " from the built-in defaults"
	} else if len(tree.Files) > 0 {
		src += fmt.Sprintf(" from %d files", len(tree.Files))
	}
	fmt.Fprintf(w, "  %s; %s\n", strings.Join(parts, ", "), src)
}

// rollback restores the config from before the last N changes. When
// config.json is still what the newest of them wrote, the backup is
// restored exactly; otherwise the edits made since (grants added by hand,
// the user's agentShim keys, other keys) are kept, as apply keeps them.
// A rollback is itself a change with a backup: --rollback undoes it.
func (s *session) rollback(ctx context.Context) error {
	o := s.o
	if s.stErr != nil {
		return s.stErr
	}
	n := o.Rollback
	if undo := setupstate.Undoable(s.st); n > len(undo) {
		return fmt.Errorf("--rollback %d: only %d change(s) can be rolled back (backups are kept for the last %d)", n, len(undo), setupstate.KeepBackups)
	}
	var rec *adhocRecord
	var err error
	if !o.DryRun {
		if rec, err = loadAdhoc(s.store); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		st := *s.st
		undo := setupstate.Undoable(&st)
		name := st.History[undo[n-1]].Backup
		newest := st.History[undo[0]]
		b, _, err := s.store.Rollback(&st, n)
		if err != nil {
			return err
		}
		s.load()
		if s.fileErr != nil {
			return &HintError{fmt.Errorf("%w (nothing written)", s.fileErr), "fix config.json, or remove it to restore the backup as it is"}
		}
		exact := newest.Wrote == "" || digest(s.raw) == newest.Wrote
		var data []byte
		switch {
		case exact && b.Existed:
			data = []byte(b.Content)
		case exact:
			data = nil // the change created the file
		default:
			if data, err = s.keepEdits(b); err != nil {
				return err
			}
		}
		if o.DryRun {
			switch {
			case data == nil:
				fmt.Fprintf(o.Stdout, "would remove %s (the rolled back apply created it)\n", s.o.display(s.configPath))
			case !exact:
				fmt.Fprintf(o.Stdout, "would restore %s from %s (profile %s), keeping the edits made since\n", s.o.display(s.configPath), b.Time.Format(time.RFC3339), profileName(b.Profile))
			default:
				fmt.Fprintf(o.Stdout, "would restore %s from %s (profile %s)\n", s.o.display(s.configPath), b.Time.Format(time.RFC3339), profileName(b.Profile))
			}
			return nil
		}
		st.Config = s.configPath
		st.Profile, st.Managed = b.Profile, b.Managed
		st.Fingerprint = ""
		st.Held = nil
		st.History = append(st.History, setupstate.Entry{Time: o.now().UTC(), Action: "rollback", Profile: b.Profile, Created: s.raw == nil && data != nil, Wrote: digest(data)})
		setupstate.TrimHistory(&st, historyKeep)
		c := &change{
			action: "rollback", before: s.raw, data: data, state: st,
			backup: setupstate.Backup{
				Time: o.now().UTC(), Existed: s.raw != nil, Content: string(s.raw),
				Profile: s.st.Profile, Managed: s.st.Managed, Next: b.Managed,
			},
			// The ad-hoc rules a hook run re-applies go back with the
			// config; the ones in force now are kept for undoing this.
			adhoc: func(backup string, history []setupstate.Entry) *adhocRecord {
				next := nextAdhoc(rec, rec.Before[name], "", history)
				if next == nil {
					next = &adhocRecord{Version: adhocVersion, Rules: rec.Before[name], Before: maps.Clone(rec.Before)}
				}
				if len(rec.Rules) > 0 {
					if next.Before == nil {
						next.Before = map[string][]adhocRule{}
					}
					next.Before[backup] = rec.Rules
				}
				if next.Rules == nil {
					next.Rules = []adhocRule{}
				}
				return next
			},
		}
		if _, err := s.commit(c); errors.Is(err, errChanged) && attempt < maxAttempts {
			s.loaded = false
			continue
		} else if err != nil {
			return err
		}
		switch {
		case data == nil:
			fmt.Fprintf(o.Stdout, "removed %s (the rolled back apply created it)\n", s.o.display(s.configPath))
		case !exact:
			fmt.Fprintf(o.Stdout, "restored %s from %s (profile %s), keeping the edits made since\n", s.o.display(s.configPath), b.Time.Format(time.RFC3339), profileName(b.Profile))
		default:
			fmt.Fprintf(o.Stdout, "restored %s from %s (profile %s)\n", s.o.display(s.configPath), b.Time.Format(time.RFC3339), profileName(b.Profile))
		}
		return nil
	}
}

// keepEdits returns the config a rollback to b writes when config.json
// was edited since the change it undoes: the current file (its other keys
// and the user's agentShim keys as they are now), with the grants, profile
// and rules of the backup, plus the grants added by hand since. A grant
// the backup held as the user's and that is gone from every list now was
// deleted by hand, and stays deleted.
func (s *session) keepEdits(b *setupstate.Backup) ([]byte, error) {
	cur := s.file
	restored := &config.File{Path: s.configPath}
	if b.Existed {
		var err error
		if restored, err = config.Parse(s.configPath+" (backup)", []byte(b.Content)); err != nil {
			return nil, err
		}
	}
	hand := reconcile.Custom(cur.Grants, fromDigests(cur.Grants, s.st.Managed))
	oldHand := reconcile.Custom(restored.Grants, fromDigests(restored.Grants, b.Managed))
	inCur := map[string]bool{}
	for _, l := range lists(&cur.Grants) {
		for _, g := range *l {
			inCur[g] = true
		}
	}
	var out config.Grants
	r, h, oh, o := lists(&restored.Grants), lists(&hand), lists(&oldHand), lists(&out)
	handList := map[string]int{}
	for i := range h {
		for _, g := range *h[i] {
			handList[g] = i
		}
	}
	for i := range r {
		deleted := setOf(*oh[i])
		*o[i] = []string{}
		seen := map[string]bool{}
		for _, g := range *r[i] {
			if j, ok := handList[g]; ok && j != i {
				continue // moved by hand to another list since
			}
			if deleted[g] && !inCur[g] {
				continue // deleted by hand since
			}
			if !seen[g] {
				seen[g] = true
				*o[i] = append(*o[i], g)
			}
		}
		for _, g := range *h[i] {
			if !seen[g] {
				seen[g] = true
				*o[i] = append(*o[i], g)
			}
		}
	}
	next := *cur
	next.Grants = out
	next.Shim.Version = restored.Shim.Version
	if next.Shim.Version == 0 {
		next.Shim.Version = config.Version
	}
	next.Shim.Profile = restored.Shim.Profile
	next.Shim.Rules = restored.Shim.Rules
	if next.Shim.Rules == nil {
		next.Shim.Rules = []config.Rule{}
	}
	return next.Marshal()
}

// status reports the profile, the grant counts, the manifests and the
// recent history.
func (s *session) status() error {
	o := s.o
	s.load()
	if s.fileErr != nil {
		return s.fileErr
	}
	if s.stErr != nil {
		return s.stErr
	}
	w := o.Stdout
	st := s.st
	managed := fromDigests(s.file.Grants, st.Managed)
	if !s.stExists() {
		managed = managedFromRules(s.file)
	}
	_, jerr := os.Lstat(journalPath(s.store))
	pending := jerr == nil
	unmatched := 0
	if s.stExists() {
		unmatched = countUnmatched(s.file.Grants, st.Managed)
	}
	custom := reconcile.Custom(s.file.Grants, managed)
	if o.JSON {
		// Pure JSON: nothing else goes to stdout.
		s.printStatusJSON(w, custom, pending, unmatched)
		return nil
	}
	exists := "exists"
	if s.raw == nil {
		exists = "does not exist"
	}
	fmt.Fprintf(w, "config:  %s (%s)\n", s.o.display(s.configPath), exists)
	fmt.Fprintf(w, "state:   %s\n", s.o.display(s.store.Dir))
	fmt.Fprintf(w, "profile: %s\n", profileName(st.Profile))
	if pending {
		fmt.Fprintf(w, "pending: an interrupted change (%s); the next run completes or undoes it\n", s.o.display(journalPath(s.store)))
	}
	if unmatched > 0 {
		fmt.Fprintf(w, "note:    %d managed grant digest(s) in state.json match no grant in config.json: the next apply counts grants a manifest or config.json's rules name as managed, and only the others as custom\n", unmatched)
	}
	e, c := lists(&s.file.Grants), lists(&custom)
	fmt.Fprintf(w, "grants:  %-6s %8s %8s\n", "", "managed", "custom")
	for i, name := range listNames {
		fmt.Fprintf(w, "         %-6s %8d %8d\n", name, len(*e[i])-len(*c[i]), len(*c[i]))
	}
	fmt.Fprintf(w, "rules:   %d\n", len(s.file.Shim.Rules))
	root, err := o.FindRoot()
	if err != nil {
		return err
	}
	if root == "" {
		fmt.Fprintf(w, "root:    none (outside any checkout)\n")
	} else {
		tree, err := manifest.Load(root)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "root:    %s\n", s.o.display(root))
		if tree.Builtin {
			fmt.Fprintf(w, "files:   none (the built-in defaults apply)\n")
		} else {
			fmt.Fprintf(w, "files:\n")
			for _, f := range tree.Files {
				fmt.Fprintf(w, "  %s\n", f)
			}
		}
		for _, sk := range tree.Skipped {
			fmt.Fprintf(w, "skipped: %s (not a git repository)\n", sk)
		}
	}
	if len(st.Held) > 0 {
		fmt.Fprintf(w, "held:    %d change(s) a git hook run did not apply because they widen the policy; run agents-setup to apply them:\n", len(st.Held))
		for _, h := range st.Held {
			fmt.Fprintf(w, "  %s\n", heldText(h))
		}
	}
	fmt.Fprintf(w, "history:\n")
	hist := st.History
	if len(hist) > 10 {
		hist = hist[len(hist)-10:]
	}
	if len(hist) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, h := range hist {
		line := fmt.Sprintf("  %s %s", h.Time.Format(time.RFC3339), h.Action)
		if h.Profile != "" {
			line += " " + h.Profile
		}
		if h.Created {
			line += " (created the file)"
		}
		if h.Backup != "" {
			line += " [can roll back]"
		}
		if h.Undone {
			line += " [rolled back]"
		}
		fmt.Fprintln(w, line)
	}
	s.printRules(w, custom)
	return nil
}

// systemctlRestart restarts user services with systemctl, if there is one.
func SystemctlRestart(ctx context.Context, services []string, stdout io.Writer) error {
	path, err := exec.LookPath("systemctl")
	if err != nil {
		fmt.Fprintf(stdout, "skipped restarting %s: no systemctl\n", strings.Join(services, " "))
		return nil
	}
	args := append([]string{"--user", "try-restart"}, services...)
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	fmt.Fprintf(stdout, "restarted %s\n", strings.Join(services, " "))
	return nil
}
