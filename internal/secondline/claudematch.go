package secondline

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// claudeRule is one Bash(…) rule as written.
type claudeRule struct {
	pattern  string // "" for the bare tool name
	decision Decision
	re       *regexp.Regexp
}

func newClaudeRule(pattern string, d Decision) claudeRule {
	return claudeRule{pattern: pattern, decision: d, re: claudeRegexp(pattern)}
}

// claudeDecide is Claude Code's reading of a line with the rules, as its
// documentation and the expressions in its release give it: the line is
// split into its commands; each command loses the variable assignments
// and the wrappers Claude strips before matching (timeout, time, nice,
// stdbuf, nohup, command, builtin, noglob), and is read again as each
// command a runner before it runs (claudeUnwrap); deny rules are read
// before ask rules; a rule matches a command when its pattern does (see
// claudeRegexp). TestSecondLineAgents (e2e) holds this to Claude Code
// 2.1.332 on every plain row of the corpora.
func claudeDecide(rules []claudeRule, line string) Decision {
	var texts []string
	if cmds, ok := commands(line); ok {
		for _, c := range cmds {
			texts = append(texts, claudeStrip(c.text))
			texts = append(texts, claudeUnwrap(c.words)...)
		}
	} else {
		texts = []string{claudeStrip(strings.TrimSpace(line))}
		// A line the parser reads as more than commands (time is a
		// keyword to it) that is words alone still has its runners.
		if !strings.ContainsAny(line, "\n;&|<>()$`\"'\\*?[]{}~#=") {
			texts = append(texts, claudeUnwrap(strings.Fields(line))...)
		}
	}
	best := Decision("")
	for _, r := range rules {
		for _, t := range texts {
			if r.pattern == "" || r.re.MatchString(t) {
				if r.decision == Deny {
					return Deny
				}
				best = Ask
			}
		}
	}
	return best
}

// The wrappers Claude Code strips before matching a Bash rule.
// Compiled when first used: never at a process's start (the hook's).
var claudeWrappers = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^timeout[ \t]+(?:(?:--(?:foreground|preserve-status|verbose)|--(?:kill-after|signal)=[A-Za-z0-9_.+-]+|--(?:kill-after|signal)[ \t]+[A-Za-z0-9_.+-]+|-v|-[ks][ \t]+[A-Za-z0-9_.+-]+|-[ks][A-Za-z0-9_.+-]+)[ \t]+)*(?:--[ \t]+)?\d+(?:\.\d+)?[smhd]?[ \t]+`),
		regexp.MustCompile(`^time[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^nice(?:[ \t]+-n[ \t]+-?\d+|[ \t]+-\d+)?[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^stdbuf(?:[ \t]+-[ioe][LN0-9]+)+[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^nohup[ \t]+(?:--[ \t]+)?`),
		regexp.MustCompile(`^command(?:[ \t]+-p+)*(?:[ \t]+--)?[ \t]+`),
		regexp.MustCompile(`^builtin(?:[ \t]+--)?[ \t]+`),
		regexp.MustCompile(`^noglob[ \t]+`),
		regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_./:-]+[ \t]+`),
	}
})

func claudeStrip(cmd string) string {
	for changed := true; changed; {
		changed = false
		for _, re := range claudeWrappers() {
			if loc := re.FindStringIndex(cmd); loc != nil && loc[1] < len(cmd) && cmd[loc[1]] != '-' {
				cmd = cmd[loc[1]:]
				changed = true
			}
		}
	}
	return cmd
}

