package manifest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/statefile"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

//go:embed defaults/permissions/*.txt
var defaults embed.FS

// ConfigDir is an overlay's configuration directory, relative to the overlay.
const ConfigDir = ".agents/config"

// BuiltinFile is the prefix of Line.File for the embedded default manifests.
const BuiltinFile = "<builtin>/permissions/"

// Tree is a checkout's merged policy.
type Tree struct {
	Root     string   // the checkout root, absolute; "" for the defaults alone
	Overlays []string // overlays read, in order: "." and "vendor/<x>"
	Lines    []Line   // rules by category (in Categories order), then overlay, then line
	Files    []string // files read, relative to Root, in overlay order
	Services []string // user services to restart after a change, in order, without duplicates
	// Programs are the overlays' program facts (.agents/config/programs.txt),
	// in overlay order; see Table.
	Programs []programs.File
	Builtin  bool     // no overlay has a manifest: Lines are the embedded defaults
	Skipped  []string // vendor/<x> with a config dir that are not git repositories
}

// FindRoot returns the checkout root for dir: the nearest ancestor (or dir
// itself) holding a .jiri_root directory, else the top of the enclosing git
// repository or linked worktree, confirmed with go-git's storage (see isRepo). It fails if dir is
// in neither.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("finding checkout root: %w", err)
	}
	gitTop := ""
	for d := abs; ; {
		if fi, err := os.Stat(filepath.Join(d, ".jiri_root")); err == nil && fi.IsDir() {
			return d, nil
		}
		if gitTop == "" {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				gitTop = d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if gitTop == "" {
		return "", fmt.Errorf("finding checkout root: %s is not inside a jiri checkout (.jiri_root) or a git repository", abs)
	}
	ok, err := isRepo(gitTop)
	if err != nil {
		return "", fmt.Errorf("finding checkout root: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("finding checkout root: %s has a .git that is not a git repository", gitTop)
	}
	return gitTop, nil
}

// isRepo reports whether dir is a git repository or linked worktree, the way
// go-git's PlainOpenWithOptions(dir, &PlainOpenOptions{EnableDotGitCommonDir:
// true}) decides it: dir/.git is the git directory, or a file naming it
// ("gitdir: …", as in a linked worktree or a submodule), or, without a .git,
// dir itself is (a bare repository); a linked worktree's commondir file names
// the directory that holds the refs and config; HEAD must resolve and the
// config must parse. No index, object or worktree status is read.
//
// It is built on go-git's storage and plumbing packages rather than the
// top-level package, which would link go-git's ssh, http and openpgp
// transports into the binary and slow every start, hook runs included.
// go-git's refusal of repository extensions and formats it does not know is
// not checked: such repositories count, since only the manifests are read.
func isRepo(dir string) (bool, error) {
	dot, err := gitDir(dir)
	if err != nil {
		return false, fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	if _, err := dot.Stat(""); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	common, err := commonDir(dot)
	if err != nil {
		return false, fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	if err := checkGitFiles(dir, dot, common); err != nil {
		return false, err
	}
	repoFS := dot
	if common != nil {
		repoFS = dotgit.NewRepositoryFilesystem(dot, common)
	}
	s := filesystem.NewStorage(repoFS, cache.NewObjectLRUDefault())
	if _, err := s.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
		return false, nil
	}
	if _, err := s.Config(); err != nil {
		return false, fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	return true, nil
}

// checkGitFiles reads the files of dot (and common) that go-git will read,
// without blocking and bounded (a FIFO there would hang it), and refuses
// a repository whose HEAD exists but cannot be read or is empty: that is a
// broken repository, whose overlay must not be skipped as if it were a
// stray directory (its deny rules would go with it). A missing HEAD is no
// repository, as go-git decides.
func checkGitFiles(dir string, dot, common billy.Filesystem) error {
	head := filepath.Join(dot.Root(), "HEAD")
	if _, err := os.Lstat(head); errors.Is(err, fs.ErrNotExist) {
		return nil // no repository, as go-git decides
	}
	data, err := statefile.ReadRegular(head, statefile.MaxSmall)
	if err != nil {
		return fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return fmt.Errorf("opening git repository %s: %s is empty", dir, head)
	}
	refs := dot.Root()
	if common != nil {
		refs = common.Root()
	}
	check := []string{filepath.Join(refs, "config"), filepath.Join(refs, "packed-refs")}
	if ref, ok := strings.CutPrefix(text, "ref: "); ok && !strings.Contains(ref, "..") {
		check = append(check, filepath.Join(refs, filepath.FromSlash(ref)), filepath.Join(dot.Root(), filepath.FromSlash(ref)))
	}
	for _, p := range check {
		f, err := statefile.OpenRegular(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("opening git repository %s: %w", dir, err)
		}
		f.Close()
	}
	return nil
}

// gitDir returns dir's git directory: dir/.git, the directory a .git file
// names, or dir itself when there is no .git.
func gitDir(dir string) (billy.Filesystem, error) {
	fi, err := os.Stat(filepath.Join(dir, ".git"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return osfs.New(dir), nil
	case err != nil:
		return nil, err
	case fi.IsDir():
		return osfs.New(filepath.Join(dir, ".git")), nil
	}
	b, err := statefile.ReadRegular(filepath.Join(dir, ".git"), statefile.MaxSmall)
	if err != nil {
		return nil, err
	}
	const prefix = "gitdir: "
	line, ok := strings.CutPrefix(string(b), prefix)
	if !ok {
		return nil, fmt.Errorf(".git file has no %s prefix", prefix)
	}
	gitdir, _, _ := strings.Cut(line, "\n")
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	return osfs.New(gitdir), nil
}

// commonDir returns the directory a linked worktree's git directory shares
// with its main repository (its commondir file), or nil.
func commonDir(dot billy.Filesystem) (billy.Filesystem, error) {
	b, err := statefile.ReadRegular(filepath.Join(dot.Root(), "commondir"), statefile.MaxSmall)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return nil, nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dot.Root(), p)
	}
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("commondir %s: repository incomplete", p)
		}
		return nil, err
	}
	return osfs.New(p), nil
}

// overlay is one configuration directory.
type overlay struct {
	name string // "." or "vendor/<x>"
	dir  string // absolute path of its ConfigDir
}

// overlays lists the candidate overlays of root: "." and every vendor/<x>
// with a config dir, in order. Whether a vendor dir is a repository is not
// checked here.
func overlays(root string) ([]overlay, error) {
	var res []overlay
	if isDir(filepath.Join(root, ConfigDir)) {
		res = append(res, overlay{".", filepath.Join(root, ConfigDir)})
	}
	ents, err := statefile.ReadDir(filepath.Join(root, "vendor"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading overlays: %w", err)
	}
	// statefile.ReadDir sorts by name.
	for _, e := range ents {
		name := "vendor/" + e.Name()
		dir := filepath.Join(root, "vendor", e.Name(), ConfigDir)
		if isDir(filepath.Join(root, "vendor", e.Name())) && isDir(dir) {
			res = append(res, overlay{name, dir})
		}
	}
	return res, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Load reads the policy of the checkout at root: the root's own
// .agents/config/ and then each vendor/<x>/.agents/config/ in sorted order.
// A vendor/<x> that is not a git repository (checked with go-git, no status)
// is skipped and listed in Tree.Skipped, so a stray directory cannot add
// rules; a vendor/<x> without a config dir is not opened at all. Same-named
// manifests are concatenated, root first. When no overlay has a manifest,
// the embedded defaults are used (Tree.Builtin). A *.txt file in
// permissions/ that names no category is an error, as is any unreadable
// line. Load("") returns the defaults alone.
func Load(root string) (*Tree, error) {
	t := &Tree{Root: root}
	byCat := map[string][]Line{}
	if root != "" {
		ovs, err := overlays(root)
		if err != nil {
			return nil, err
		}
		p := newLineParser()
		for _, ov := range ovs {
			if ov.name != "." {
				ok, err := isRepo(filepath.Join(root, filepath.FromSlash(ov.name)))
				if err != nil {
					return nil, fmt.Errorf("reading overlay %s: %w", ov.name, err)
				}
				if !ok {
					t.Skipped = append(t.Skipped, ov.name)
					continue
				}
			}
			t.Overlays = append(t.Overlays, ov.name)
			if err := t.readOverlay(p, ov, byCat); err != nil {
				return nil, err
			}
		}
	}
	if len(byCat) == 0 {
		t.Builtin = true
		for _, c := range Categories {
			data, err := defaults.ReadFile("defaults/permissions/" + c + ".txt")
			if err != nil {
				return nil, fmt.Errorf("reading built-in manifest %s: %w", c, err)
			}
			lines, err := ParseList(BuiltinFile+c+".txt", data, c, "builtin")
			if err != nil {
				return nil, err
			}
			byCat[c] = lines
		}
	}
	for _, c := range Categories {
		t.Lines = append(t.Lines, byCat[c]...)
	}
	return t, nil
}

// readOverlay adds ov's manifests to byCat (present keys mean a manifest
// was found, even an empty one) and its services to t.
func (t *Tree) readOverlay(p *lineParser, ov overlay, byCat map[string][]Line) error {
	rel := ov.name + "/" + ConfigDir
	if ov.name == "." {
		rel = ConfigDir
	}
	permDir := filepath.Join(ov.dir, "permissions")
	ents, err := statefile.ReadDir(permDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading overlay %s: %w", ov.name, err)
	}
	found := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		c, ok := strings.CutSuffix(name, ".txt")
		if !ok || e.IsDir() {
			continue
		}
		if !IsCategory(c) {
			return fmt.Errorf("%s/permissions/%s: not a category (categories: %s)", rel, name, strings.Join(Categories, ", "))
		}
		found[c] = true
	}
	for _, c := range Categories {
		if !found[c] {
			continue
		}
		file := rel + "/permissions/" + c + ".txt"
		data, err := statefile.ReadRegular(filepath.Join(permDir, c+".txt"), statefile.MaxManifest)
		if err != nil {
			return fmt.Errorf("reading manifest %s: %w", file, err)
		}
		t.Files = append(t.Files, file)
		lines, err := parseList(p, file, data, c, ov.name)
		if err != nil {
			return err
		}
		byCat[c] = append(byCat[c], lines...)
	}
	progFile := rel + "/programs.txt"
	data, err := statefile.ReadRegular(filepath.Join(ov.dir, "programs.txt"), statefile.MaxManifest)
	switch {
	case err == nil:
		t.Files = append(t.Files, progFile)
		t.Programs = append(t.Programs, programs.File{Name: progFile, Data: data})
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("reading program facts %s: %w", progFile, err)
	}
	file := rel + "/services.txt"
	data, err = statefile.ReadRegular(filepath.Join(ov.dir, "services.txt"), statefile.MaxManifest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("reading services %s: %w", file, err)
	}
	t.Files = append(t.Files, file)
	svcs, err := ParseServices(file, data)
	if err != nil {
		return err
	}
	for _, s := range svcs {
		if !slices.Contains(t.Services, s) {
			t.Services = append(t.Services, s)
		}
	}
	return nil
}

var serviceName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9:_.@\\-]+$`) })

// ParseServices reads a services.txt: one systemd user unit name per line,
// blank lines and # comments skipped. A name with other characters is an
// error "name:line: problem".
func ParseServices(name string, data []byte) ([]string, error) {
	var res []string
	for i, raw := range strings.Split(string(data), "\n") {
		s := raw
		if j := strings.IndexByte(s, '#'); j >= 0 {
			s = s[:j]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !serviceName().MatchString(s) || s[0] == '-' {
			return nil, fmt.Errorf("%s:%d: %q is not a service name", name, i+1, s)
		}
		res = append(res, s)
	}
	return res, nil
}

// fingerprintVersion changes whenever Load's reading of the same files
// changes, so that an upgraded binary never takes the unchanged-run path.
const fingerprintVersion = "manifest fingerprint v1\n"

// Fingerprint returns a digest of everything Load reads at root: the names
// and contents of the overlays' manifests and services.txt, the repository
// markers of vendor overlays (the .git entry and HEAD, by stat; no
// repository is opened) and the embedded defaults. Equal fingerprints mean
// Load returns the same tree, so agents-setup may skip an unchanged run.
func Fingerprint(root string) (string, error) {
	h := sha256.New()
	h.Write([]byte(fingerprintVersion))
	writeField := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
	}
	builtin, err := fs.ReadDir(defaults, "defaults/permissions")
	if err != nil {
		return "", fmt.Errorf("fingerprinting defaults: %w", err)
	}
	for _, e := range builtin {
		data, _ := defaults.ReadFile("defaults/permissions/" + e.Name())
		writeField("builtin", e.Name(), string(data))
	}
	if root == "" {
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	writeField("root", root)
	ovs, err := overlays(root)
	if err != nil {
		return "", err
	}
	for _, ov := range ovs {
		writeField("overlay", ov.name)
		if ov.name != "." {
			marker, err := repoMarker(filepath.Join(root, filepath.FromSlash(ov.name)))
			if err != nil {
				return "", err
			}
			writeField("git", marker)
		}
		permDir := filepath.Join(ov.dir, "permissions")
		ents, err := statefile.ReadDir(permDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("fingerprinting overlay %s: %w", ov.name, err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".txt") || e.IsDir() {
				continue
			}
			data, err := statefile.ReadRegular(filepath.Join(permDir, e.Name()), statefile.MaxManifest)
			if err != nil {
				return "", fmt.Errorf("fingerprinting overlay %s: %w", ov.name, err)
			}
			writeField("manifest", e.Name(), string(data))
		}
		for _, name := range []string{"services.txt", "programs.txt"} {
			data, err := statefile.ReadRegular(filepath.Join(ov.dir, name), statefile.MaxManifest)
			switch {
			case err == nil:
				writeField(name, string(data))
			case !errors.Is(err, fs.ErrNotExist):
				return "", fmt.Errorf("fingerprinting overlay %s: %w", ov.name, err)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Table returns the program facts the tree's grants are expanded with:
// the built-in table with the overlays' programs.txt merged in. A fact
// that cannot be read, or that would make a decision less strict, is an
// error naming its file and line.
func (t *Tree) Table() (*programs.Table, error) {
	if len(t.Programs) == 0 {
		return programs.Builtin(), nil
	}
	return programs.WithOverlays(t.Programs...)
}

// repoMarker describes dir's .git without opening the repository: a .git
// file's contents (a linked worktree or submodule), or whether a .git
// directory has a HEAD.
func repoMarker(dir string) (string, error) {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "none", nil
	case err != nil:
		return "", fmt.Errorf("fingerprinting %s: %w", dir, err)
	case fi.Mode().IsRegular():
		data, err := statefile.ReadRegular(filepath.Join(dir, ".git"), statefile.MaxSmall)
		if err != nil {
			return "", fmt.Errorf("fingerprinting %s: %w", dir, err)
		}
		return "file:" + string(data), nil
	case fi.IsDir():
		if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err != nil {
			return "dir", nil
		}
		return "dir+HEAD", nil
	}
	return "other:" + fi.Mode().String(), nil
}

// WriteDefaults writes the embedded default manifests into
// root/.agents/config/permissions/ for editing (agents-setup --init). It never
// replaces an existing file: written and skipped list the files, relative to
// root, that were created and that already existed.
func WriteDefaults(root string) (written, skipped []string, err error) {
	dir := filepath.Join(root, ConfigDir, "permissions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("writing default manifests: %w", err)
	}
	for _, c := range Categories {
		rel := ConfigDir + "/permissions/" + c + ".txt"
		data, err := defaults.ReadFile("defaults/permissions/" + c + ".txt")
		if err != nil {
			return written, skipped, fmt.Errorf("reading built-in manifest %s: %w", c, err)
		}
		p := filepath.Join(dir, c+".txt")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			skipped = append(skipped, rel)
			continue
		}
		if err != nil {
			return written, skipped, fmt.Errorf("writing default manifest %s: %w", rel, err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return written, skipped, fmt.Errorf("writing default manifest %s: %w", rel, err)
		}
		written = append(written, rel)
	}
	return written, skipped, nil
}

// DefaultManifest returns the embedded default manifest of category.
func DefaultManifest(category string) ([]byte, error) {
	if !IsCategory(category) {
		return nil, fmt.Errorf("unknown category %q", category)
	}
	return defaults.ReadFile("defaults/permissions/" + category + ".txt")
}
