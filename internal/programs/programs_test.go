package programs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinParses(t *testing.T) {
	tb := Builtin()
	if len(tb.Facts()) < 100 {
		t.Fatalf("built-in table has only %d facts", len(tb.Facts()))
	}
	for _, f := range tb.Facts() {
		if !f.Builtin {
			t.Errorf("%s: not marked built in", f)
		}
	}
}

var writeTargetsTests = []struct {
	in      string
	paths   []string
	unknown bool
}{
	{"cp -r a b dst", []string{"dst"}, false},
	{"cp -t dir a b", []string{"dir"}, false},
	{"cp --target-directory=dir a", []string{"dir"}, false},
	{"/bin/mv a b", []string{"b"}, false},
	{"ln -s a b", []string{"b"}, false},
	{"install -m 644 a /usr/local/bin/a", []string{"/usr/local/bin/a"}, false},
	{"install -d x y", []string{"x", "y"}, false},
	{"rsync -a src/ host:dst/", []string{"host:dst/"}, false},
	{"tee -a x y", []string{"x", "y"}, false},
	{"sed -i s/a/b/ f1 f2", []string{"f1", "f2"}, false},
	{"sed -e s/a/b/ -i.bak f", []string{"f"}, false},
	{"sed --in-place s/a/b/ f", []string{"f"}, false},
	{"sed s/a/b/ f", nil, false},
	{"go build -o bin/x ./...", []string{"bin/x"}, false},
	{"go test -coverprofile=c.out ./...", []string{"c.out"}, false},
	{"go -C sub build -o out", []string{"out"}, false},
	{"find . -delete", nil, true},
	{"find . -fprint out -name x", []string{"out"}, false},
	{"dd if=a of=/dev/sda", []string{"/dev/sda"}, false},
	{"git log --output=/tmp/x", []string{"/tmp/x"}, false},
	{"git -C repo format-patch -o out HEAD~1", []string{"out"}, false},
	{"tar xf a.tar", nil, true},
	{"tar -tf a.tar", nil, false},
	{"tar -czf out.tgz dir", []string{"out.tgz"}, false},
	{"tar czf out.tgz dir", []string{"out.tgz"}, false},
	{"tar --create --file=out.tar dir", []string{"out.tar"}, false},
	{"tar -c dir", nil, true},
	{"tar -cf - dir", nil, false},
	{"tar -rf a.tar f", []string{"a.tar"}, false},
	{"tar -tf a.tar --index-file=idx", []string{"idx"}, false},
	{"sort -o out in", []string{"out"}, false},
	{"sort -uo out in", []string{"out"}, false},
	{"touch a b", []string{"a", "b"}, false},
	{"mkdir -p a/b", []string{"a/b"}, false},
	{"rm -rf x", []string{"x"}, false},
	{"RM -rf x", []string{"x"}, false},
	{`C:\Windows\rm.EXE x`, []string{"x"}, false},
	{"chmod 755 x y", []string{"x", "y"}, false},
	{"gofmt -w a.go", []string{"a.go"}, false},
	{"gofmt -l a.go", nil, false},
	{"gawk -i inplace 1 f", []string{"f"}, false},
	{"zip -r out.zip dir", []string{"out.zip"}, false},
	{"date -s 2020-01-01", nil, false},
	{"file -C -m magic", nil, true},
	{"git status", nil, false},
	{"ls -la", nil, false},
	{"unknownprog -o x", nil, false},
}

func TestWriteTargets(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range writeTargetsTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test %q", tc.in)
		}
		seen[tc.in] = true
		paths, unknown := WriteTargets(strings.Fields(tc.in))
		if !slices.Equal(paths, tc.paths) || unknown != tc.unknown {
			t.Errorf("WriteTargets(%q) = %q, %v; want %q, %v", tc.in, paths, unknown, tc.paths, tc.unknown)
		}
	}
}

