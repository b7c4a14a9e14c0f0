package gate

import (
	"bytes"
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
	"sync"

	"github.com/agent-shim/agent-shim/internal/config"
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
//
// The copy is not authenticated: a MAC under a key the agent's processes
// can read (hook mode's allowed cat, anything under the run-time layer)
// stops nobody. What keeps it honest is where it lives: the cache
// directory must be one the agent's process tree cannot write, as
// config.json is (agent-shim keeps it in its state directory, a protected
// path outside every run-time scope). Nor does it hold the never-allow
// rules: they always come from the binary (see withNever).

// loadConfig reads config.json; tests count its calls.
var loadConfig = config.Load

// compactVersion changes whenever the format of compact changes.
const compactVersion = 9

type compact struct {
	Version     int
	Path        string
	Stamp       stamp
	Mode        string
	Profile     string
	Shell       string
	Runtime     string
	RequireHook bool
	Secrets     []string
	PathScope   []string
	Tools       config.Tools
	Programs    []config.ProgramFile
	Count       int // rules in the policy
	Buckets     int
	Sections    []matcher.Section // what marshal writes
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
func loadCached(configPath, cacheDir string, scope *Scope) (built, error) {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return built{}, fmt.Errorf("reading config: %w", err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return loadOptions(configPath, scope)
	}
	if err != nil {
		return built{}, fmt.Errorf("reading config: %w", err)
	}
	st, ok := stampOf(fi)
	if !ok {
		return loadOptions(configPath, scope)
	}
	cp := cachePath(cacheDir, abs)
	if s, c, err := openCompact(cp); err == nil && c.Path == abs && c.Stamp == st {
		if o, err := c.options(configPath, scope, s); err == nil {
			return o, nil
		}
	}
	f, err := loadConfig(configPath)
	if err != nil {
		return built{}, err
	}
	o, err := optionsOf(f, scope)
	if err != nil {
		return built{}, err
	}
	// Only a file that did not change while it was read is worth a copy.
	if fi2, err := os.Stat(abs); err == nil {
		if st2, ok := stampOf(fi2); ok && st2 == st {
			writeCompact(cp, newCompact(abs, st, f, o.Policy))
		}
	}
	return o, nil
}

// The copy is a small line format, not JSON, because it is read before
// every command, and it is read in pieces: a header with the settings,
// a table of regions, then the regions. Fields are separated by tabs,
// each quoted (strconv) when it holds a tab, newline, quote or backslash,
// or is empty.
//
//	agent-shim compact policy 8
//	path	/home/u/.gemini/config/config.json
//	stamp	2049 1234 56789 1732950000000000000 1732950000000000000
//	mode	ask
//	profile	local-changes
//	shell	/bin/bash
//	runtime	on
//	requirehook	false
//	scope	/opt/data/...
//	tool	allow	bash:make *
//	programs	.agents/config/programs.txt	"[mytool]\nexec --hook\n"
//	rules	483
//	buckets	256
//	end
//	0000000000000a3c 000001f2     (buckets+1 lines: offset and length of each region)
//	…
//	region	0
//	section	git	status diff log
//	rule	git	12	allow	""	read_only	.	.agents/config/permissions/read_only.txt	4	git --version
//	…
//
// The header holds the path and stamp of config.json and the settings
// (see Settings, which reads no rule). The policy's sections (see
// matcher.Store) are filed in buckets by a hash of their name; region i
// < buckets holds the sections of bucket i, region buckets the programs
// that have sections. A decision reads the header, then the buckets of
// the names it looks up, so its cost does not grow with the policy. A
// region that does not parse makes the decisions that need it ask, and
// the copy is removed (see compactStore.fail).
const compactHeader = "agent-shim compact policy 9"

// tableLine is the length of a line of the region table.
const tableLine = len("0000000000000000 00000000\n")

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

// bucketOf is the bucket of a section name (FNV-1a).
func bucketOf(name string, buckets int) int {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return int(h % uint32(buckets))
}

// marshalHeader writes the header, up to its end line.
func (c *compact) marshalHeader(b *strings.Builder) {
	b.WriteString(compactHeader + "\n")
	fmt.Fprintf(b, "path\t%s\n", field(c.Path))
	fmt.Fprintf(b, "stamp\t%d %d %d %d %d\n", c.Stamp.Dev, c.Stamp.Ino, c.Stamp.Size, c.Stamp.Mtime, c.Stamp.Ctime)
	fmt.Fprintf(b, "mode\t%s\n", field(c.Mode))
	fmt.Fprintf(b, "profile\t%s\n", field(c.Profile))
	fmt.Fprintf(b, "shell\t%s\n", field(c.Shell))
	fmt.Fprintf(b, "runtime\t%s\n", field(c.Runtime))
	fmt.Fprintf(b, "requirehook\t%t\n", c.RequireHook)
	for _, p := range c.Secrets {
		fmt.Fprintf(b, "secret\t%s\n", field(p))
	}
	for _, p := range c.PathScope {
		fmt.Fprintf(b, "scope\t%s\n", field(p))
	}
	for _, p := range c.Tools.Allow {
		fmt.Fprintf(b, "tool\tallow\t%s\n", field(p))
	}
	for _, p := range c.Tools.Deny {
		fmt.Fprintf(b, "tool\tdeny\t%s\n", field(p))
	}
	for _, p := range c.Programs {
		fmt.Fprintf(b, "programs\t%s\t%s\n", field(p.File), field(p.Text))
	}
	fmt.Fprintf(b, "rules\t%d\n", c.Count)
	fmt.Fprintf(b, "buckets\t%d\n", c.Buckets)
	b.WriteString("end\n")
}

// marshal returns the whole copy.
func (c *compact) marshal() []byte {
	// At least a bucket a section: a decision parses only the lines
	// of the sections it asks for, whatever else shares their bucket.
	c.Buckets = 8
	for c.Buckets < len(c.Sections) {
		c.Buckets *= 2
	}
	regions := make([][]byte, c.Buckets+1)
	var progs []byte
	for _, s := range c.Sections {
		i := bucketOf(s.Name, c.Buckets)
		regions[i] = appendSection(regions[i], s)
		if s.Program {
			progs = fmt.Appendf(progs, "program\t%s\n", field(s.Name))
		}
	}
	regions[c.Buckets] = progs
	for i, r := range regions {
		// Each region names itself: one read in the wrong place (a
		// table entry gone bad) is not taken for an empty bucket.
		regions[i] = append(fmt.Appendf(nil, "region\t%d\n", i), r...)
	}
	var b strings.Builder
	c.marshalHeader(&b)
	off := b.Len() + tableLine*len(regions)
	for i, r := range regions {
		fmt.Fprintf(&b, "%016x %08x\n", off, len(r))
		off += len(regions[i])
	}
	for _, r := range regions {
		b.Write(r)
	}
	return []byte(b.String())
}

// appendSection appends a section's lines: its name and leads, then its
// rules (parseSections reads them).
func appendSection(b []byte, s matcher.Section) []byte {
	b = fmt.Appendf(b, "section\t%s\t%s\n", field(s.Name), field(strings.Join(s.Leads, " ")))
	for _, r := range s.Rules {
		b = fmt.Appendf(b, "rule\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", field(s.Name), r.Seq,
			r.Decision, field(r.Key), field(r.Source.Category), field(r.Source.Overlay), field(r.Source.File),
			r.Source.Line, field(r.Text))
	}
	return b
}

// parseHeader parses the header of a copy, before its end line.
func parseHeader(text string) (*compact, error) {
	header, text, ok := strings.Cut(text, "\n")
	if !ok || header != compactHeader || !strings.HasSuffix(text, "\n") {
		return nil, errors.New("not a compact policy")
	}
	c := &compact{Version: compactVersion}
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		f, err := fields(line, 3)
		if err != nil {
			return nil, err
		}
		switch {
		case f[0] == "path" && len(f) == 2:
			c.Path = f[1]
		case f[0] == "stamp" && len(f) == 2:
			if c.Stamp, err = parseStamp(f[1]); err != nil {
				return nil, err
			}
		case f[0] == "mode" && len(f) == 2:
			c.Mode = f[1]
		case f[0] == "profile" && len(f) == 2:
			c.Profile = f[1]
		case f[0] == "shell" && len(f) == 2:
			c.Shell = f[1]
		case f[0] == "runtime" && len(f) == 2:
			c.Runtime = f[1]
		case f[0] == "requirehook" && len(f) == 2 && (f[1] == "true" || f[1] == "false"):
			c.RequireHook = f[1] == "true"
		case f[0] == "secret" && len(f) == 2:
			c.Secrets = append(c.Secrets, f[1])
		case f[0] == "scope" && len(f) == 2:
			c.PathScope = append(c.PathScope, f[1])
		case f[0] == "tool" && len(f) == 3 && f[1] == "allow":
			c.Tools.Allow = append(c.Tools.Allow, f[2])
		case f[0] == "tool" && len(f) == 3 && f[1] == "deny":
			c.Tools.Deny = append(c.Tools.Deny, f[2])
		case f[0] == "programs" && len(f) == 3:
			c.Programs = append(c.Programs, config.ProgramFile{File: f[1], Text: f[2]})
		case f[0] == "rules" && len(f) == 2:
			if c.Count, err = strconv.Atoi(f[1]); err != nil || c.Count < 0 {
				return nil, fmt.Errorf("bad compact policy line %q", line)
			}
		case f[0] == "buckets" && len(f) == 2:
			if c.Buckets, err = strconv.Atoi(f[1]); err != nil || c.Buckets < 1 || c.Buckets > 1<<24 {
				return nil, fmt.Errorf("bad compact policy line %q", line)
			}
		default:
			return nil, fmt.Errorf("bad compact policy line %q", line)
		}
	}
	if c.Buckets == 0 {
		return nil, errors.New("compact policy without buckets")
	}
	return c, nil
}

// parseStamp reads what marshalHeader writes of a stamp: five decimal
// numbers, one blank apart.
func parseStamp(s string) (stamp, error) {
	var st stamp
	var n [5]int64
	for i := range n {
		word, rest, more := strings.Cut(s, " ")
		if more == (i == len(n)-1) {
			return st, fmt.Errorf("bad compact policy stamp %q", s)
		}
		v, err := strconv.ParseInt(word, 10, 64)
		if err != nil {
			return st, fmt.Errorf("bad compact policy stamp %q", s)
		}
		n[i], s = v, rest
	}
	st.Dev, st.Ino, st.Size, st.Mtime, st.Ctime = n[0], n[1], n[2], n[3], n[4]
	return st, nil
}

// fields splits a line at tabs into at most max unquoted fields.
func fields(line string, max int) ([]string, error) {
	f := make([]string, max)
	n, err := splitFields(line, f)
	return f[:n], err
}

// splitHeader returns the text of data's header before its end line and
// where the region table starts.
func splitHeader(data []byte) (text string, table int, err error) {
	i := bytes.Index(data, []byte("\nend\n"))
	if i < 0 {
		return "", 0, errors.New("compact policy without an end of its header")
	}
	return string(data[:i+1]), i + len("\nend\n"), nil
}

// compactStore reads a copy's sections for matcher.Open: each region is
// read (pread) into memory of its own, then parsed, once.
type compactStore struct {
	path    string
	f       *os.File
	size    int64
	head    []byte // the start of the copy, read when it was opened
	table   int
	buckets int

	mu      sync.Mutex
	regions map[int]string // region texts
	progs   []string
	bad     bool
}

// region returns region i's text.
func (s *compactStore) region(i int) ([]byte, error) {
	at := int64(s.table) + int64(i)*int64(tableLine)
	if at+int64(tableLine) > s.size {
		return nil, errors.New("compact policy: short region table")
	}
	entry, err := s.read(at, tableLine)
	if err != nil {
		return nil, err
	}
	off, err1 := strconv.ParseInt(string(entry[:16]), 16, 64)
	n, err2 := strconv.ParseInt(string(entry[17:25]), 16, 64)
	if err1 != nil || err2 != nil || entry[16] != ' ' || entry[25] != '\n' {
		return nil, errors.New("compact policy: bad region table")
	}
	if off < int64(s.table) || n < 0 || off > s.size || n > s.size-off {
		return nil, errors.New("compact policy: region out of range")
	}
	text, err := s.read(off, int(n))
	if err != nil {
		return nil, err
	}
	name := fmt.Appendf(nil, "region\t%d\n", i)
	if !bytes.HasPrefix(text, name) || text[len(text)-1] != '\n' {
		return nil, fmt.Errorf("compact policy: region %d is not where the table says", i)
	}
	return text[len(name):], nil
}

// read returns n bytes of the copy at off, a copy of its own: from what
// was read when the copy was opened when it holds them, else read now.
func (s *compactStore) read(off int64, n int) ([]byte, error) {
	if off+int64(n) <= int64(len(s.head)) {
		return bytes.Clone(s.head[off : off+int64(n)]), nil
	}
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("compact policy: %w", err)
	}
	return buf, nil
}

