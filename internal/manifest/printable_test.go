package manifest

import (
	"regexp"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct {
		except string
		want   string
	}{
		{"", `[ -~]`},
		{"'", `[ -&(-~]`},
		{metachars, `[]-_!#%*-:=?-[a-{}~]`},
		{" -]^", `[!-,.-\\_-~]`},
		{`Z\`, `[]-~ -Y[]`},
		{"]", `[ -\\\^-~]`},
		{"^", `[ -\]_-~]`},
	}
	for _, tc := range tests {
		got := printable(tc.except)
		if got != tc.want {
			t.Errorf("printable(%q) = %s, want %s", tc.except, got, tc.want)
		}
		re := regexp.MustCompile("^" + got + "$")
		for c := 0; c < 256; c++ {
			want := c >= ' ' && c <= '~' && !containsByte(tc.except, byte(c))
			if re.MatchString(string([]byte{byte(c)})) != want {
				t.Errorf("printable(%q) on %#x: match=%v, want %v", tc.except, c, !want, want)
			}
		}
	}
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// TestGrantsPrintableOnly: allow grants match words of printable ASCII only;
// anything else (a control character, DEL, a non-ASCII byte) falls to the
// agent's default, and the shell's metacharacters stay out in every form.
func TestGrantsPrintableOnly(t *testing.T) {
	for _, tc := range []struct {
		line, cmd string
		want      bool
	}{
		{"cat", "cat a-b_c.d~e/f,g:h@i%j+k=l", true},
		{"cat", `cat 'it''s' "a b" \ x`, true},
		{"cat", "cat na\u00efve.txt", false},
		{"cat", "cat a\x7fb", false},
		{"cat", "cat 'a\x7fb'", false},
		{"cat", "cat a\x1bb", false},
		{"cat", `cat "a$b"`, false},
		{"cat", "cat \"a`id`\"", false},
		{"cat", `cat a\`, false},
		{"cat", "LANG=C.UTF-8 cat f", true},
		{"cat", "LANG=caf\u00e9 cat f", false},
		{"sed -n", "sed -n p f", true},
		{"sed -n", "sed -n 'p' f", true},
		{"sed -n", `sed -n "-i" f`, false},
		{"less", "less +F f", false},
		{"less", "less '+F' f", false},
		{"less", `less "+F" f`, false},
		{"less", "less f", true},
	} {
		if got := matches(t, tc.line, tc.cmd); got != tc.want {
			t.Errorf("rule %q, command %q: match=%v, want %v", tc.line, tc.cmd, got, tc.want)
		}
	}
}
