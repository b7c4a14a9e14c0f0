//go:build !unix

package statefile

import (
	"io/fs"
	"os"
	"slices"
	"strings"
)

// openNonblock opens path read-only; this system has no FIFOs that block
// an open.
func openNonblock(path string, dir bool) (*os.File, error) { return os.Open(path) }

func errNotDir(err error) bool { return false }

func sortEntries(ents []fs.DirEntry) {
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
