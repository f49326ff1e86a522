package state

import (
	"fmt"
	"testing"
	"time"
)

// benchLink is a link of realistic size: a dozen mapped fields.
func benchLink(i int) Link {
	return Link{
		Connector: "crm", ExternalID: fmt.Sprintf("ext-%08d", i), ContactID: fmt.Sprintf("contact-%08d", i),
		RecordID: fmt.Sprint(i),
		Fields: map[string]string{
			"firstName": "Ada", "lastName": "Lovelace", "company": "Analytical Engines Ltd", "role": "Engineer",
			"emails.work": fmt.Sprintf("ada%d@example.com", i), "phoneNumbers.mobile": "+15555550123",
			"custom.lifecycle": "customer",
		},
		ItemIDs:       map[string]string{"emails.work": "item-1", "phoneNumbers.mobile": "item-2"},
		WorkspaceHash: "9f86d081884c7d659a2feaa0c55ad015", SourceHash: "a3f1c2b4d5e6f708192a3b4c5d6e7f80",
		WorkspaceWrittenAt: time.Unix(1770000000, 0), SourceUpdatedAt: time.Unix(1770000000, 0),
	}
}

func BenchmarkPutLink(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Links.Put(benchLink(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPutLinks1000(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	next := 0
	for b.Loop() {
		ls := make([]Link, 1000)
		for j := range ls {
			ls[j] = benchLink(next)
			next++
		}
		if err := s.Links.PutAll(ls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(next), "ns/link")
}

func BenchmarkLinkLookup(b *testing.B) {
	s, _ := openTest(b)
	const n = 100_000
	fill(b, s, n)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l, ok, err := s.Links.Get("crm", fmt.Sprintf("ext-%08d", (i*7919)%n))
		if err != nil || !ok || l.ContactID == "" {
			b.Fatal(l, ok, err)
		}
		i++
	}
}

func BenchmarkMarkSeen1000(b *testing.B) {
	s, _ := openTest(b)
	const n = 100_000
	fill(b, s, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ext-%08d", i)
	}
	b.ReportAllocs()
	run, off := uint64(1), 0
	for b.Loop() {
		if err := s.Links.MarkSeen("crm", run, ids[off:off+1000]); err != nil {
			b.Fatal(err)
		}
		if off += 1000; off == n {
			off, run = 0, run+1
		}
	}
}

func BenchmarkForEachLink(b *testing.B) {
	s, _ := openTest(b)
	const n = 100_000
	fill(b, s, n)
	b.ReportAllocs()
	for b.Loop() {
		count := 0
		if err := s.Links.ForEach("crm", func(Link) error { count++; return nil }); err != nil || count != n {
			b.Fatal(count, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/link")
}

func fill(b *testing.B, s *Store, n int) {
	b.Helper()
	for start := 0; start < n; start += 1000 {
		ls := make([]Link, 0, 1000)
		for i := start; i < start+1000 && i < n; i++ {
			ls = append(ls, benchLink(i))
		}
		if err := s.Links.PutAll(ls); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLinkDigests500 is the forward pass's look-up for one batch of
// 500 records: the digests (fingerprint, hash, record ID) of their links,
// in one read transaction. ns/op divided by 500 is the cost per record.
func BenchmarkLinkDigests500(b *testing.B) {
	s, _ := openTest(b)
	const n = 100_000
	fill(b, s, n)
	ids := make([]string, 500)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for j := range ids {
			ids[j] = fmt.Sprintf("ext-%08d", (i*500+j)%n)
		}
		ds, err := s.Links.Digests("crm", ids)
		if err != nil || !ds[0].Found || ds[0].RecordID == "" {
			b.Fatal(ds[0], err)
		}
		i++
	}
}
