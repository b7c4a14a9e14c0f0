package gate

import "testing"

func TestDialectLine(t *testing.T) {
	tests := []struct {
		line, shell, want string
		wantErr           bool
	}{
		{line: "ls *(.)", shell: "/bin/bash", want: "ls *(.)"},
		{line: "ls *(.)", shell: "sh", want: "ls *(.)"},
		{line: "ls *(.)", shell: "/usr/bin/zsh", want: "zsh -c 'ls *(.)'"},
		{line: `echo 'a' "$b"`, shell: "zsh", want: `zsh -c "echo 'a' \"\$b\""`},
		{line: "a\x00b", shell: "zsh", wantErr: true},
	}
	for _, tc := range tests {
		t.Logf("input: %q %s", tc.line, tc.shell)
		got, err := dialectLine(tc.line, tc.shell)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("got %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
		}
	}
}
