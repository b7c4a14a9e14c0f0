package inherited

const (
	sysPrlimit64  = 261
	sysOpenat     = 56
	sysGetdents64 = 61
	sysClose      = 57
	sysFcntl      = 25
	sysFstat      = 80
)

// stat is struct stat up to st_ino.
type stat struct {
	Dev, Ino uint64
	_        [112]byte
}
