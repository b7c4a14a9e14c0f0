package statefile

import "io/fs"

// Identity identifies one version of a file without reading it: device,
// inode, size, modification and change times. A rename over the file
// (atomic writes) changes the inode; an edit in place changes the times.
type Identity struct {
	Dev, Ino, Size, Mtime, Ctime int64
}

// IdentityOf returns the identity of fi. Where the system gives no device,
// inode or change time they are zero, and ok is false.
func IdentityOf(fi fs.FileInfo) (id Identity, ok bool) {
	id = Identity{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	ok = sysIdentity(fi, &id)
	return id, ok
}