// claudeRegexp is how a Bash rule's content matches a command: name:*
// is the command or the command followed by a space and more; a pattern
// with * is anchored at both ends, * standing for any run of characters,
// and a single trailing " *" also matches nothing; anything else is the
// whole command, exactly.
func claudeRegexp(pattern string) *regexp.Regexp {
	if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
		return regexp.MustCompile(`(?s)^` + regexp.QuoteMeta(prefix) + `(?: .*)?$`)
	}
	if !strings.Contains(pattern, "*") {
		return regexp.MustCompile(`^` + regexp.QuoteMeta(pattern) + `$`)
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	body, tail := pattern, ""
	if strings.Count(pattern, "*") == 1 && strings.HasSuffix(pattern, " *") {
		body, tail = strings.TrimSuffix(pattern, " *"), `(?: .*)?`
	}
	for i, part := range strings.Split(body, "*") {
		if i > 0 {
			re.WriteString(".*")
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	re.WriteString(tail + "$")
	return regexp.MustCompile(re.String())
}

// claudeUnwrap returns the commands a command's runners run, as Claude
// Code 2.1.332 reads them for its rules: the words joined by one blank,
// the program by its base name (./rm is rm), and for each runner of its
// list (sudo, env, flock, nsenter, …) the command after the runner's
// options, their values (sudo -u root), its assignments (env, sudo) and
// its one operand before the program (flock FILE, taskset MASK, chrt
// PRIO, timeout DURATION, script FILE). Transcribed from the release's
// bundle (its runner sets and the options that take a value); the e2e
// test holds it to the agent.
func claudeUnwrap(words []string) []string {
	var out []string
	for depth := 0; len(words) > 0 && depth < 8; depth++ {
		name := words[0]
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		out = append(out, strings.Join(append([]string{name}, words[1:]...), " "))
		valued, operand, ok := claudeRunner(name)
		if !ok {
			break
		}
		words = words[claudeProgramAt(name, valued, operand, words):]
	}
	return out
}

// claudeRunners are the runners Claude Code reads through for its rules:
// each with the options that take a value, and whether one operand
// comes before the program. (A slice, not a map: no work at a process's
// start, the hook's.)
var claudeRunners = []struct {
	name    string
	valued  string
	operand bool
}{
	{"time", "-f -o --format --output", false},
	{"command", "", false},
	{"builtin", "", false},
	{"noglob", "", false},
	{"env", "-u -C -S -P -a --unset --chdir --split-string --argv0", false},
	{"nice", "-n --adjustment", false},
	{"nohup", "", false},
	{"sudo", "-u -g -U -C -D -h -p -r -R -t -T -a -c --user --group --other-user --close-from --chdir --host --prompt --role --chroot --type --command-timeout --auth-type --login-class", false},
	{"doas", "-a -u -C", false},
	{"stdbuf", "-i -o -e --input --output --error", false},
	{"timeout", "-k -s --kill --kill-after --signal", true},
	{"watch", "-n -s --interval --equexit --shotsdir", false},
	{"ionice", "-c -n -p -P -u --class --classdata --pid --pgid --uid", false},
	{"chrt", "-T -P -D --sched-runtime --sched-period --sched-deadline", true},
	{"setsid", "", false},
	{"taskset", "", true},
	{"strace", "-e -o -p -s -E -P -S -a -b -I -u -X -O -U --output --trace --expr --attach --string-limit --env --trace-path --columns --user --interruptible --detach-on --const-print-style --summary-sort-by --summary-syscall-overhead --summary-columns --signal --status --inject --fault --abbrev --verbose --raw --read --write --kvm --decode-pids --syscall-limit --trace-fds --stack-trace-frame-limit --argv0", false},
	{"ltrace", "-a -A -e -l -n -o -p -s -u -x -w -D -F --align --config --debug --indent --library --output --string-max --where", false},
	{"script", "-c -E -T -m -o -O -B -I --command --echo --log-timing --logging-format --output-limit --log-out --log-io --log-in", true},
	{"flock", "-w -E -c --timeout --wait --conflict-exit-code --command", true},
	{"unshare", "-R -w -S -G -l --setuid --setgid --root --wd --propagation --setgroups --monotonic --boottime --map-user --map-group --map-users --map-groups --load-interp --owner", false},
	{"nsenter", "-t -S -G --target --setuid --setgid", false},
	{"sandbox-exec", "", false},
	{"exec", "-a", false},
	{"pkexec", "--user", false},
	{"xargs", "-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --eof --replace --max-lines --max-args --max-procs --max-chars --process-slot-var", false},
}

// claudeRunner returns the runner called name, or ok false.
func claudeRunner(name string) (valued []string, operand, ok bool) {
	for _, r := range claudeRunners {
		if r.name == name {
			return strings.Fields(r.valued), r.operand, true
		}
	}
	return nil, false, false
}

// claudeProgramAt returns where the command a runner runs starts in
// words (len(words) when it names none).
func claudeProgramAt(name string, valued []string, operand bool, words []string) int {
	dashdash := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case !dashdash && w == "--":
			dashdash = true
		case !dashdash && len(w) > 1 && w[0] == '-':
			if name == "command" && strings.ContainsAny(w, "vV") {
				return len(words) // command -v names a program, runs none
			}
			if long, ok := strings.CutPrefix(w, "--"); ok {
				if !strings.Contains(long, "=") && slices.Contains(valued, w) {
					i++
				}
				continue
			}
			for j := 1; j < len(w); j++ {
				if slices.Contains(valued, "-"+w[j:j+1]) {
					if j == len(w)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		case (name == "env" || name == "sudo") && strings.Contains(w, "="):
		case operand:
			operand = false
		default:
			return i
		}
	}
	return len(words)
}
