package statefile

import (
	"errors"
	"fmt"
	"path/filepath"
)

// The XDG base directories, resolved one way for every caller: the
// variable when it holds an absolute path, else the default under $HOME.
// A relative value is ignored, as the XDG Base Directory Specification
// says ("If an implementation encounters a relative path in any of these
// variables it should consider the path invalid and ignore it").

// StateHome returns $XDG_STATE_HOME, else $HOME/.local/state.
func StateHome(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_STATE_HOME", ".local", "state")
}

// cacheHome returns $XDG_CACHE_HOME, else $HOME/.cache.
func cacheHome(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_CACHE_HOME", ".cache")
}

// configHome returns $XDG_CONFIG_HOME, else $HOME/.config.
func configHome(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
}

func xdgDir(getenv func(string) string, name string, def ...string) (string, error) {
	if dir := getenv(name); dir != "" && filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", fmt.Errorf("finding %s: %w", name, errNoHome)
	}
	return filepath.Join(append([]string{home}, def...)...), nil
}

var errNoHome = errors.New("neither it nor HOME is set to an absolute path")
