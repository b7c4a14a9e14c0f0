package programs

import (
	"slices"
	"strings"
)

// WriteTargets returns the paths a command writes according to the
// built-in table: the destination of cp, mv, ln, install and rsync, the
// files of tee, touch, mkdir, rm and sed -i, the values of -o FILE,
// --output=FILE and the like. unknown is set when the command writes but
// the table cannot say where (find -delete, tar -x). argv is the whole
// command, program first, after runners are unwrapped; redirections are
// not part of it.
func WriteTargets(argv []string) (paths []string, unknown bool) {
	return Builtin().WriteTargets(argv)
}

// WriteTargets is the package function for a table of one's own.
func (t *Table) WriteTargets(argv []string) (paths []string, unknown bool) {
	if len(argv) == 0 {
		return nil, false
	}
	args := make([]Arg, len(argv)-1)
	for i, a := range argv[1:] {
		args[i] = Arg{Text: a, Static: true}
	}
	ts, unknown := t.Targets(argv[0], args)
	for _, w := range ts {
		paths = append(paths, w.Path)
	}
	return paths, unknown
}

// Target is a file a command writes, as the table reads its words.
type Target struct {
	// Path is the file as written; Static says it is known (else Path
	// is the word as written).
	Path   string
	Static bool
	// How is the option that names it, as spelled on the command line
	// (-o, --output, -fprint), or "" for an operand the program writes
	// (cp's destination, tee's files) or an operand of a known shape
	// (dd of=).
	How string
	// Output is set for an output option (go build -o): a relative path
	// that stays in the working directory is where the program writes
	// as a matter of course.
	Output bool
	// Edit is set for a file the program rewrites in place (writes
	// operands: sed -i, perl -i, gofmt -w): it then holds its own
	// content, changed.
	Edit bool
}

// Targets is WriteTargets for the words of a command as the shell gives
// them (prog, then its arguments), each target with how the command
// names it.
func (t *Table) Targets(prog string, args []Arg) (ts []Target, unknown bool) {
	_, b, rest := t.Resolve(prog, args)
	if b == nil {
		return nil, false
	}
	// The subcommand words are operands of the split, not targets.
	skip := 0
	if b.parent != nil {
		skip = strings.Count(b.Key, " ")
	}
	var buf [8]Token
	toks := b.AppendSplit(buf[:0], rest)
	var operands []Target
	writesOperands, wroteByOption, archive := false, false, false
	archivePath, archiveKnown := Target{}, false
	dir, into := Target{}, false
	scriptGiven := false
	script := b.ScriptFact()
	for _, tok := range toks {
		switch tok.Kind {
		case Operand:
			if tok.Arg < skip {
				continue
			}
			w := rest[tok.Arg]
			if effects, v := b.Shape(w.Text); effects != nil {
				for _, e := range effects {
					if e.Kind == Write || e.Kind == Output {
						ts = append(ts, Target{Path: v, Static: w.Static, Output: e.Kind == Output})
					}
				}
				continue
			}
			operands = append(operands, Target{Path: w.Text, Static: w.Static})
		case Option:
			if tok.Opt == nil {
				continue
			}
			if slices.Contains(tok.Opt.Canon, "file") && tok.HasValue {
				archivePath, archiveKnown = Target{Path: tok.Value, Static: tok.ValueStatic}, true
			}
			if slices.Contains(tok.Opt.Canon, "directory") && tok.HasValue {
				dir = Target{Path: tok.Value, Static: tok.ValueStatic}
			}
			if script != nil && scriptOption(script.Arg, tok.Name) {
				scriptGiven = true
			}
			for _, e := range tok.Opt.Effects {
				if !e.Applies(tok.Value, tok.ValueStatic) {
					continue
				}
				switch e.Kind {
				case Write, Output:
					wroteByOption = true
					if tok.HasValue {
						ts = append(ts, Target{Path: tok.Value, Static: tok.ValueStatic, How: spelled(b, tok), Output: e.Kind == Output})
					} else {
						unknown = true
					}
				case Writes:
					switch e.Mode {
					case "operands":
						writesOperands = true
					case "unknown":
						unknown = true
					case "archive":
						archive = true
					case "into":
						into = true
					}
				}
			}
		}
	}
	if archive {
		if archiveKnown && archivePath.Path != "-" {
			ts = append(ts, archivePath)
		} else if !archiveKnown {
			unknown = true
		}
	}
	if into {
		// Extracting into a directory: the directory option's, else
		// the working directory, where the protected paths of a
		// checkout may be among what is written.
		if d := strings.TrimRight(dir.Path, "/"); d == "" || d == "." || !dir.Static {
			unknown = true
		} else {
			ts = append(ts, dir)
		}
	}
	if script != nil && !scriptGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	mode := ""
	if f := b.TargetsFact(); f != nil {
		mode = f.Arg
	}
	if writesOperands {
		mode = "all"
	}
	if writesOperands {
		for i := range operands {
			operands[i].Edit = true
		}
	}
	switch mode {
	case "all":
		ts = append(ts, operands...)
	case "last":
		if len(operands) > 0 && !wroteByOption {
			ts = append(ts, operands[len(operands)-1])
		}
	case "first":
		if len(operands) > 0 {
			ts = append(ts, operands[0])
		}
	case "after-first":
		if len(operands) > 1 {
			ts = append(ts, operands[1:]...)
		}
	}
	if writesOperands && len(operands) == 0 {
		unknown = true
	}
	return ts, unknown
}

// spelled is an option token as a command line spells it.
func spelled(b *Block, tok Token) string {
	if tok.Long && b.prog.SingleDash == nil {
		return "--" + tok.Name
	}
	return "-" + tok.Name
}

// scriptOption reports whether an option gives a LANG program its script
// (so that the first operand is not one): sed -e/-f, awk -f/-e.
func scriptOption(lang, name string) bool {
	switch lang {
	case "sed":
		return name == "e" || name == "f" || name == "expression" || name == "file"
	case "awk":
		return name == "f" || name == "e" || name == "file" || name == "source" || name == "exec"
	}
	return false
}
