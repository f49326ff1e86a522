//go:build !unix

package idset

// alloc returns an empty slice of capacity n on the Go heap.
func alloc(n int) ([]uint32, func()) { return make([]uint32, 0, n), func() {} }
