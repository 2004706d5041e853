package engine

import (
	"os"
	"runtime/debug"
	"syscall"
)

// ModuleVersion returns "path version" for a module linked into this binary,
// or "path (unknown)" when build info does not list it.
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return path + " " + d.Version + " => " + d.Replace.Path + " " + d.Replace.Version
				}
				return path + " " + d.Version
			}
		}
	}
	return path + " (unknown)"
}

// allocated is the space a file occupies on disk.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
