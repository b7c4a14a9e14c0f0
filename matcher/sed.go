package matcher

import "strings"

// sedFloors floors sed invocations whose script runs commands (GNU sed's e
// command and s///e) or writes files (w, W, s///w), or that cannot be read
// (sed -f, a script not known statically).
func (c *call) sedFloors() {
	args := c.words[1:]
	var scripts []string
	explicit, taken := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			if !explicit && !taken || strings.HasPrefix(a.Text, "-") {
				c.blockRuns("sed script is not known statically: %s", a.Text)
				return
			}
			continue
		}
		t := a.Text
		next := func() (string, bool) {
			if i+1 >= len(args) || !args[i+1].Static {
				return "", false
			}
			i++
			return args[i].Text, true
		}
		switch {
		case t == "--":
			if !explicit && i+1 < len(args) {
				if !args[i+1].Static {
					c.blockRuns("sed script is not known statically: %s", args[i+1].Text)
					return
				}
				scripts = append(scripts, args[i+1].Text)
			}
			i = len(args)
		case strings.HasPrefix(t, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(t, "--expression="))
			explicit = true
		case t == "--expression":
			s, ok := next()
			if !ok {
				c.blockRuns("sed script is not known statically")
				return
			}
			scripts = append(scripts, s)
			explicit = true
		case t == "--file" || strings.HasPrefix(t, "--file="):
			c.blockRuns("sed reads its script from a file")
			return
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && t[0] == '-':
		cluster:
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'e':
					s := t[j+1:]
					if s == "" {
						var ok bool
						if s, ok = next(); !ok {
							c.blockRuns("sed script is not known statically")
							return
						}
					}
					scripts = append(scripts, s)
					explicit = true
					break cluster
				case 'f':
					c.blockRuns("sed reads its script from a file")
					return
				case 'i', 'l':
					break cluster // attached value
				}
			}
		default:
			if !explicit && !taken {
				scripts = append(scripts, t)
				taken = true
			}
		}
	}
	for _, s := range scripts {
		if sedRuns(s) {
			c.floorRuns("sed script runs commands or writes files: %s", s)
			// GNU sed's e COMMAND runs COMMAND: a deny inside is a deny.
			sedScan(s, func(cmd string) {
				c.nested = append(c.nested, nested{script: cmd, via: "sed e"})
			})
			return
		}
	}
}

// sedRuns reports whether a sed script has a command that executes a
// program or writes a file. What it cannot read counts as doing so.
func sedRuns(s string) bool { return sedScan(s, nil) }

// sedScan is sedRuns, calling exec with the command of each e command it
// reads before it stops.
func sedScan(s string, exec func(cmd string)) bool {
	i := 0
	skipTo := func(stop string) {
		for i < len(s) && !strings.ContainsRune(stop, rune(s[i])) {
			i++
		}
	}
	// delimited skips a delimited part (regex or replacement), escape-aware.
	delimited := func(d byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			}
			i++
		}
		return false
	}
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';':
			i++
			continue
		}
		// Address: lines, $, /regex/, \cregexc, ranges, steps, negation.
	addr:
		for i < len(s) {
			switch ch := s[i]; {
			case ch >= '0' && ch <= '9', ch == '$', ch == ',', ch == '!', ch == ' ', ch == '~', ch == '+':
				i++
			case ch == '/':
				i++
				if !delimited('/') {
					return true
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case ch == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if !delimited(d) {
					return true
				}
			default:
				break addr
			}
		}
		if i >= len(s) {
			return false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', 'a', 'i', 'c':
			skipTo("\n")
		case ':', 'b', 't', 'T', 'v', 'q', 'Q', 'l', 'L':
			skipTo(";\n}")
		case 'r', 'R':
			skipTo("\n") // reads a file: harmless
		case 'e':
			start := i
			skipTo("\n")
			if cmd := strings.TrimSpace(s[start:i]); cmd != "" && exec != nil {
				exec(cmd)
			}
			return true
		case 'w', 'W':
			return true
		case 's', 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return true
			}
			d := s[i]
			i++
			// Two delimited parts: the pattern (or source set),
			// then the replacement (or target set).
			if !delimited(d) {
				return true
			}
			if !delimited(d) {
				return true
			}
			if cmd == 'y' {
				continue
			}
			for i < len(s) && !strings.ContainsRune(";\n}", rune(s[i])) {
				switch s[i] {
				case 'e', 'w', 'W':
					return true
				}
				i++
			}
		default:
			return true
		}
	}
	return false
}