// fail marks the copy bad and removes it, so that the next load makes a
// new one from config.json.
func (s *compactStore) fail(err error) error {
	if !s.bad {
		s.bad = true
		os.Remove(s.path)
	}
	return err
}

// text returns region i's text, read once.
func (s *compactStore) text(i int) (string, error) {
	if t, ok := s.regions[i]; ok {
		return t, nil
	}
	text, err := s.region(i)
	if err != nil {
		return "", s.fail(err)
	}
	// One string for the region: the fields parsed are its substrings.
	s.regions[i] = string(text)
	return s.regions[i], nil
}

// sections parses the sections of region text; with only set, only
// the lines of the section of that name.
func (s *compactStore) sections(text, only string, filter bool) (map[string]matcher.Section, error) {
	secs, err := parseSections(text, only, filter)
	if err != nil {
		return nil, s.fail(err)
	}
	return secs, nil
}

// parseSections parses section and rule lines (see marshal); with filter,
// only those of the section named only.
func parseSections(text, only string, filter bool) (map[string]matcher.Section, error) {
	secs := map[string]matcher.Section{}
	var sectionPrefix, rulePrefix string
	if filter {
		sectionPrefix, rulePrefix = "section\t"+field(only)+"\t", "rule\t"+field(only)+"\t"
	}
	var f [10]string
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if filter && !strings.HasPrefix(line, rulePrefix) && !strings.HasPrefix(line, sectionPrefix) {
			continue
		}
		n, err := splitFields(line, f[:])
		if err != nil {
			return nil, err
		}
		switch {
		case f[0] == "section" && n == 3:
			sec := matcher.Section{Name: f[1]}
			if f[2] != "" {
				sec.Leads = strings.Split(f[2], " ")
			}
			secs[f[1]] = sec
		case f[0] == "rule" && n == 10:
			sec, ok := secs[f[1]]
			seq, err1 := strconv.Atoi(f[2])
			d, err2 := matcher.ParseDecision(f[3])
			num, err3 := strconv.Atoi(f[8])
			if !ok || err1 != nil || err2 != nil || err3 != nil || d == matcher.Default {
				return nil, fmt.Errorf("bad compact policy line %q", line)
			}
			sec.Rules = append(sec.Rules, matcher.Stored{Decision: d, Text: f[9], Key: f[4], Seq: seq,
				Source: matcher.Source{Category: f[5], Overlay: f[6], File: f[7], Line: num}})
			secs[f[1]] = sec
		default:
			return nil, fmt.Errorf("bad compact policy line %q", line)
		}
	}
	return secs, nil
}

