// Package idset is a set of 64-bit keys (hashes of IDs) in a few bytes a
// key, for checks that would otherwise hold a Go map of every ID of a
// source: the CSV connector's repeated-ID check, the reconciler's record
// of which records a pass saw.
package idset

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// Set holds 64-bit keys in about 4 to 6 bytes each: a key picks one of
// 65,536 buckets by its top 16 bits, and the bucket keeps the next 32 bits
// in a sorted slice. Two keys that agree on those 48 bits are the same to
// the set, so its answers are "maybe": a caller that must be sure confirms
// a hit another way (among a million random keys, two agree with a chance
// of about 1 in 500).
//
// Beyond SpillAt keys in memory, the buckets are written to a temporary
// file as one sorted run and emptied: memory stays bounded however many
// keys, and each later look-up costs one small read per run.
//
// A Set is not safe for concurrent use.
type Set struct {
	buckets [1 << 16][]uint32
	n       int // keys in memory
	total   int // keys in the spilled runs
	spillAt int
	runs    []run
	file    *os.File // temporary file of the runs, created at the first spill
	size    int64
	buf     []byte
}

// run is one spilled run: bucket b's sorted values are the 4-byte
// values at [start[b], start[b+1]) of the file.
type run struct {
	base  int64
	start []uint32 // 65,537 offsets, in values
}

// DefaultSpillAt is 16 Mi keys, 64 MiB of memory.
const DefaultSpillAt = 16 << 20

// New returns an empty set that spills beyond spillAt keys in memory
// (DefaultSpillAt when spillAt <= 0).
func New(spillAt int) *Set {
	if spillAt <= 0 {
		spillAt = DefaultSpillAt
	}
	return &Set{spillAt: spillAt}
}

// Mix spreads the bits of a weak 64-bit hash (FNV, for instance) over
// the whole word, so that similar IDs fall in different buckets
// (splitmix64's finaliser).
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Add adds key and reports whether a key equal to it in its top 48 bits
// was added before.
func (s *Set) Add(key uint64) (maybeSeen bool, err error) {
	b, v := int(key>>48), uint32(key>>16)
	bucket := s.buckets[b]
	i, found := slices.BinarySearch(bucket, v)
	if found {
		return true, nil
	}
	if seen, err := s.inRuns(b, v); err != nil || seen {
		return seen, err
	}
	s.buckets[b] = slices.Insert(bucket, i, v)
	s.n++
	if s.n >= s.spillAt {
		return false, s.spill()
	}
	return false, nil
}

// Has reports whether a key equal to key in its top 48 bits was added.
func (s *Set) Has(key uint64) (bool, error) {
	b, v := int(key>>48), uint32(key>>16)
	if _, found := slices.BinarySearch(s.buckets[b], v); found {
		return true, nil
	}
	return s.inRuns(b, v)
}

// Len returns the number of keys added (48-bit duplicates counted once).
func (s *Set) Len() int { return s.total + s.n }

// inRuns looks v up in bucket b of the spilled runs.
func (s *Set) inRuns(b int, v uint32) (bool, error) {
	for _, r := range s.runs {
		if seen, err := s.inRun(r, b, v); err != nil || seen {
			return seen, err
		}
	}
	return false, nil
}

// inRun looks v up in bucket b of a spilled run.
func (s *Set) inRun(r run, b int, v uint32) (bool, error) {
	lo, hi := r.start[b], r.start[b+1]
	if lo == hi {
		return false, nil
	}
	n := int(hi-lo) * 4
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	buf := s.buf[:n]
	if _, err := s.file.ReadAt(buf, r.base+int64(lo)*4); err != nil {
		return false, fmt.Errorf("read id set spill: %w", err)
	}
	i, j := 0, int(hi-lo)
	for i < j {
		m := int(uint(i+j) >> 1)
		x := binary.LittleEndian.Uint32(buf[m*4:])
		switch {
		case x == v:
			return true, nil
		case x < v:
			i = m + 1
		default:
			j = m
		}
	}
	return false, nil
}

// spill writes the buckets to the temporary file as one run and empties
// them, keeping their memory for the next run.
func (s *Set) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp("", "syncd-idset-")
		if err != nil {
			return fmt.Errorf("id set spill: %w", err)
		}
		// Unlinked at once: the file goes away with the process.
		_ = os.Remove(f.Name())
		s.file = f
	}
	r := run{base: s.size, start: make([]uint32, len(s.buckets)+1)}
	w := bufio.NewWriterSize(io.NewOffsetWriter(s.file, s.size), 64<<10)
	var n uint32
	var v4 [4]byte
	for b, bucket := range s.buckets {
		r.start[b] = n
		for _, v := range bucket {
			binary.LittleEndian.PutUint32(v4[:], v)
			_, _ = w.Write(v4[:])
		}
		n += uint32(len(bucket))
		s.buckets[b] = bucket[:0]
	}
	r.start[len(s.buckets)] = n
	if err := w.Flush(); err != nil {
		return fmt.Errorf("id set spill: %w", err)
	}
	s.size += int64(n) * 4
	s.runs = append(s.runs, r)
	s.total += s.n
	s.n = 0
	return nil
}

// Close removes the temporary file, if any. Do not use the set after it.
func (s *Set) Close() error {
	s.runs, s.total = nil, 0
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}
