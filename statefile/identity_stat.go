//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package statefile

import (
	"io/fs"
	"syscall"
)

func sysIdentity(fi fs.FileInfo, id *Identity) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	id.Dev, id.Ino, id.Ctime = int64(st.Dev), int64(st.Ino), ctime(st)
	return true
}
