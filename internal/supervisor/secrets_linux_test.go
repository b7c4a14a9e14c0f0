//go:build linux && (amd64 || arm64)

package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script of the checkout cannot read the person's credential stores,
// however it names them (a link, a hard link, /proc's views of the root
// and of its working directory, a copy, from inside the directory), with
// writes confined or not; the checkout, the rest of the home directory
// and the system stay readable, and so does what the tree writes. A line
// granted Secrets reads them.
func TestRunSecrets(t *testing.T) {
	needKernel(t)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	co := filepath.Join(base, "co")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	secrets := []string{".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".netrc-real", ".git-credentials",
		".docker/config.json", ".gnupg/private-keys-v1.d/k.key", ".local/state/agent-shim/cache.key"}
	for _, s := range secrets {
		write(filepath.Join(home, s), "SECRET "+s+"\n")
	}
	// ~/.netrc is a link to the real file: the file is what is kept.
	if err := os.Symlink(".netrc-real", filepath.Join(home, ".netrc")); err != nil {
		t.Fatal(err)
	}
	readable := []string{filepath.Join(home, ".bashrc"), filepath.Join(home, ".config/other/settings"),
		filepath.Join(home, ".ssh-notes"), filepath.Join(co, "main.go"), filepath.Join(co, "sub/data.txt")}
	for _, p := range readable {
		write(p, "fine\n")
	}
	cfgSecrets := append(DefaultSecrets(env), filepath.Join(home, ".local/state/agent-shim/cache.key"))
	var script strings.Builder
	script.WriteString("try() { if out=$(\"$@\" 2>/dev/null) && [[ $out == *SECRET* ]]; then echo \"READ: $*\"; fi; }\n")
	for _, s := range secrets {
		p := filepath.Join(home, s)
		script.WriteString("try cat " + p + "\n")
		script.WriteString("try cat /proc/self/root" + p + "\n")
		script.WriteString("try cat /proc/self/cwd/../home/" + s + "\n")
		script.WriteString("(cd " + filepath.Dir(p) + " && try cat ./" + filepath.Base(p) + ")\n")
		script.WriteString("ln -s " + p + " link && try cat link; rm -f link\n")
		script.WriteString("ln " + p + " hard 2>/dev/null && try cat hard; rm -f hard\n")
		script.WriteString("cp " + p + " copy 2>/dev/null && try cat copy; rm -f copy\n")
	}
	script.WriteString("try cat " + home + "/.netrc\n")
	script.WriteString("exec 3<" + home + "/.ssh/id_ed25519 2>/dev/null && try cat /dev/fd/3\n")
	for _, p := range append(readable, "/etc/passwd", "/usr/bin/bash") {
		script.WriteString("cat " + p + " >/dev/null || echo UNREADABLE: " + p + "\n")
	}
	script.WriteString("echo new > made && cat made >/dev/null || echo UNREADABLE: made\n")
	// Masked in the tree's mount namespace, or kept by Landlock where
	// there is none.
	for _, ns := range []bool{true, false} {
		namespaces = ns
		for _, confine := range []bool{true, false} {
			_, stdout, out := runScriptWith(t, co, Config{Decide: (&recorder{}).decide, Confine: confine,
				Writable: []string{co, "/dev/null"}, Secrets: cfgSecrets}, script.String())
			if strings.Contains(stdout, "READ") || strings.Contains(stdout, "UNREADABLE") {
				t.Errorf("namespace %v, confine %v:\n%s%s", ns, confine, stdout, out)
			}
			// Masked, the directory shows empty; kept by Landlock, its
			// names show.
			_, stdout, _ = runScriptWith(t, co, Config{Decide: (&recorder{}).decide, Confine: confine,
				Writable: []string{co, "/dev/null"}, Secrets: cfgSecrets}, "ls -A "+filepath.Join(home, ".ssh"))
			if masked := stdout == ""; masked != ns {
				t.Errorf("namespace %v: ~/.ssh lists %q", ns, stdout)
			}
		}
	}
	namespaces = true
	// Granted, the same script reads every one.
	_, stdout, out := runScriptWith(t, co, Config{Decide: (&recorder{}).decide, Confine: true,
		Writable: []string{co, "/dev/null"}, Secrets: cfgSecrets, Grant: Grant{Secrets: true}}, script.String())
	for _, s := range secrets {
		if !strings.Contains(stdout, "READ: cat "+filepath.Join(home, s)+"\n") {
			t.Errorf("granted Secrets, %s was not read:\n%s%s", s, stdout, out)
		}
	}
}

// DefaultSecrets names the stores where the programs look for them,
// moved by their variables too.
func TestDefaultSecrets(t *testing.T) {
	env := map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x", "GNUPGHOME": "/g", "DOCKER_CONFIG": "/d", "KUBECONFIG": "/k1:/k2", "GH_CONFIG_DIR": "relative"}
	got := DefaultSecrets(func(k string) string { return env[k] })
	for _, want := range []string{"/h/.ssh", "/h/.aws", "/h/.config/gh/hosts.yml", "/h/.netrc", "/h/.git-credentials",
		"/h/.docker/config.json", "/h/.gnupg", "/x/gh/hosts.yml", "/g", "/d/config.json", "/k1", "/k2"} {
		if !strings.Contains("\n"+strings.Join(got, "\n")+"\n", "\n"+want+"\n") {
			t.Errorf("DefaultSecrets lacks %s: %q", want, got)
		}
	}
	for _, p := range got {
		if !filepath.IsAbs(p) {
			t.Errorf("DefaultSecrets has a relative path %q", p)
		}
	}
}
