//go:build unix

package idset

import (
	"syscall"
	"unsafe"
)

// alloc returns an empty slice of capacity n outside the Go heap: an
// anonymous private mapping whose pages the kernel provides when they are
// first written, so that memory grows with the values held, not with n.
// It falls back to the heap when the mapping fails.
func alloc(n int) ([]uint32, func()) {
	mem, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	if err != nil {
		return make([]uint32, 0, n), func() {}
	}
	vals := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(mem))), n)[:0]
	return vals, func() { _ = syscall.Munmap(mem) }
}
