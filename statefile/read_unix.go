//go:build unix

package statefile

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// openNonblock opens path read-only with O_NONBLOCK, so that opening a
// FIFO returns at once; dir adds O_DIRECTORY.
func openNonblock(path string, dir bool) (*os.File, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if dir {
		flag |= syscall.O_DIRECTORY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func errNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func sortEntries(ents []fs.DirEntry) {
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
