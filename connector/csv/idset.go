package csv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
)

// idSet remembers the hashes of the row IDs read so far, to refuse a file
// that repeats an ID. It costs about 4 to 6 bytes a row: a 64-bit hash
// picks one of 65,536 buckets by its top 16 bits, and the bucket keeps the
// next 32 bits in a sorted slice. Two IDs that agree on those 48 bits are
// reported as maybe equal; the caller confirms by rereading (lineOf), so a
// collision costs a reread, never a wrong error (about one reread in 500
// passes over a million rows).
//
// Beyond spillAt hashes in memory, the buckets are written to a temporary
// file as one sorted run and emptied: memory stays bounded however long
// the file, and each later row costs one small read per run.
type idSet struct {
	buckets [1 << 16][]uint32
	n       int // hashes in memory
	spillAt int
	runs    []idRun
	file    *os.File // temporary file of the runs, created at the first spill
	size    int64
	buf     []byte
}

// idRun is one spilled run: bucket b's sorted values are the 4-byte
// values at [start[b], start[b+1]) of the file.
type idRun struct {
	base  int64
	start []uint32 // 65,537 offsets, in values
}

// defaultSpillAt is 16 Mi hashes, 64 MiB of memory.
const defaultSpillAt = 16 << 20

func newIDSet(spillAt int) *idSet {
	if spillAt <= 0 {
		spillAt = defaultSpillAt
	}
	return &idSet{spillAt: spillAt}
}

// hashID is the key of an ID in the repeated-ID check: FNV-1a, mixed so
// that similar IDs spread over the buckets.
func hashID(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	x := h.Sum64()
	// splitmix64's finaliser.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// add records the hash of id and reports whether an ID with the same
// 48-bit key was added before.
func (s *idSet) add(id string) (maybeSeen bool, err error) {
	h := hashID(id)
	b, v := int(h>>48), uint32(h>>16)
	bucket := s.buckets[b]
	i, found := slices.BinarySearch(bucket, v)
	if found {
		return true, nil
	}
	for _, r := range s.runs {
		if seen, err := s.inRun(r, b, v); err != nil || seen {
			return seen, err
		}
	}
	s.buckets[b] = slices.Insert(bucket, i, v)
	s.n++
	if s.n >= s.spillAt {
		return false, s.spill()
	}
	return false, nil
}

// inRun looks v up in bucket b of a spilled run.
func (s *idSet) inRun(r idRun, b int, v uint32) (bool, error) {
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
		return false, fmt.Errorf("read repeated-id spill: %w", err)
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
func (s *idSet) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp("", "syncd-csv-ids-")
		if err != nil {
			return fmt.Errorf("repeated-id spill: %w", err)
		}
		// Unlinked at once: the file goes away with the process.
		_ = os.Remove(f.Name())
		s.file = f
	}
	r := idRun{base: s.size, start: make([]uint32, len(s.buckets)+1)}
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
		return fmt.Errorf("repeated-id spill: %w", err)
	}
	s.size += int64(n) * 4
	s.runs = append(s.runs, r)
	s.n = 0
	return nil
}

// close removes the temporary file, if any.
func (s *idSet) close() error {
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}