// splitFields splits a line at tabs into f, unquoting each, and returns
// how many there were; more than len(f) is an error.
func splitFields(line string, f []string) (int, error) {
	rest := line
	for n := 0; n < len(f); n++ {
		var more bool
		var err error
		f[n], rest, more = strings.Cut(rest, "\t")
		if f[n], err = unfield(f[n]); err != nil {
			return 0, fmt.Errorf("bad compact policy line %q: %w", line, err)
		}
		if !more {
			return n + 1, nil
		}
	}
	return 0, fmt.Errorf("bad compact policy line %q: too many fields", line)
}

func (s *compactStore) Section(name string) (matcher.Section, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, err := s.text(bucketOf(name, s.buckets))
	if err != nil {
		return matcher.Section{}, err
	}
	secs, err := s.sections(text, name, true)
	if err != nil {
		return matcher.Section{}, err
	}
	if sec, ok := secs[name]; ok {
		return sec, nil
	}
	return matcher.Section{Name: name}, nil
}

func (s *compactStore) Programs() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.progs != nil {
		return s.progs, nil
	}
	text, err := s.region(s.buckets)
	if err != nil {
		return nil, s.fail(err)
	}
	progs := []string{}
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		f, err := fields(string(line), 2)
		if err != nil || len(f) != 2 || f[0] != "program" {
			return nil, s.fail(fmt.Errorf("bad compact policy line %q", line))
		}
		progs = append(progs, f[1])
	}
	s.progs = progs
	return progs, nil
}

