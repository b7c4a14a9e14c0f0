package secondline

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The spellings every compiler draws on: where programs live, which
// runners put a command after their own words, and the orders in which a
// command's flags and operands may come.

// binDirs are the directories a program is commonly run from by path.
var binDirs = []string{"/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/local/sbin", "/opt/homebrew/bin"}

// gitCore are the directories of git's own programs (git-push).
var gitCore = []string{"/usr/lib/git-core", "/usr/libexec/git-core"}

// programSpellings returns the words that run prog: its name, the name in
// each of binDirs (and git's exec path for git), and ./prog. The matcher
// reads each as prog (TestProgramSpellings).
func programSpellings(prog string) []string {
	out := []string{prog}
	for _, d := range binDirs {
		out = append(out, d+"/"+prog)
	}
	if prog == "git" {
		for _, d := range gitCore {
			out = append(out, d+"/git")
		}
	}
	return append(out, "./"+prog)
}

// dashedSpellings returns the words that run git's subcommand sub as a
// program of its own (git-push, /usr/lib/git-core/git-push).
func dashedSpellings(sub string) []string {
	out := []string{"git-" + sub}
	for _, d := range gitCore {
		out = append(out, d+"/git-"+sub)
	}
	return out
}

// runner is a program (or a program and its words) that runs the command
// given after its own words: words are the alternatives of each of those
// words, the runner's name first (nice -n 10: nice, -n, -20…19). Every
// runner here is one the matcher unwraps, with every choice of its words
// (TestRunners decides each with the matcher).
type runner struct {
	words [][]string
}

// runnerNumbers returns every adjustment nice takes (-20 to 19), niceDash the
// positive ones as one word (nice -10); ioniceClasses every class of
// ionice.
func runnerNumbers() (v, d, c []string) {
	for n := -20; n <= 19; n++ {
		v = append(v, strconv.Itoa(n))
		if n >= 0 {
			d = append(d, "-"+strconv.Itoa(n))
		}
	}
	for n := 0; n <= 3; n++ {
		c = append(c, "-c"+strconv.Itoa(n))
	}
	return v, d, c
}

// loaders are the dynamic loaders, which run the program they are given.
var loaders = []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-x86-64.so.2",
	"/usr/lib/ld-linux-x86-64.so.2", "/usr/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux.so.2"}

// runners is built when first used: never at a process's start.
var runners = sync.OnceValue(func() []runner {
	niceValues, niceDash, ioniceClasses := runnerNumbers()
	return []runner{
		// Runners that need no word of their own (see plainRunners).
		{words: [][]string{{"env", "command", "builtin", "exec", "nohup", "time", "sudo", "doas", "setsid", "nice",
			"busybox", "unbuffer", "catchsegv", "eatmydata", "fakeroot", "rlwrap", "valgrind", "pkexec", "firejail",
			"systemd-run", "unshare", "chronic", "ifne", "ccache", "distcc", "linux32", "linux64"}}},
		{words: [][]string{loaders}},
		// With one word.
		{words: [][]string{{"env"}, {"-i", "--ignore-environment", "--"}}},
		{words: [][]string{{"command"}, {"-p", "--"}}},
		{words: [][]string{{"exec"}, {"-c", "-l"}}},
		{words: [][]string{{"nohup", "nice"}, {"--"}}},
		{words: [][]string{{"time"}, {"-p", "--"}}},
		{words: [][]string{{"sudo"}, {"-E", "-H", "-n", "--"}}},
		{words: [][]string{{"doas"}, {"-n"}}},
		{words: [][]string{{"setsid"}, {"-f", "-w", "-c"}}},
		{words: [][]string{{"unbuffer"}, {"-p"}}},
		{words: [][]string{{"valgrind"}, {"-q"}}},
		{words: [][]string{{"systemd-run"}, {"--user", "-q", "-t"}}},
		{words: [][]string{{"unshare"}, {"-r", "-m", "-U", "-n", "-p", "-f"}}},
		{words: [][]string{{"setarch"}, {"x86_64", "i386", "i686", "aarch64", "linux32", "linux64"}}},
		{words: [][]string{{"chroot"}, {"/"}}},
		{words: [][]string{{"nice"}, niceDash}},
		{words: [][]string{{"ionice"}, ioniceClasses}},
		{words: [][]string{{"jiri"}, {"runp"}}},
		{words: [][]string{{"perf"}, {"stat"}}},
		// With two.
		{words: [][]string{{"nice"}, {"-n"}, niceValues}},
		{words: [][]string{{"ionice"}, {"-c"}, {"0", "1", "2", "3"}}},
		{words: [][]string{{"git"}, {"bisect"}, {"run"}}},
		{words: [][]string{{"perf"}, {"stat"}, {"--"}}},
	}
})

