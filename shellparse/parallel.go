package shellparse

import (
	"fmt"
	"strings"
)

// parallelSpec is GNU parallel's (and sem's) options.
var parallelSpec = &optSpec{flags: "0ikmqrtuvXxlgeZ", valued: "aCdEIjLnNPsS",
	long: longOpts{"arg-file=", "colsep=", "delimiter=", "eof=", "replace=", "jobs=", "max-lines=",
		"max-args=", "max-replace-args=", "max-procs=", "max-chars=", "sshlogin=", "sshloginfile=",
		"slf=", "joblog=", "results=", "res=", "tmpdir=", "workdir=", "wd=", "halt=",
		"halt-on-error=", "timeout=", "retries=", "delay=", "load=", "memfree=", "memsuspend=",
		"nice=", "block=", "block-size=", "basefile=", "bf=", "return=", "transferfile=", "tf=",
		"env=", "tagstring=", "tag-string=", "header=", "semaphorename=", "id=", "limit=",
		"sshdelay=", "termseq=", "rpl=", "seqreplace=", "trc=", "recstart=", "recend=",
		"trim=", "ssh=", "sqlmaster=", "sqlworker=", "sqlandworker=", "slotreplace=",
		"null", "keep-order", "group", "ungroup", "line-buffer", "lb", "tag", "verbose",
		"dry-run", "dryrun", "eta", "progress", "bar", "quote", "no-run-if-empty", "xargs",
		"pipe", "pipepart", "cat", "fifo", "shuf", "semaphore", "fg", "bg", "will-cite",
		"nonall", "onall", "plus", "cleanup", "transfer", "files", "compress", "silent",
		"round-robin", "roundrobin", "tty", "noswap", "use-cpus-instead-of-cores", "csv",
		"tee", "group-by=", "keep-order", "regexp", "number-of-cpus", "number-of-cores",
		"version", "help", "interactive", "linebuffer", "ctag", "ctagstring=", "color",
		"colour-failed", "color-failed", "retry-failed", "resume", "resume-failed", "ungroup"},
	writeOpts: optNames{"--joblog", "--results", "--res"}}

// parallel follows GNU parallel and sem. With a command template the
// template runs through a shell once per argument, the argument quoted
// into {} or appended; without one every argument is itself a command
// line. Arguments it cannot see (standard input, :::: files) are unknown.
func (w *walker) parallel(name string, cmd *Command, c ctx) {
	args := cmd.Args[1:]
	split := len(args)
	for i, a := range args {
		if a.Static && strings.HasPrefix(a.Text, ":::") && strings.Trim(a.Text, ":+") == "" {
			split = i
			break
		}
	}
	sp, why := parallelSpec.scan(args[:split])
	if why != "" {
		w.unknown(cmd, fmt.Sprintf("cannot tell what %s runs: %s", name, why))
		return
	}
	for _, o := range sp.opts {
		if parallelSpec.writeOpts.has(o.name) && o.value != nil {
			cmd.Redirs = append(append([]Redirect(nil), cmd.Redirs...),
				Redirect{Op: o.name, Target: *o.value, Kind: writeKind(*o.value)})
		}
	}
	template := sp.rest
	// parallel itself is reported too: its own rules apply.
	emitOwn := func() {
		own := *cmd
		w.emit(&own)
	}
	// The argument groups after the template: ::: words, :::: files.
	var groups [][]Word
	files := false
	for i := split; i < len(args); {
		sep := args[i].Text
		j := i + 1
		for j < len(args) && !(args[j].Static && strings.HasPrefix(args[j].Text, ":::") && strings.Trim(args[j].Text, ":+") == "") {
			j++
		}
		if strings.HasPrefix(sep, "::::") {
			files = true
		} else {
			groups = append(groups, args[i+1:j])
		}
		i = j
	}
	if name == "sem" {
		emitOwn()
		if len(template) > 0 {
			w.nested(name, joinWords(template), cmd, c)
		}
		return
	}
	if len(template) == 0 {
		switch {
		case files:
			w.unknown(cmd, name+" runs command lines from a file")
			return
		case len(groups) == 0:
			w.unknown(cmd, name+" runs command lines from standard input")
			return
		}
		emitOwn()
		for _, g := range groups {
			for _, a := range g {
				w.nested(name, a, cmd, c)
			}
		}
		return
	}
	emitOwn()
	script := joinWords(template)
	plain := !files && len(groups) == 1 && len(groups[0]) <= 64
	for _, o := range sp.opts {
		switch o.name {
		case "-I", "--replace", "-X", "-m", "--xargs", "-n", "--max-args", "-N", "--max-replace-args",
			"-C", "--colsep", "--pipe", "--pipepart", "--plus", "--rpl", "-L", "--max-lines", "-l":
			plain = false
		}
	}
	if plain {
		for _, a := range groups[0] {
			if !a.Static {
				plain = false
			}
		}
	}
	if plain && script.Static && !strings.Contains(strings.ReplaceAll(script.Text, "{}", ""), "{") {
		// Each argument, quoted, replaces {} or is appended.
		for _, a := range groups[0] {
			q := shellQuote(a.Text)
			line := script
			if strings.Contains(script.Text, "{}") {
				line.Text = strings.ReplaceAll(script.Text, "{}", q)
			} else {
				line.Text += " " + q
			}
			w.nested(name, line, cmd, c)
		}
		return
	}
	// Arguments not known one by one: a quoted placeholder stands for
	// each, so the template's commands are seen with a word not static.
	if script.Static {
		const arg = `"${PARALLEL_ARG}"`
		replaced := script.Text
		for _, r := range []string{"{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"} {
			replaced = strings.ReplaceAll(replaced, r, arg)
		}
		for _, o := range sp.opts {
			if (o.name == "-I" || o.name == "--replace") && o.value != nil && o.value.Static && o.value.Text != "" {
				replaced = strings.ReplaceAll(replaced, o.value.Text, arg)
			}
		}
		if replaced == script.Text {
			replaced += " " + arg
		}
		script.Text = replaced
	}
	w.nested(name, script, cmd, c)
}

// shellQuote quotes s for a shell as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
