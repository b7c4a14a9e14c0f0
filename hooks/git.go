package hooks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// localEnvVars are the variables that tie git to one repository, as
// `git rev-parse --local-env-vars` lists them (git 2.39, plus GIT_CONFIG_KEY_*
// and GIT_CONFIG_VALUE_* pairs, which GIT_CONFIG_COUNT indexes). A hook
// inherits them from the git that fired it; they must not leak into the
// commands run for other repositories. The list is fixed here, not asked of
// git at run time, because a hook run must stay as cheap as `bash -c true`;
// TestLocalEnvVarsCoverGit checks it against the installed git.
var localEnvVars = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR",
	"GIT_CONFIG",
	"GIT_CONFIG_COUNT",
	"GIT_CONFIG_PARAMETERS",
	"GIT_DIR",
	"GIT_GRAFT_FILE",
	"GIT_IMPLICIT_WORK_TREE",
	"GIT_INDEX_FILE",
	"GIT_INTERNAL_SUPER_PREFIX",
	"GIT_NO_REPLACE_OBJECTS",
	"GIT_OBJECT_DIRECTORY",
	"GIT_PREFIX",
	"GIT_REPLACE_REF_BASE",
	"GIT_SHALLOW_FILE",
	"GIT_WORK_TREE",
}

// isLocalEnv reports whether the environment entry name belongs to one
// repository and must be dropped before git runs elsewhere.
func isLocalEnv(name string) bool {
	for _, v := range localEnvVars {
		if name == v {
			return true
		}
	}
	return strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// cleanEnv returns environ without git's per-repository variables.
func cleanEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !isLocalEnv(name) {
			out = append(out, kv)
		}
	}
	return out
}

// unsetLocalEnv removes git's per-repository variables from the process
// environment, so that everything the process runs or opens afterwards finds
// its repository from its own directory.
func unsetLocalEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if isLocalEnv(name) {
			os.Unsetenv(name)
		}
	}
}

// git runs git in dir with a clean environment and returns its standard
// output with the trailing newline removed.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = cleanEnv(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return "", fmt.Errorf("running git %s in %s: %w", strings.Join(args, " "), dir, err)
		}
		return "", fmt.Errorf("running git %s in %s: %w: %s", strings.Join(args, " "), dir, err, msg)
	}
	return strings.TrimSuffix(stdout.String(), "\n"), nil
}

// gitConfigAll returns every value of a multi-valued key in the repository's
// own (--local) configuration; none is not an error.
func gitConfigAll(ctx context.Context, dir, key string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "config", "--local", "--get-all", key)
	cmd.Env = cleanEnv(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && stderr.Len() == 0 {
		return nil, nil // git config exits 1 for a missing key
	}
	if err != nil {
		return nil, fmt.Errorf("running git config --get-all %s in %s: %w: %s", key, dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n"), nil
}

// version is a git version: major, minor, patch.
type version [3]int

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// configHooksSince is the first git that runs hooks named in its
// configuration (hook.<name>.command and hook.<name>.event).
var configHooksSince = version{2, 54, 0}

// parseVersion reads the output of `git version`: "git version 2.39.5",
// "git version 2.54.0.rc1", "git version 2.45.1.windows.1",
// "git version 2.39.5 (Apple Git-154)".
func parseVersion(out string) (version, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(out), "git version ")
	if !ok {
		return version{}, fmt.Errorf("parsing git version %q: no \"git version\" prefix", out)
	}
	rest, _, _ = strings.Cut(rest, " ")
	var v version
	parts := strings.Split(rest, ".")
	for i := 0; i < len(v) && i < len(parts); i++ {
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		if digits == "" {
			if i < 2 {
				return version{}, fmt.Errorf("parsing git version %q: no number at %q", out, parts[i])
			}
			break
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return version{}, fmt.Errorf("parsing git version %q: %w", out, err)
		}
		v[i] = n
	}
	if len(parts) < 2 {
		return version{}, fmt.Errorf("parsing git version %q: no minor version", out)
	}
	return v, nil
}

// gitVersion asks the installed git for its version; tests replace it to
// reach the configuration-based hooks of newer git. Nothing is cached: a git
// upgraded between two runs is seen by the second.
var gitVersion = func(ctx context.Context) (version, error) {
	out, err := git(ctx, ".", "version")
	if err != nil {
		return version{}, err
	}
	return parseVersion(out)
}

// absJoin resolves a path git printed relative to dir.
func absJoin(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