func (s *compactStore) All() ([]matcher.Section, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []matcher.Section
	for i := range s.buckets {
		text, err := s.text(i)
		if err != nil {
			return nil, err
		}
		secs, err := s.sections(text, "", false)
		if err != nil {
			return nil, err
		}
		for _, sec := range secs {
			out = append(out, sec)
		}
	}
	return out, nil
}

// headRead is what openCompact reads of a copy at once: the header and,
// for a policy of ordinary size, the region table and the first regions.
var headRead int64 = 8 << 10

// openCompact opens the copy at path and reads its header: the copy and
// its header, or an error when it is not one. The file stays
// open while the store is in use (os.File closes it when unreachable);
// regions are read as decisions need them (see compactStore).
func openCompact(path string) (*compactStore, *compact, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, nil, err
	}
	s, c, err := readHeader(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return s, c, nil
}

func readHeader(f *os.File, path string) (*compactStore, *compact, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() <= 0 {
		return nil, nil, errors.New("compact policy: not a regular file")
	}
	head := make([]byte, min(fi.Size(), headRead))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, nil, err
	}
	if !bytes.Contains(head, []byte("\nend\n")) && int64(len(head)) < fi.Size() {
		// A long header (many tool or scope patterns): up to 64 KB.
		head = make([]byte, min(fi.Size(), 64<<10))
		if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
			return nil, nil, err
		}
	}
	text, table, err := splitHeader(head)
	if err != nil {
		return nil, nil, err
	}
	c, err := parseHeader(text)
	if err != nil {
		return nil, nil, err
	}
	s := &compactStore{path: path, f: f, size: fi.Size(), head: head, table: table,
		buckets: c.Buckets, regions: map[int]string{}}
	return s, c, nil
}

