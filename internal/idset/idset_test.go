package idset

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func key(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return Mix(h.Sum64())
}

// TestSetMatchesAMap adds random keys, some twice, across several merges
// and compares every answer with a map of the 48-bit keys.
func TestSetMatchesAMap(t *testing.T) {
	s := New(0)
	defer s.Close()
	r := rand.New(rand.NewPCG(7, 7))
	want := map[uint64]bool{}
	var added []uint64
	for i := range 3 * pendingMax {
		k := r.Uint64()
		if i%5 == 0 && len(added) > 0 {
			k = added[r.IntN(len(added))]
		}
		seen, err := s.Add(k)
		if err != nil {
			t.Fatal(err)
		}
		if seen != want[k>>16] {
			t.Fatalf("key %d: Add says seen %v, want %v", i, seen, want[k>>16])
		}
		want[k>>16] = true
		added = append(added, k)
	}
	for i := 1; i < len(s.vals); i++ {
		if s.vals[i-1] >= s.vals[i] && s.bucketOf(i-1) == s.bucketOf(i) {
			t.Fatalf("array not sorted within a bucket at %d", i)
		}
	}
	for _, k := range added {
		if has, _ := s.Has(k); !has {
			t.Fatalf("key %x lost", k)
		}
	}
	if s.Len() != len(want) {
		t.Fatalf("Len %d, want %d", s.Len(), len(want))
	}
}

// bucketOf returns the bucket of the array's value at i.
func (s *Set) bucketOf(i int) int {
	b, _ := slices.BinarySearchFunc(s.start[1:], uint32(i), func(e, t uint32) int {
		if e <= t {
			return -1
		}
		return 1
	})
	return b
}

func TestSetFindsKeysInMemoryAndSpilled(t *testing.T) {
	const n = 50_000
	s := New(7_000) // several spilled runs, and a part in memory
	defer s.Close()
	for i := range n {
		seen, err := s.Add(key(fmt.Sprintf("id-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if seen {
			t.Fatalf("id-%d reported seen before it was added", i)
		}
	}
	if inMemory := len(s.vals) + len(s.pending); len(s.runs) != n/7_000 || inMemory != n%7_000 {
		t.Fatalf("%d runs and %d in memory, want %d and %d", len(s.runs), inMemory, n/7_000, n%7_000)
	}
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	for _, i := range []int{0, 1, 6_999, 7_000, 20_123, n - 2, n - 1} {
		if has, err := s.Has(key(fmt.Sprintf("id-%d", i))); err != nil || !has {
			t.Errorf("Has(id-%d) = %v, %v; want true", i, has, err)
		}
		seen, err := s.Add(key(fmt.Sprintf("id-%d", i)))
		if err != nil || !seen {
			t.Errorf("id-%d added again: seen %v, %v; want seen", i, seen, err)
		}
	}
	if has, _ := s.Has(key("id-new")); has {
		t.Error("Has of a new id")
	}
	if seen, _ := s.Add(key("id-new")); seen {
		t.Error("a new id reported seen")
	}
}

// BenchmarkAdd is the repeated-ID check of one row.
func BenchmarkAdd(b *testing.B) {
	s := New(0)
	defer s.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// A new key may be "seen" when it agrees with another on 48
		// bits (about once in 200 runs of a few million keys): that is
		// the set's contract, not a failure.
		if _, err := s.Add(key(strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
