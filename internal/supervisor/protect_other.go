//go:build unix && !linux

package supervisor

import (
	"os"

	"golang.org/x/sys/unix"
)

// statKeyOfStat returns no key: elsewhere Restore reads every file again
// (clockSettable is true).
func statKeyOfStat(*unix.Stat_t) statKey { return statKey{} }

// renameNoReplace renames, failing with EEXIST where the new name is
// taken.
func renameNoReplace(olddir int, oldname string, newdir int, newname string) error {
	return unix.RenameatxNp(olddir, oldname, newdir, newname, unix.RENAME_EXCL)
}

// readFile reads the file p.
func readFile(p string, _ int64) ([]byte, error) {
	return os.ReadFile(p)
}

// clockSettable is true: elsewhere there is no shortcut to guard.
var clockSettable = func() bool { return true }

// confined runs f: elsewhere there is no Landlock.
func confined(_ []int, f func()) { f() }
