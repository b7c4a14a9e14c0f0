package gate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-shim/agent-shim/config"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/statefile"
)

// The copy leaves out the grant each managed rule stands for (Rule.Grant):
// it is as long as the grants themselves, and decisions do not need it.
//
// A config.json that agents-setup wrote from a large checkout holds hundreds
// of long regex grants, and the shim reads it before every command. What a
// decision needs from it is much smaller: the rules (one manifest line for
// all the grants it expanded to) and the shim's settings. The compact copy
// below is kept in the cache directory, keyed by the config file's path,
// and trusted only while the file's identity (device, inode, size, change
// and modification times) is the one it was made from; any mismatch or
// unreadable copy falls back to reading config.json itself.

// loadConfig reads config.json; tests count its calls.
var loadConfig = config.Load

// compactVersion changes whenever the format of compact changes.
const compactVersion = 3

type compact struct {
	Version     int
	Path        string
	Stamp       stamp
	Mode        string
	Profile     string
	Shell       string
	Runtime     string
	RequireHook bool
	PathScope   []string
	Tools       config.Tools
	Rules       []compactRule
}

type compactRule struct {
	Text, Decision, Category, Overlay, File string
	Line                                    int
}

// stamp identifies one version of a file.
type stamp = statefile.Identity

func stampOf(fi fs.FileInfo) (stamp, bool) { return statefile.IdentityOf(fi) }

func cachePath(cacheDir, configPath string) string {
	sum := sha256.Sum256([]byte(configPath))
	return filepath.Join(cacheDir, "policy-"+hex.EncodeToString(sum[:12])+".txt")
}

// loadCached returns the options of configPath from the compact copy in
// cacheDir when it is current and authentic, else reads config.json and
// refreshes the copy. Failing to write the copy is not an error: it only
// costs speed.
func loadCached(configPath, cacheDir, keyPath string, scope *Scope) (Options, error) {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return Options{}, fmt.Errorf("reading config: %w", err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return loadOptions(configPath, scope)
	}
	if err != nil {
		return Options{}, fmt.Errorf("reading config: %w", err)
	}
	st, ok := stampOf(fi)
	if !ok {
		return loadOptions(configPath, scope)
	}
	key, kerr := cacheKey(keyPath)
	cp := cachePath(cacheDir, abs)
	if kerr == nil {
		if c, err := readCompact(cp, key); err == nil && c.Path == abs && c.Stamp == st {
			if o, err := c.options(configPath, scope); err == nil {
				return o, nil
			}
		}
	}
	f, err := loadConfig(configPath)
	if err != nil {
		return Options{}, err
	}
	o, err := optionsOf(f, scope)
	if err != nil {
		return Options{}, err
	}
	// Only a file that did not change while it was read is worth a copy.
	if fi2, err := os.Stat(abs); err == nil && kerr == nil {
		if st2, ok := stampOf(fi2); ok && st2 == st {
			writeCompact(cp, newCompact(abs, st, f, o.Policy), key)
		}
	}
	return o, nil
}

// Key returns the per-user key that authenticates what the shim keeps
// where an agent could write it (the compact policy copy, session answer
// files): keySize random bytes in the file at path, created (0600, in a
// 0700 directory) on first use. A key file that is not a regular file of
// keySize bytes only its owner can read and write is an error: what it
// would authenticate is then not trusted.
func Key(path string) ([]byte, error) { return cacheKey(path) }

// keySize is the length of the cache key.
const keySize = 32

// cacheKey returns the key that authenticates compact copies, creating it
// (random, 0600, in a 0700 directory) on first use. A key file that is
// not a regular file of keySize bytes that only its owner can read and
// write is not used: the cache is then skipped, never trusted.
func cacheKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newCacheKey(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() != keySize {
		return nil, fmt.Errorf("cache key %s: not a %d-byte file only its owner can read", path, keySize)
	}
	key := make([]byte, keySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("reading cache key %s: %w", path, err)
	}
	return key, nil
}

func newCacheKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Written under another name and linked into place: a reader never
	// sees a short key, and of two first uses at once one key wins.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cache-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(key)
	serr := tmp.Sync()
	if cerr := tmp.Close(); werr != nil || serr != nil || cerr != nil {
		return nil, errors.Join(werr, serr, cerr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return cacheKey(path)
		}
		return nil, err
	}
	return key, nil
}

// mac is the authentication tag of a compact copy's text.
func mac(key []byte, text string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(text))
	return hex.EncodeToString(m.Sum(nil))
}

