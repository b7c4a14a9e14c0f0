package agents

import (
	"errors"
	"path/filepath"
)

// agentFile is $<envDir>/<name> when envDir names a set variable, else
// ~/<dir>/<name>.
func agentFile(getenv func(string) string, envDir, dir, name string) (string, error) {
	if envDir != "" {
		if d := getenv(envDir); d != "" {
			return filepath.Join(d, name), nil
		}
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("finding the agent's settings: HOME is not set")
	}
	return filepath.Join(home, dir, name), nil
}

// dirs is [$<envDir>] when envDir names a set variable, else [~/<dir>]
// (none without a home).
func dirs(getenv func(string) string, envDir, dir string) []string {
	if d := getenv(envDir); d != "" {
		return []string{filepath.Clean(d)}
	}
	if home := getenv("HOME"); home != "" {
		return []string{filepath.Join(home, dir)}
	}
	return nil
}
