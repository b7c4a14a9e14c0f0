package supervisor

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// realDirs answers whether directories are where their names say, no
// link on the way, and whether they exist, keeping the answers: one Lstat
// per directory of a pass, where EvalSymlinks takes one per component of
// every path, and none below a missing one.
type realDirs map[string]dirState

type dirState int8

const (
	dirLinked  dirState = iota // a link on the way (or not a directory above)
	dirReal                    // there, no link on the way
	dirMissing                 // not there, below a real directory
)

// state says what d is, its answer kept in r.
func (r realDirs) state(d string) dirState {
	if v, ok := r[d]; ok {
		return v
	}
	parent := filepath.Dir(d)
	v := dirReal
	if parent != d {
		switch v = r.state(parent); v {
		case dirReal:
			fi, err := os.Lstat(d)
			switch {
			case err == nil && fi.Mode()&fs.ModeSymlink == 0:
			case errors.Is(err, fs.ErrNotExist):
				v = dirMissing
			default:
				v = dirLinked
			}
		case dirMissing: // nothing below a missing directory
		}
	}
	r[d] = v
	return v
}