// The copy is a small line format, not JSON, because it is read before
// every command: a header, then one record per line, fields separated by
// tabs, each quoted (strconv) when it holds a tab, newline, quote or
// backslash, or is empty; the last line is an HMAC-SHA256, under the
// cache key, of everything before it (the path and stamp of config.json
// included), so that a copy written by anyone without the key is not read:
//
//	agent-shim compact policy 2
//	path	/home/u/.gemini/config/config.json
//	stamp	2049 1234 56789 1732950000000000000 1732950000000000000
//	mode	ask
//	profile	local-changes
//	shell	/bin/bash
//	runtime	on
//	requirehook	false
//	scope	/opt/data/...
//	tool	allow	bash:make *
//	smac	9a0e…
//	rule	deny	never_allow	.	.agents/config/permissions/never_allow.txt	2	git push --force
//	mac	3f1c…
//
// smac is an HMAC of everything before it: the settings (see Settings) can
// be read and trusted from the start of the copy without reading or
// hashing its rules, however many there are.
const compactHeader = "agent-shim compact policy 3"

func field(s string) string {
	if s == "" || strings.ContainsAny(s, "\t\n\r\"\\") {
		return strconv.Quote(s)
	}
	return s
}

func unfield(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

func (c *compact) marshal(key []byte) []byte {
	var b strings.Builder
	b.WriteString(compactHeader + "\n")
	fmt.Fprintf(&b, "path\t%s\n", field(c.Path))
	fmt.Fprintf(&b, "stamp\t%d %d %d %d %d\n", c.Stamp.Dev, c.Stamp.Ino, c.Stamp.Size, c.Stamp.Mtime, c.Stamp.Ctime)
	fmt.Fprintf(&b, "mode\t%s\n", field(c.Mode))
	fmt.Fprintf(&b, "profile\t%s\n", field(c.Profile))
	fmt.Fprintf(&b, "shell\t%s\n", field(c.Shell))
	fmt.Fprintf(&b, "runtime\t%s\n", field(c.Runtime))
	fmt.Fprintf(&b, "requirehook\t%t\n", c.RequireHook)
	for _, p := range c.PathScope {
		fmt.Fprintf(&b, "scope\t%s\n", field(p))
	}
	for _, p := range c.Tools.Allow {
		fmt.Fprintf(&b, "tool\tallow\t%s\n", field(p))
	}
	for _, p := range c.Tools.Deny {
		fmt.Fprintf(&b, "tool\tdeny\t%s\n", field(p))
	}
	fmt.Fprintf(&b, "smac\t%s\n", mac(key, b.String()))
	for _, r := range c.Rules {
		fmt.Fprintf(&b, "rule\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Decision,
			field(r.Category), field(r.Overlay), field(r.File), r.Line, field(r.Text))
	}
	return []byte(b.String())
}

func readCompact(path string, key []byte) (*compact, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(data)
	i := strings.LastIndex(text, "\nmac\t")
	if i < 0 || !strings.HasSuffix(text, "\n") {
		return nil, errors.New("compact policy without a mac")
	}
	want := text[i+len("\nmac\t") : len(text)-1]
	text = text[:i+1]
	if !hmac.Equal([]byte(want), []byte(mac(key, text))) {
		return nil, errors.New("compact policy: the mac does not match")
	}
	return parseCompact(text)
}

// parseCompact parses the authenticated text of a compact copy.
func parseCompact(text string) (*compact, error) {
	header, text, ok := strings.Cut(text, "\n")
	if !ok || header != compactHeader || !strings.HasSuffix(text, "\n") {
		return nil, errors.New("not a compact policy")
	}
	var err error
	c := &compact{Version: compactVersion, Rules: make([]compactRule, 0, strings.Count(text, "\nrule\t")+1)}
	// Fields are substrings of text: no copy unless quoted.
	var f [8]string
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		n, rest := 0, line
		for ; n < len(f); n++ {
			var more bool
			f[n], rest, more = strings.Cut(rest, "\t")
			if f[n], err = unfield(f[n]); err != nil {
				return nil, err
			}
			if !more {
				n++
				break
			}
		}
		if rest != "" && n == len(f) {
			return nil, fmt.Errorf("bad compact policy line %q", line)
		}
		switch {
		case f[0] == "path" && n == 2:
			c.Path = f[1]
		case f[0] == "stamp" && n == 2:
			if _, err := fmt.Sscan(f[1], &c.Stamp.Dev, &c.Stamp.Ino, &c.Stamp.Size, &c.Stamp.Mtime, &c.Stamp.Ctime); err != nil {
				return nil, err
			}
		case f[0] == "mode" && n == 2:
			c.Mode = f[1]
		case f[0] == "profile" && n == 2:
			c.Profile = f[1]
		case f[0] == "shell" && n == 2:
			c.Shell = f[1]
		case f[0] == "runtime" && n == 2:
			c.Runtime = f[1]
		case f[0] == "requirehook" && n == 2 && (f[1] == "true" || f[1] == "false"):
			c.RequireHook = f[1] == "true"
		case f[0] == "smac" && n == 2:
			// checked by Settings; the whole text is under mac
		case f[0] == "scope" && n == 2:
			c.PathScope = append(c.PathScope, f[1])
		case f[0] == "tool" && n == 3 && f[1] == "allow":
			c.Tools.Allow = append(c.Tools.Allow, f[2])
		case f[0] == "tool" && n == 3 && f[1] == "deny":
			c.Tools.Deny = append(c.Tools.Deny, f[2])
		case f[0] == "rule" && n == 7:
			num, err := strconv.Atoi(f[5])
			if err != nil {
				return nil, err
			}
			c.Rules = append(c.Rules, compactRule{Decision: f[1], Category: f[2], Overlay: f[3], File: f[4], Line: num, Text: f[6]})
		default:
			return nil, fmt.Errorf("bad compact policy line %q", line)
		}
	}
	return c, nil
}