var parseErrorTests = []struct{ in, want string }{
	{"value -x", "t.txt:1: fact before the first [program] block"},
	{"[git\n", "t.txt:1: block header"},
	{"[]", "t.txt:1: empty block header"},
	{"[a b]\nhelp", "t.txt:2: help belongs in the program's own block [a]"},
	{"[a]\nfrobnicate -x", `t.txt:2: unknown kind of fact "frobnicate"`},
	{"[a]\nvalue", "t.txt:2: value needs at least 1 argument"},
	{"[a]\nvalue x", `t.txt:2: "x" is not an option`},
	{"[a]\nwrites sometimes -x", `t.txt:2: writes mode "sometimes"`},
	{"[a]\ntargets all -x", "t.txt:2: targets takes no arguments"},
	{"[a]\nalias --x -x", `t.txt:2: alias name "--x" is not a flag name`},
	{"[a]\nexec -x@", "t.txt:2: \"-x@\": empty value prefix"},
	{"[a]\nalias x -x@y", "t.txt:2: \"-x@y\": alias facts cannot limit values"},
	{"[a]\nconfig-exec nodot", `t.txt:2: "nodot" is not a configuration key`},
	{"[a]\nenv-exec 1X", `t.txt:2: "1X" is not a variable name`},
	{"[a]\n[a]", "t.txt:2: block [a] appears twice"},
	{"[a]\nrun +!", `t.txt:2: unknown kind of fact "run"`},
	{"[a]\nruns +!", `t.txt:2: "+!": only exec facts`},
	{"[a]\nvalue of=", `t.txt:2: "of=": an operand shape`},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorTests {
		_, err := Parse("t.txt", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestMergeStricterOnly: a manifest's table may add facts that make
// decisions stricter, never an alias, a value or a safe key.
func TestMergeStricterOnly(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"[mytool]\nexec --hook", true},
		{"[mytool]\nruns --plugin\nwrite --out\nwrites unknown --apply\nask --remote", true},
		{"[git push]\nexec --custom-hook", true},
		{"[mytool]\nvalue --name", false},
		{"[mytool]\noptional -x", false},
		{"[mytool]\nalias force -f", false},
		{"[git]\nconfig-safe core.pager", false},
		{"[mytool]\nhelp", false},
		{"[mytool]\nsingle-dash", false},
		{"[mytool]\nglobal-value -C", false},
	} {
		more, err := Parse("overlay/programs.txt", []byte(tc.in))
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		merged, err := Builtin().Merge(more)
		if (err == nil) != tc.ok {
			t.Errorf("Merge(%q): err = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "overlay/programs.txt:") {
			t.Errorf("Merge(%q): error %q does not name the file and line", tc.in, err)
		}
		if err == nil && len(merged.Facts()) != len(Builtin().Facts())+len(more.Facts()) {
			t.Errorf("Merge(%q): %d facts", tc.in, len(merged.Facts()))
		}
	}
	// An overlay's value-taking option never swallows the next word: it
	// might be a flag a deny rule looks for.
	more, _ := Parse("o.txt", []byte("[mytool]\nexec -x\n"))
	merged, _ := Builtin().Merge(more)
	_, b, rest := merged.Resolve("mytool", []Arg{{"-x", true}, {"--force", true}})
	toks := b.Split(rest)
	if len(toks) != 2 || toks[1].Name != "force" || !toks[0].Peeked || toks[0].Value != "--force" {
		t.Errorf("overlay option consumed its value: %+v", toks)
	}
}

func TestRoundTrip(t *testing.T) {
	tb := Builtin()
	again, err := Parse("formatted", tb.Format())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(again.Format()), string(tb.Format()); got != want {
		t.Errorf("Format does not round-trip")
	}
	if len(again.Facts()) != len(tb.Facts()) {
		t.Errorf("round trip has %d facts, want %d", len(again.Facts()), len(tb.Facts()))
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"git": "git", "/usr/bin/git": "git", "C:/Program Files/Git/bin/git.exe": "git",
		`C:\Git\bin\GIT.EXE`: "git", "git.EXE": "git", "RM": "rm", ".exe": ".exe",
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigKey(t *testing.T) {
	git := Builtin().Program("git")
	for _, tc := range []struct {
		key        string
		exec, safe bool
	}{
		{"core.pager", true, false},
		{"Core.Pager", true, false},
		{"pager.log", true, false},
		{"diff.foo.textconv", true, false},
		{"diff.a.b.command", true, false},
		{"user.name", false, true},
		{"color.ui", false, true},
		{"safe.directory", false, false},
		{"alias.p", false, false},
		{"core.sshCommand", true, false},
	} {
		exec, safe, _ := git.ConfigKey(tc.key)
		if exec != tc.exec || safe != tc.safe {
			t.Errorf("ConfigKey(%q) = %v, %v; want %v, %v", tc.key, exec, safe, tc.exec, tc.safe)
		}
	}
}

// TestCoverage: every program of the built-in manifests, and of Fuchsia's,
// has a block: it was reviewed.
func TestCoverage(t *testing.T) {
	files, err := filepath.Glob("../manifest/defaults/permissions/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in manifests: %v", err)
	}
	want := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			w := strings.Fields(line)
			if len(w) == 0 || strings.HasPrefix(w[0], "#") {
				continue
			}
			want[Name(w[0])] = fmt.Sprintf("%s:%d", f, i+1)
		}
	}
	for _, p := range []string{"git", "go", "make", "npm", "cargo", "tar", "find", "sed", "awk", "less", "sort",
		"rg", "grep", "jiri", "fx", "ffx", "ninja", "gn", "bazel", "python", "python3", "cipd", "jj", "bb",
		"cp", "mv", "ln", "install", "rsync", "tee", "touch", "mkdir", "rm", "date", "file", "man", "ssh", "zip"} {
		want[p] = "Fuchsia's manifests and issue 15"
	}
	for p, where := range want {
		if Builtin().Program(p) == nil {
			t.Errorf("program %s (%s) has no block in programs.txt", p, where)
		}
	}
}

func TestWithOverlays(t *testing.T) {
	tb, err := WithOverlays(
		File{"a/.agents/config/programs.txt", []byte("[mytool]\nexec --hook\n")},
		File{"b/.agents/config/programs.txt", []byte("[mytool deploy]\nwrite --log\n")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tb.Facts()) - len(Builtin().Facts()); n != 2 {
		t.Errorf("merged %d facts, want 2", n)
	}
	_, err = WithOverlays(
		File{"a/programs.txt", []byte("[mytool]\nvalue --name\n")},
		File{"b/programs.txt", []byte("[mytool]\nfrob\n")},
	)
	if err == nil || !strings.Contains(err.Error(), "a/programs.txt:2:") || !strings.Contains(err.Error(), "b/programs.txt:2:") {
		t.Errorf("WithOverlays errors = %v, want both files' lines", err)
	}
}

// TestLazy: the built-in table parsed program by program knows what the
// whole table knows.
func TestLazy(t *testing.T) {
	full, err := parse("programs.txt", []byte(builtinText), true)
	if err != nil {
		t.Fatal(err)
	}
	lz := &Table{lz: newLazy("programs.txt", builtinText)}
	facts := func(p *Program, subs []string) string {
		var sb strings.Builder
		blocks := []*Block{p.Root}
		for _, k := range subs {
			blocks = append(blocks, p.Sub(k))
		}
		for _, b := range blocks {
			for _, f := range b.Facts() {
				sb.WriteString(f.String() + "\n")
			}
		}
		return sb.String()
	}
	for _, name := range full.Programs() {
		subs := slices.Sorted(maps.Keys(full.Program(name).subs))
		if got, want := facts(lz.Program(name), subs), facts(full.Program(name), subs); got != want {
			t.Errorf("program %s parsed alone:\n%s\nwhole table:\n%s", name, got, want)
		}
	}
	if lz.Program("no-such-program") != nil || lz.Program("git").Sub("no-such-sub") != nil {
		t.Error("unknown program or subcommand found")
	}
}

// TestBuiltinHeaders: the embedded table spells every block header as its
// key, once, which the lazy lookup relies on (it searches for "[key]").
func TestBuiltinHeaders(t *testing.T) {
	seen := map[string]bool{}
	for i, line := range strings.Split(builtinText, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		key := blockKey(line)
		if line != "["+key+"]" {
			t.Errorf("programs.txt:%d: header %q is not spelled as its key %q", i+1, line, key)
		}
		if seen[key] {
			t.Errorf("programs.txt:%d: block %q again", i+1, key)
		}
		seen[key] = true
	}
	if len(seen) < 100 {
		t.Fatalf("only %d blocks", len(seen))
	}
	// Every block is found, with the facts the whole parse gives it.
	lazy, full := &Table{lz: newLazy("programs.txt", builtinText)}, Builtin().all()
	for key := range seen {
		prog, sub, _ := strings.Cut(key, " ")
		lp, fp := lazy.Program(prog), full.Program(prog)
		if lp == nil || fp == nil {
			t.Errorf("%s: lazy %v, full %v", prog, lp != nil, fp != nil)
			continue
		}
		if sub == "" {
			if got, want := fmt.Sprint(lp.Root.Facts()), fmt.Sprint(fp.Root.Facts()); got != want {
				t.Errorf("[%s]: lazy facts\n%s\nfull\n%s", key, got, want)
			}
		}
	}
	if lazy.Program("no-such-program") != nil {
		t.Error("a program without a block was found")
	}
}

// TestRunsEnv: the variables that change what any program runs, by name
// and by prefix, and names that only look like them.
func TestRunsEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"PATH", true}, {"PATHX", true}, {"ENV", true}, {"LD_PRELOAD", true}, {"DYLD_INSERT_LIBRARIES", true},
		{"BASH_ENV", true}, {"BASH_FUNC_ls%%", true}, {"HOME", true}, {"XDG_CONFIG_HOME", true},
		{"PAGER", true}, {"GCONV_PATH", true}, {"GLIBC_TUNABLES", true}, {"path", true},
		{"ENV_VAR", false}, {"FOO", false}, {"MYPATH", false}, {"LANG", false}, {"GIT_DIR", false}, {"LDX", false},
	} {
		if got := RunsEnv(tc.name); got != tc.want {
			t.Errorf("RunsEnv(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEnvRuns: a program's env-runs names, as names and as prefixes, for
// the program's subcommands too.
func TestEnvRuns(t *testing.T) {
	tbl := Builtin()
	for _, tc := range []struct {
		prog, sub, name string
		want            bool
	}{
		{"git", "status", "GIT_DIR", true},
		{"git", "status", "GIT_CONFIG_COUNT", true},
		{"git", "status", "FOO", false},
		{"go", "test", "GOFLAGS", true},
		{"go", "test", "GOOS", false},
		{"cargo", "test", "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", true},
		{"npm", "test", "npm_config_script_shell", true},
	} {
		b := tbl.Program(tc.prog).Deepest(1, func(int) (string, bool) { return tc.sub, true })
		if got := b.EnvRuns(tc.name) != nil; got != tc.want {
			t.Errorf("[%s %s] EnvRuns(%q) = %v, want %v", tc.prog, tc.sub, tc.name, got, tc.want)
		}
	}
}