func newCompact(abs string, st stamp, f *config.File, p *matcher.Policy) *compact {
	c := &compact{
		Version: compactVersion, Path: abs, Stamp: st,
		Mode: f.Shim.Mode, Profile: f.Shim.Profile,
		Shell: f.Shim.Shell, Runtime: f.Shim.Runtime, RequireHook: f.Shim.RequireHook, Secrets: f.Shim.Secrets,
		PathScope: f.Shim.PathScope.Allow, Tools: f.Shim.Tools, Programs: f.Shim.Programs,
	}
	c.Sections, c.Count = p.Sections()
	// A managed rule is kept as its manifest line: the grant it stands
	// for (Rule.Grant) is not needed to decide.
	return c
}

// writeCompact writes the copy atomically (statefile.WriteAtomic: its
// temporary file names its writer, and the next write sweeps those of
// dead writers); errors are ignored (see loadCached).
func writeCompact(path string, c *compact) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	statefile.WriteAtomic(path, c.marshal(), 0o600)
}

// options rebuilds what optionsOf builds from the full file, the policy
// read from the copy section by section.
func (c *compact) options(configPath string, scope *Scope, s *compactStore) (built, error) {
	f := &config.File{Path: configPath, Exists: true}
	f.Shim.Mode, f.Shim.Profile = c.Mode, c.Profile
	f.Shim.Shell, f.Shim.Runtime, f.Shim.RequireHook, f.Shim.Secrets = c.Shell, c.Runtime, c.RequireHook, c.Secrets
	f.Shim.PathScope.Allow, f.Shim.Tools, f.Shim.Programs = c.PathScope, c.Tools, c.Programs
	o, err := optionsOf(f, scope)
	if err != nil {
		return built{}, err
	}
	// The never-allow rules, after the policy's: from the binary, filed
	// by section as the copy's are (never.go), so a decision reads those
	// of the programs it meets.
	ns := neverSections()
	if o.Policy, err = matcher.Open(joinStore{s, ns, c.Count}, c.Count+ns.count); err != nil {
		return built{}, err
	}
	o.neverHeld = true
	if o.programs != nil {
		o.Policy.SetPrograms(o.programs)
	}
	return o, nil
}