func newCompact(abs string, st stamp, f *config.File, p *matcher.Policy) *compact {
	c := &compact{
		Version: compactVersion, Path: abs, Stamp: st,
		Mode: f.Shim.Mode, Profile: f.Shim.Profile,
		Shell: f.Shim.Shell, Runtime: f.Shim.Runtime, RequireHook: f.Shim.RequireHook,
		PathScope: f.Shim.PathScope.Allow, Tools: f.Shim.Tools,
	}
	for _, r := range p.Rules() {
		c.Rules = append(c.Rules, compactRule{
			Text: r.Text, Decision: r.Decision.String(),
			Category: r.Source.Category, Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line,
		})
	}
	return c
}

// writeCompact writes the copy atomically; errors are ignored (see loadCached).
func writeCompact(path string, c *compact, key []byte) {
	text := string(c.marshal(key))
	data := []byte(text + "mac\t" + mac(key, text) + "\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".policy-*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// options rebuilds what optionsOf builds from the full file.
func (c *compact) options(configPath string, scope *Scope) (Options, error) {
	f := &config.File{Path: configPath, Exists: true}
	f.Shim.Mode, f.Shim.Profile = c.Mode, c.Profile
	f.Shim.Shell, f.Shim.Runtime, f.Shim.RequireHook = c.Shell, c.Runtime, c.RequireHook
	f.Shim.PathScope.Allow, f.Shim.Tools = c.PathScope, c.Tools
	o, err := optionsOf(f, scope)
	if err != nil {
		return Options{}, err
	}
	p := matcher.New()
	for _, r := range c.Rules {
		d, err := matcher.ParseDecision(r.Decision)
		if err != nil || d == matcher.Default {
			return Options{}, fmt.Errorf("compact policy: rule %q: bad decision %q", r.Text, r.Decision)
		}
		p.Add(d, r.Text, matcher.Source{Category: r.Category, Overlay: r.Overlay, File: r.File, Line: r.Line})
	}
	o.Policy = p
	return o, nil
}

// Settings returns the shim's settings of config.json (mode, profile,
// shell, runtime, requireHook, pathScope, tools; no rules) as cheaply as it
// can: from the start of the compact copy in cacheDir when that is current
// and authentic (its smac), else from config.LoadSettings. Shell mode needs
// them before every line.
func Settings(configPath, cacheDir, keyPath string) (config.Shim, error) {
	if cacheDir != "" && keyPath != "" {
		if s, ok := cachedSettings(configPath, cacheDir, keyPath); ok {
			return s, nil
		}
	}
	f, err := config.LoadSettings(configPath)
	if err != nil {
		return config.Shim{}, err
	}
	return f.Shim, nil
}

// settingsRead bounds what cachedSettings reads of the copy: the settings
// and the tool and scope patterns come before any rule.
const settingsRead = 64 << 10

func cachedSettings(configPath, cacheDir, keyPath string) (config.Shim, bool) {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return config.Shim{}, false
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return config.Shim{}, false
	}
	st, ok := stampOf(fi)
	if !ok {
		return config.Shim{}, false
	}
	key, err := cacheKey(keyPath)
	if err != nil {
		return config.Shim{}, false
	}
	f, err := os.Open(cachePath(cacheDir, abs))
	if err != nil {
		return config.Shim{}, false
	}
	defer f.Close()
	buf := make([]byte, settingsRead)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return config.Shim{}, false
	}
	text := string(buf[:n])
	i := strings.Index(text, "\nsmac\t")
	if i < 0 {
		return config.Shim{}, false
	}
	j := strings.IndexByte(text[i+1:], '\n')
	if j < 0 {
		return config.Shim{}, false
	}
	want := text[i+len("\nsmac\t") : i+1+j]
	text = text[:i+1]
	if !hmac.Equal([]byte(want), []byte(mac(key, text))) {
		return config.Shim{}, false
	}
	c, err := parseCompact(text)
	if err != nil || c.Path != abs || c.Stamp != st {
		return config.Shim{}, false
	}
	return config.Shim{
		Version: config.Version, Profile: c.Profile, Mode: c.Mode, Shell: c.Shell,
		Runtime: c.Runtime, RequireHook: c.RequireHook,
		PathScope: config.PathScope{Allow: c.PathScope}, Tools: c.Tools,
	}, true
}
