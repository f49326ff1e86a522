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

// Set holds 64-bit keys in about 4 bytes each. A key's top 16 bits pick
// one of 65,536 buckets and the next 32 bits are stored: one sorted array
// of those values, bucket after bucket, with a table of where each bucket
// starts. Two keys that agree on their top 48 bits are the same to the
// set, so its answers are "maybe": a caller that must be sure confirms a
// hit another way (among a million random keys, two agree with a chance of
// about 1 in 500).
//
// New keys wait in a small map and are merged into the array, in place,
// when it fills. The array lives outside the Go heap (an anonymous memory
// mapping, see mem_unix.go), so it counts once in the process's memory
// instead of once more as garbage-collector headroom.
//
// Beyond SpillAt keys in memory, the array is written to a temporary file
// as one sorted run and emptied: memory stays bounded however many keys,
// and each later look-up costs one small read per run.
//
// A Set is not safe for concurrent use.
type Set struct {
	vals    []uint32 // the sorted array: len is the keys merged, cap is spillAt
	free    func()   // releases vals' memory
	start   []uint32 // 65,537 offsets into vals: bucket b is vals[start[b]:start[b+1]]
	pending map[uint64]struct{}
	keys    []uint64 // merge scratch
	total   int      // keys in the spilled runs
	spillAt int
	runs    []run
	file    *os.File // temporary file of the runs, created at the first spill
	size    int64
	buf     []byte
}

// run is one spilled run: bucket b's sorted values are the 4-byte
// values at [start[b], start[b+1]) of the file, from base.
type run struct {
	base  int64
	start []uint32
}

const (
	buckets = 1 << 16
	// DefaultSpillAt is 16 Mi keys, 64 MiB of memory.
	DefaultSpillAt = 16 << 20
	// pendingMax is how many new keys wait before a merge.
	pendingMax = 1 << 15
)

// New returns an empty set that spills beyond spillAt keys in memory
// (DefaultSpillAt when spillAt <= 0).
func New(spillAt int) *Set {
	if spillAt <= 0 {
		spillAt = DefaultSpillAt
	}
	return &Set{spillAt: spillAt, pending: map[uint64]struct{}{}}
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
	if seen, err := s.Has(key); err != nil || seen {
		return seen, err
	}
	s.pending[key>>16] = struct{}{}
	if len(s.pending) >= pendingMax || len(s.vals)+len(s.pending) >= s.spillAt {
		return false, s.merge()
	}
	return false, nil
}

// Has reports whether a key equal to key in its top 48 bits was added.
func (s *Set) Has(key uint64) (bool, error) {
	if _, ok := s.pending[key>>16]; ok {
		return true, nil
	}
	b, v := int(key>>48), uint32(key>>16)
	if s.start != nil {
		if _, found := slices.BinarySearch(s.vals[s.start[b]:s.start[b+1]], v); found {
			return true, nil
		}
	}
	for _, r := range s.runs {
		if seen, err := s.inRun(r, b, v); err != nil || seen {
			return seen, err
		}
	}
	return false, nil
}

// Len returns the number of keys added (48-bit duplicates counted once).
func (s *Set) Len() int { return s.total + len(s.vals) + len(s.pending) }

// merge moves the pending keys into the sorted array, from its end
// backwards so that no value is overwritten before it is moved, and
// spills the array when it is full.
func (s *Set) merge() error {
	if s.vals == nil {
		s.vals, s.free = alloc(s.spillAt)
		s.start = make([]uint32, buckets+1)
	}
	keys := s.keys[:0]
	for k := range s.pending {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	clear(s.pending)
	s.keys = keys
	n := len(s.vals)
	s.vals = s.vals[:n+len(keys)]
	w, j := n+len(keys)-1, len(keys)-1
	for b := buckets - 1; b >= 0; b-- {
		i := int(s.start[b+1]) - 1
		lo := int(s.start[b])
		s.start[b+1] = uint32(w + 1)
		for {
			inBucket := j >= 0 && int(keys[j]>>32) == b
			if inBucket && (i < lo || uint32(keys[j]) > s.vals[i]) {
				s.vals[w] = uint32(keys[j])
				j--
			} else if i >= lo {
				s.vals[w] = s.vals[i]
				i--
			} else {
				break
			}
			w--
		}
	}
	s.start[0] = 0
	if len(s.vals) >= s.spillAt {
		return s.spill()
	}
	return nil
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

// spill writes the array to the temporary file as one run and empties it.
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
	w := bufio.NewWriterSize(io.NewOffsetWriter(s.file, s.size), 64<<10)
	var v4 [4]byte
	for _, v := range s.vals {
		binary.LittleEndian.PutUint32(v4[:], v)
		_, _ = w.Write(v4[:])
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("id set spill: %w", err)
	}
	s.runs = append(s.runs, run{base: s.size, start: slices.Clone(s.start)})
	s.size += int64(len(s.vals)) * 4
	s.total += len(s.vals)
	s.vals = s.vals[:0]
	clear(s.start)
	return nil
}

// Close releases the array's memory and removes the temporary file, if
// any. Do not use the set after it.
func (s *Set) Close() error {
	if s.free != nil {
		s.free()
		s.free = nil
	}
	s.vals, s.start, s.runs, s.total = nil, nil, nil, 0
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}