// plainRunners are the runners that need no word of their own.
func plainRunners() []string { return runners()[0].words[0] }

// steps are the runners with words of their own, each as its word
// positions.
func steps() [][][]string {
	var out [][][]string
	for _, r := range runners()[1:] {
		out = append(out, r.words)
	}
	return out
}

// item is one thing a command must carry beyond its program and
// subcommand words: a flag (any spelling), an operand, or all the
// required flags as one cluster of short letters (rm -rf).
type item struct {
	words []string // the single-word spellings
	// flags are the flags the item stands for; operand is set for an
	// operand.
	flags   []Flag
	operand *Operand
}

// flagWords returns a flag's one-word spellings: -f, --force, and -f in a
// cluster with one letter of extra beside it (-fv, -vf).
func flagWords(f Flag, extra []byte) []string {
	out := f.Spellings()
	out = append(out, f.abbrevs()...)
	for _, c := range f.Shorts {
		for _, e := range extra {
			if e == c {
				continue
			}
			out = append(out, "-"+string([]byte{c, e}), "-"+string([]byte{e, c}))
		}
	}
	return out
}

// clusters returns the clusters of short letters holding one spelling of
// every flag of fs, in every order, with at most one letter of extra
// besides; nil when a flag has no short spelling.
func clusters(fs []Flag, extra []byte) []string {
	var letterSets [][]byte
	var rec func(i int, cur []byte)
	rec = func(i int, cur []byte) {
		if i == len(fs) {
			letterSets = append(letterSets, slices.Clone(cur))
			return
		}
		for _, c := range fs[i].Shorts {
			if !slices.Contains(cur, c) {
				rec(i+1, append(cur, c))
			}
		}
	}
	rec(0, nil)
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, set := range letterSets {
		for _, perm := range permutations(len(set)) {
			w := make([]byte, len(set))
			for i, j := range perm {
				w[i] = set[j]
			}
			add("-" + string(w))
			for _, e := range extra {
				if slices.Contains(set, e) {
					continue
				}
				for at := 0; at <= len(w); at++ {
					add("-" + string(slices.Insert(slices.Clone(w), at, e)))
				}
			}
		}
	}
	return out
}

// orders returns the sequences of items a shape's commands may carry
// after the subcommand: every order of its flags (one word each) and
// operands, and, when it requires more than one flag, every order of one
// cluster of them and its operands. Nil when there are too many items to
// order (more than four).
func orders(s Shape) [][]item {
	var single []item
	for _, f := range s.Flags {
		single = append(single, item{words: flagWords(f, s.Extra), flags: []Flag{f}})
	}
	var ops []item
	for i := range s.Operands {
		o := &s.Operands[i]
		ops = append(ops, item{words: o.Spellings(), operand: o})
	}
	sets := [][]item{append(slices.Clone(single), ops...)}
	if len(s.Flags) > 1 {
		if cl := clusters(s.Flags, s.Extra); cl != nil {
			sets = append(sets, append([]item{{words: cl, flags: s.Flags}}, ops...))
		}
	}
	var out [][]item
	for _, set := range sets {
		if len(set) > 4 {
			return nil
		}
		for _, perm := range permutations(len(set)) {
			seq := make([]item, len(set))
			for i, j := range perm {
				seq[i] = set[j]
			}
			out = append(out, seq)
		}
	}
	return out
}

// permutations returns every order of 0..n-1, the identity first.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for at := len(p); at >= 0; at-- {
			q := slices.Insert(slices.Clone(p), at, n-1)
			out = append(out, q)
		}
	}
	return out
}

// describe spells a shape back as a manifest line.
func describe(s Shape) string {
	return strings.TrimSpace(s.Text)
}

// abbrevs returns the abbreviations of the flag's long spellings that
// getopt and git accept, of three letters or more: --har for --hard. The
// matcher reads any of them as the flag for deny rules.
func (f Flag) abbrevs() []string {
	var out []string
	for _, l := range f.Longs {
		for n := 3; n < len(l); n++ {
			out = append(out, f.Dash+l[:n])
		}
	}
	return out
}
