package shellparse

import (
	"bytes"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary renders commands compactly: the nesting chain, then argv with
// words that are not static as ?word, then redirections as op+target:kind,
// then !unknown.
func summary(cmds []*Command) []string {
	var out []string
	for _, c := range cmds {
		var sb strings.Builder
		for _, f := range c.Nesting {
			sb.WriteString(f.Kind + " › ")
		}
		for _, a := range c.Assigns {
			sb.WriteString(a.Name + "=" + mark(a.Value) + " ")
		}
		for i, w := range c.Args {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(mark(w))
		}
		for _, r := range c.Redirs {
			if len(c.Args) > 0 && r.Op == path.Base(c.Args[0].Text) && r.Op != "script" {
				// A file the program writes as an operand (rm's,
				// tee's): TestTableWrites holds them. (script's
				// operand is its runner's own redirection.)
				continue
			}
			sb.WriteString(" " + r.Op + mark(r.Target) + ":" + r.Kind.String())
		}
		if c.Unknown != "" {
			sb.WriteString(" !" + c.Unknown)
		}
		out = append(out, strings.TrimSpace(sb.String()))
	}
	return out
}

func mark(w Word) string {
	if w.Static {
		return w.Text
	}
	return "?" + w.Text
}

var parseTests = []struct {
	in   string
	want []string
}{
	// Lists, pipelines and background jobs: every part runs.
	{"git status; rm -rf /", []string{"git status", "rm -rf /"}},
	{"a && b || c | d |& e & f", []string{"a", "b", "c", "d", "e", "f"}},
	{"echo hi #\ngit push --force", []string{"echo hi", "git push --force"}},
	{"ls # rm -rf /", []string{"ls"}},
	{"git push \\\n--force", []string{"git push --force"}},
	{"git\tpush\t--force", []string{"git push --force"}},
	{"! rm x", []string{"rm x"}},

	// Compound commands, dead branches included.
	{"(cd /tmp && rm -rf /)", []string{"( ) › cd /tmp", "( ) › rm -rf /"}},
	{"{ a; b; }", []string{"a", "b"}},
	{"while false; do git reset --hard; done", []string{"false", "git reset --hard"}},
	{"until a; do b; done", []string{"a", "b"}},
	{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
	{"for f in $(ls); do rm $f; done", []string{"$( ) › ls", "rm ?$f"}},
	{"for ((i=$(a); i<3; i++)); do b; done", []string{"!arithmetic evaluates the output of a command substitution", "$( ) › a", "b"}},
	{"case $(a) in x) b;; $(c)) d;; esac", []string{"$( ) › a", "b", "$( ) › c", "d"}},
	{"[[ -f $(a) ]] && b", []string{"$( ) › a", "b"}},
	{"(( x = $(a) ))", []string{"!arithmetic evaluates the output of a command substitution", "$( ) › a"}},
	{"let x=$(a)", []string{"!arithmetic evaluates the output of a command substitution", "$( ) › a"}},
	{"time git push", []string{"git push"}},
	{"coproc rm -rf /", []string{"rm -rf /"}},
	{"f() { rm -rf /; }; f", []string{"function f › rm -rf /", "f"}},
	{"function ls { rm -rf ~; }", []string{"function ls › rm -rf ~"}},
	{"select x in a b; do c; done", []string{"c"}},

	// Substitutions wherever they appear.
	{"$(git push -f)", []string{"$( ) › git push -f", "?$(git push -f)"}},
	{`echo "$(a)"`, []string{"$( ) › a", `echo ?"$(a)"`}},
	{"echo \"`a`\"", []string{"` ` › a", "echo ?\"`a`\""}},
	{"cat <(a) >(b)", []string{"<( ) › a", ">( ) › b", "cat ?<(a) ?>(b)"}},
	{"x=$(a) y=${z:-$(b)} c", []string{"$( ) › a", "$( ) › b", "x=?$(a) y=?${z:-$(b)} c"}},
	{"echo ${x:=$(a)} $(( $(b) + 1 )) ${arr[$(c)]}", []string{"$( ) › a", "$( ) › b", "$( ) › c",
		"echo ?${x:=$(a)} ?$(( $(b) + 1 )) ?${arr[$(c)]} !arithmetic evaluates the output of a command substitution"}},
	{"a > $(b)", []string{"$( ) › b", "a >?$(b):write"}},
	{"echo $(echo $(rm x))", []string{"$( ) › $( ) › rm x", "$( ) › echo ?$(rm x)", "echo ?$(echo $(rm x))"}},
	{`echo "\$(rm -rf /)"`, []string{"echo $(rm -rf /)"}},
	{`echo '$(rm -rf /)'`, []string{"echo $(rm -rf /)"}},
	{"export X=$(a)", []string{"$( ) › a", "X=?$(a) export"}},
	{"local -r y=1", []string{"y=1 local -r"}},

	// Here-documents: unquoted ones expand, quoted ones are data.
	{"cat <<EOF\nrm -rf /\nEOF", []string{"cat <<rm -rf /\n:read"}},
	{"cat <<'EOF'\n$(rm -rf /)\nEOF", []string{"cat <<$(rm -rf /)\n:read"}},
	{"cat <<EOF\n$(rm -rf /)\nEOF", []string{"$( ) › rm -rf /", "cat <<?$(rm -rf /)\n:read"}},
	{"cat <<\\EOF\n$(rm)\nEOF", []string{"cat <<$(rm)\n:read"}},
	{"cat <<EOF\n\\$(rm)\nEOF", []string{"cat <<$(rm)\n:read"}},

	// Quote removal and literal brace expansion.
	{`'r'm -rf /`, []string{"rm -rf /"}},
	{`\rm -rf /`, []string{"rm -rf /"}},
	{`"rm" -rf /`, []string{"rm -rf /"}},
	{`$'\x72m' $'-\162f' $'\u002f'`, []string{"rm -rf /"}},
	{`$'a\tb\n' $'\cA' $'x\0y'`, []string{"a\tb\n \x01 x"}},
	{`g"i"t push '--force'`, []string{"git push --force"}},
	{"{rm,-rf,/}", []string{"rm -rf /"}},
	{"git push {--force,origin}", []string{"git push --force origin"}},
	{"echo {1..3}", []string{"echo 1 2 3"}},
	{"echo {3..1} {a..c} {01..3} {1..7..3}", []string{"echo 3 2 1 a b c 01 02 03 1 4 7"}},
	{"echo x{a,b{1,2}}y {r,}m", []string{"echo xay xb1y xb2y rm m"}},
	{`{r,"m"} -rf /`, []string{"r m -rf /"}},
	{"echo {1..100000}", []string{"echo ?{1..100000}"}},
	{"echo {1..4000} {1..4000}", []string{"echo " + seqWords(1, 4000) + " ?{1..4000}"}},
	{"echo '{a,b}'", []string{"echo {a,b}"}},
	{"rm${IFS}-rf${IFS}/", []string{"?rm${IFS}-rf${IFS}/"}},

	// Redirections.
	{"echo x > f", []string{"echo x >f:write"}},
	{"echo x >> f 2>&1", []string{"echo x >>f:write 2>&1:fd-dup"}},
	{"echo x >| f", []string{"echo x >|f:write"}},
	{"echo x &> f", []string{"echo x &>f:write"}},
	{"echo x &>> f", []string{"echo x &>>f:write"}},
	{"echo x >& f", []string{"echo x >&f:write"}},
	{"echo x >&2 2>&-", []string{"echo x >&2:fd-dup 2>&-:fd-dup"}},
	{"cat < f <> g", []string{"cat <f:read <>g:write"}},
	{"ls 2>/dev/null >/dev/stderr", []string{"ls 2>/dev/null:/dev/null >/dev/stderr:/dev/null"}},
	{"exec 3> out.txt", []string{"exec 3>out.txt:write"}},
	{"> f", []string{">f:write"}},
	{"{ a; b; } > f", []string{"a >f:write", "b >f:write"}},
	{`ls > "$OUT"`, []string{`ls >?"$OUT":write`}},
	{"cat <<< 'x'", []string{"cat <<<x:read"}},

	// Runners are unwrapped.
	{"env git push", []string{"env › git push"}},
	{"env -u HOME -i FOO=1 git clean", []string{"env › FOO=1 git clean"}},
	{"env -S 'rm -rf /'", []string{"env › rm -rf /"}},
	{"env --split-string='git push -f' x", []string{"env › git push -f x"}},
	{"env", []string{"env"}},
	{"env --frobnicate git push", []string{"env --frobnicate git push !cannot tell what env runs: unknown option --frobnicate"}},
	{"command git push -f", []string{"command › git push -f"}},
	{"command -v rm", []string{"command -v rm"}},
	{"builtin command git reset --hard", []string{"builtin › command › git reset --hard"}},
	{"exec -a x rm -rf /", []string{"exec › rm -rf /"}},
	{"nice -n 10 a", []string{"nice › a"}},
	{"nice -10 a", []string{"nice › a"}},
	{"nohup a > /dev/null 2>&1 &", []string{"nohup › a >/dev/null:/dev/null 2>&1:fd-dup"}},
	{"timeout -s KILL 5 a", []string{"timeout › a"}},
	{"timeout --kill-after=1 5s a", []string{"timeout › a"}},
	{"/usr/bin/time -o t.txt a", []string{"time › a -ot.txt:write"}},
	{"stdbuf -oL -e0 a", []string{"stdbuf › a"}},
	{"sudo a", []string{"sudo › a"}},
	{"sudo -u root -- rm -rf /", []string{"sudo › rm -rf /"}},
	{"sudo -E env FOO=1 a", []string{"sudo › env › FOO=1 a"}},
	{"sudo -l rm", []string{"sudo -l rm"}},
	{"doas -u root a", []string{"doas › a"}},
	{"ionice -c3 setsid a", []string{"ionice › setsid › a"}},
	{"ionice -p 42", []string{"ionice -p 42"}},
	{"busybox rm -rf /", []string{"busybox › rm -rf /"}},
	{"xargs git push --force < /dev/null", []string{"xargs › git push --force ?{xargs input} </dev/null:read"}},
	{"echo origin | xargs -n1 git push -f", []string{"echo origin", "xargs › git push -f origin"}},
	{"xargs rm -rf <<< /", []string{"xargs › rm -rf / <<</:read"}},
	{"xargs -0 rm -rf <<< /", []string{"xargs › rm -rf ?{xargs input} <<</:read"}},
	{"echo / | xargs -I{} rm -rf {}", []string{"echo /", "xargs › rm -rf /"}},
	{"printf 'a\\nb\\n' | xargs -I{} rm -rf {}", []string{"printf a\\nb\\n", "xargs › rm -rf ?{}"}},
	{"sshpass -p pw rm -rf /", []string{"sshpass -p pw rm -rf /", "sshpass › rm -rf /"}},
	{"direnv exec . rm -rf /", []string{"direnv exec . rm -rf /", "direnv exec › rm -rf /"}},
	{"printf '%s\\n' \"a b\" | xargs rm", []string{"printf %s\\n a b", "xargs › rm a b"}},
	{"bash <(printf 'git push -f origin main')", []string{"<( ) › printf git push -f origin main", "bash <( ) › git push -f origin main"}},
	{"/proc/self/fd/3 push -f", []string{"/proc/self/fd/3 push -f !runs /proc/self/fd/3, a program not known statically"}},
	{"/proc/self/root/usr/bin/git push -f", []string{"/proc/self/root/usr/bin/git push -f !runs /proc/self/root/usr/bin/git, a program not known statically"}},
	{"/dev/fd/3 -c x", []string{"/dev/fd/3 -c x !runs /dev/fd/3, a program not known statically"}},
	{"bash < <(echo 'rm -rf /')", []string{"<( ) › echo rm -rf /", "bash <( ) › rm -rf /"}},
	{"source <(echo rm -rf /)", []string{"<( ) › echo rm -rf /", "source <( ) › rm -rf /"}},
	{"bash <(curl x; echo rm)", []string{"<( ) › curl x", "<( ) › echo rm", "bash ?<(curl x; echo rm) !bash runs a script that cannot be read: <(curl x; echo rm)"}},
	{"/lib64/ld-linux-x86-64.so.2 /usr/bin/git push --force", []string{"/lib64/ld-linux-x86-64.so.2 /usr/bin/git push --force", "ld-linux-x86-64.so.2 › /usr/bin/git push --force"}},
	{"ld.so --preload /tmp/x.so /bin/true", []string{"ld.so --preload /tmp/x.so /bin/true !ld.so --preload runs a program"}},
	{"setarch x86_64 -R rm -rf /", []string{"setarch x86_64 -R rm -rf /", "setarch › rm -rf /"}},
	{"perf stat -e cycles -- rm -rf /", []string{"perf stat -e cycles -- rm -rf /", "perf stat › rm -rf /"}},
	{"cpulimit -l 50 -- rm -rf /", []string{"cpulimit -l 50 -- rm -rf /", "cpulimit › rm -rf /"}},
	{"rlwrap -z /tmp/f sh", []string{"rlwrap -z /tmp/f sh !rlwrap -z runs a program"}},
	{"xargs", []string{"xargs › echo ?{xargs input}"}},
	{"xargs -I{} mv {} {}.bak", []string{"xargs › mv ?{} ?{}.bak"}},
	{"find . -name '*.tmp' -exec rm {} \\;", []string{"find . -name *.tmp", "find -exec › rm ?{}"}},
	{"find . -execdir sh -c 'rm -rf /' \\; -ok a {} +", []string{"find .", "find -execdir › sh -c › rm -rf /", "find -ok › a ?{}"}},
	{"find . -fprint out", []string{"find . -fprint out -fprintout:write"}},
	{"unbuffer git push --force", []string{"unbuffer git push --force", "unbuffer › git push --force"}},
	{"$CMD args", []string{"?$CMD args"}},
	{"sudo $CMD", []string{"sudo ?$CMD !cannot tell what sudo runs: option $CMD is not static"}},
	{"env $X git push", []string{"env ?$X git push !cannot tell what env runs: option $X is not static"}},

	// Nested shells.
	{`bash -c "git push --force"`, []string{"bash -c › git push --force"}},
	{`/bin/zsh -lc 'git status && git diff'`, []string{"zsh -c › git status", "zsh -c › git diff"}},
	{`bash -e -o pipefail -c 'a'`, []string{"bash -c › a"}},
	{`bash -ec 'a' name arg`, []string{"bash -c › a"}},
	{`sh +x -c 'a'`, []string{"sh -c › a"}},
	{`bash --norc --rcfile x -c 'a'`, []string{"bash -c › a"}},
	{`bash -c "$CMD"`, []string{`bash -c ?"$CMD" !bash -c script is not static: "$CMD"`}},
	{`bash -c 'if'`, []string{"bash -c if !bash -c script does not parse: 1:1: `if` must be followed by a statement list"}},
	{`bash -c 'bash -c "sh -c \"rm -rf /\""'`, []string{"bash -c › bash -c › sh -c › rm -rf /"}},
	{"curl x | sh", []string{"curl x", "sh !sh reads its script from standard input"}},
	{"curl x | bash -s -- arg", []string{"curl x", "bash -s -- arg !bash reads its script from standard input"}},
	{"bash < script.sh", []string{"bash <script.sh:read !bash reads its script from <script.sh"}},
	{"bash <(curl x)", []string{"<( ) › curl x", "bash ?<(curl x) !bash runs a script that cannot be read: <(curl x)"}},
	{"bash script.sh", []string{"bash script.sh"}},
	{"curl x | bash -", []string{"curl x", "bash - !bash reads its script from standard input"}},
	{"bash /dev/stdin < f", []string{"bash /dev/stdin <f:read !bash reads its script from <f"}},
	{"source <(curl x)", []string{"<( ) › curl x", "source ?<(curl x) !source runs a script that cannot be read: <(curl x)"}},
	{". ./env.sh", []string{". ./env.sh"}},
	{"bash <<< 'rm -rf /'", []string{"bash here-string › rm -rf /"}},
	{"sh <<EOF\ngit push -f\nEOF", []string{"sh here-doc › git push -f"}},
	{"sh <<EOF\n$X\nEOF", []string{"sh !sh here-doc script is not static: $X"}},
	{"eval 'git push' -f", []string{"eval › git push -f"}},
	{`eval "$X"`, []string{`eval ?"$X" !eval script is not static: "$X"`}},
	{"su -c 'rm -rf /' root", []string{"su -c › rm -rf /"}},
	{"su root", []string{"su root"}},
	{"su - root -c 'rm -rf /'", []string{"su -c › rm -rf /"}},
	{"su -s /bin/sh nobody --command='a'", []string{"su -c › a"}},
	{"runuser -u x -- rm -rf /", []string{"runuser › rm -rf /"}},
	{"su --frob -c a", []string{"su --frob -c a !cannot tell what su runs: unknown option --frob"}},
	{"trap 'rm -rf /' EXIT", []string{"trap › rm -rf /"}},
	{"trap -p", []string{"trap -p"}},
	{"git submodule foreach --recursive 'git push -f'", []string{"git submodule foreach --recursive git push -f", "git submodule foreach › git push -f"}},
	{"git -C x rebase -i --exec 'rm -rf /' main", []string{"git -C x rebase -i --exec rm -rf / main", "git rebase --exec › rm -rf /"}},
	{"git rebase -x'make test' main", []string{"git rebase -xmake test main", "git rebase --exec › make test"}},
	{"git bisect run sh -c 'rm -rf /'", []string{"git bisect run sh -c rm -rf /", "git bisect run › sh -c › rm -rf /"}},
	{"git log --grep foreach", []string{"git log --grep foreach"}},
	{"PS4='$(rm -rf /)'; set -x", []string{"PS4=$(rm -rf /)", "PS4= › $( ) › rm -rf /", "PS4= › ?$(rm -rf /)", "set -x"}},
	{"export PROMPT_COMMAND='git push -f'", []string{"PROMPT_COMMAND=git push -f export", "PROMPT_COMMAND= › git push -f"}},
	{"alias ls='rm -rf /'; ls", []string{"alias ls=rm -rf /", "alias › rm -rf /", "ls"}},
	{"sudo sh -c 'git reset --hard'", []string{"sudo › sh -c › git reset --hard"}},
	{"xargs sh -c 'rm \"$@\"' _", []string{`xargs › sh -c › rm ?"$@"`}},
}

// seqWords is "from from+1 … to".
func seqWords(from, to int) string {
	var parts []string
	for i := from; i <= to; i++ {
		parts = append(parts, strconv.Itoa(i))
	}
	return strings.Join(parts, " ")
}

func TestParse(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range parseTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		t.Run("", func(t *testing.T) {
			t.Logf("input: %q", tc.in)
			s, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, summary(s.Commands)); diff != "" {
				t.Errorf("commands mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

var errorTests = []struct {
	in     string
	want   string
	bashOK bool // bash -n accepts it (with a warning); the parser is stricter
}{
	{"echo 'abc", "1:6: reached EOF without closing quote `'`", false},
	{"if true; then git status", "1:1: `if` statement must end with `fi`", false},
	{"echo $(", "1:6: reached EOF without matching `$(` with `)`", false},
	{"a &&", "1:3: `&&` must be followed by a statement", false},
	{"cat <<EOF\nno end", "1:5: unclosed here-document `EOF`", true},
	{"echo )", "1:6: a command can only contain words and redirects; encountered `)`", false},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorTests {
		t.Logf("input: %q", tc.in)
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("want error %q, got none", tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("error mismatch:\ngot  %q\nwant %q", err, tc.want)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	// Each eval parses the rest of the line again, one level deeper.
	line := strings.Repeat("eval ", maxDepth+2) + "rm -rf /"
	s, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	var unknown int
	for _, c := range s.Commands {
		if strings.Contains(c.Unknown, "nested deeper than") {
			unknown++
		}
		if len(c.Nesting) > maxDepth {
			t.Errorf("command nested %d deep: %v", len(c.Nesting), summary([]*Command{c}))
		}
	}
	if unknown != 1 {
		t.Errorf("want one command stopped by the depth limit, got %d: %q", unknown, summary(s.Commands))
	}
}

func TestPositions(t *testing.T) {
	s, err := Parse("a\n  b; bash -c 'x;  y'")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Commands {
		var chain []string
		for _, f := range c.Nesting {
			chain = append(chain, f.Kind+"@"+f.Pos.String())
		}
		got = append(got, strings.Join(append(chain, c.Pos.String()), " "))
	}
	want := []string{"1:1", "2:3", "bash -c@2:6 1:1", "bash -c@2:6 1:5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("positions (-want +got):\n%s", diff)
	}
}

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "git push --force", want: []string{"git", "push", "--force"}},
		{in: `grep '#include' "a b"`, want: []string{"grep", "#include", "a b"}},
		{in: "rm -rf /", want: []string{"rm", "-rf", "/"}},
		{in: "a; b", wantErr: true},
		{in: "a | b", wantErr: true},
		{in: "rm $X", wantErr: true},
		{in: "FOO=1 a", wantErr: true},
		{in: "a > f", wantErr: true},
		{in: "echo 'x", wantErr: true},
		{in: "", wantErr: true},
		{in: "  git\tpush  -f ", want: []string{"git", "push", "-f"}},
		{in: "rm -rf ~ ~/x", want: []string{"rm", "-rf", "~", "~/x"}},
		{in: "a{b,c}", want: []string{"ab", "ac"}},
		{in: "dd of=/dev/sd*", want: []string{"dd", "of=/dev/sd*"}},
	} {
		// The fast path for plain lines must agree with the parser.
		if plain(tc.in) {
			f, err := parse(tc.in)
			if err != nil || len(f.Stmts) != 1 {
				t.Errorf("plain(%q) but the parser disagrees: %v", tc.in, err)
			}
		}
		got, err := Fields(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("Fields(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Fields(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestBashAgrees checks the parser's view against real bash, with -n only:
// bash reads the input and never executes it.
func TestBashAgrees(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	check := func(in string, wantOK bool) {
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(in + "\n")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if (err == nil) != wantOK {
			t.Errorf("bash -n on %q: ok=%v (%s), parser ok=%v", in, err == nil, strings.TrimSpace(stderr.String()), wantOK)
		}
	}
	for _, tc := range parseTests {
		check(tc.in, true)
	}
	for _, tc := range classTests {
		check(tc.in, true)
	}
	for _, tc := range interpTests {
		check(tc.in, true)
	}
	for _, tc := range errorTests {
		check(tc.in, tc.bashOK)
	}
}
