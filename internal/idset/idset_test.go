package idset

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"testing"
)

func key(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return Mix(h.Sum64())
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
	if len(s.runs) != n/7_000 || s.n != n%7_000 {
		t.Fatalf("%d runs and %d in memory, want %d and %d", len(s.runs), s.n, n/7_000, n%7_000)
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
		if seen, err := s.Add(key(strconv.Itoa(i))); err != nil || seen {
			b.Fatal(seen, err)
		}
		i++
	}
}
