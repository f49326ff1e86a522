package mapping

import (
	"testing"

	"github.com/syncd-io/syncd/bench/workload"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"gopkg.in/yaml.v3"
)

// benchRecord is workload.Record: the record `syncd bench` maps too.
func benchRecord(i int) connector.Record { return workload.Record(i) }

// BenchmarkToContactAndHash is the forward hot path for each record of
// every run: map a record (transforms, e-mail and phone normalisation,
// the sourceUrl template) and hash its canonical fields, which is what
// the reconciler compares with the link.
func BenchmarkToContactAndHash(b *testing.B) {
	m := mustCompileB(b, crmSpec, ToWorkspace)
	recs := make([]connector.Record, 1024)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		mapped, err := m.ToContact(recs[i%len(recs)])
		if err != nil {
			b.Fatal(err)
		}
		if h := mapped.Fields.Hash(); len(h) != 64 {
			b.Fatal(h)
		}
		i++
	}
}

// BenchmarkFieldsHash is the hash alone, for the share of the above.
func BenchmarkFieldsHash(b *testing.B) {
	m := mustCompileB(b, crmSpec, ToWorkspace)
	mapped, err := m.ToContact(benchRecord(1))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = mapped.Fields.Hash()
	}
}

// BenchmarkFromContact is the reverse hot path for each webhook event:
// a workspace contact mapped back to canonical fields and hashed (the
// echo check), then to the record's columns.
func BenchmarkFromContact(b *testing.B) {
	m := mustCompileB(b, crmSpec, Both)
	mapped, err := m.ToContact(benchRecord(7))
	if err != nil {
		b.Fatal(err)
	}
	c := workspace.Contact{ID: "CT0000000000000007"}
	c.DefaultFields.FirstName = ptr(mapped.Fields["firstName"])
	c.DefaultFields.LastName = ptr(mapped.Fields["lastName"])
	c.DefaultFields.Company = ptr(mapped.Fields["company"])
	c.DefaultFields.Emails = []workspace.Item{{ID: "it1", Name: "work", Value: mapped.Fields["emails.work"]}}
	c.DefaultFields.PhoneNumbers = []workspace.Item{{ID: "it2", Name: "mobile", Value: mapped.Fields["phoneNumbers.mobile"]}}
	b.ReportAllocs()
	for b.Loop() {
		f := m.FromContact(c)
		if f.Hash() == "" {
			b.Fatal("empty hash")
		}
		if _, err := m.ToRecord(f); err != nil {
			b.Fatal(err)
		}
	}
}

func mustCompileB(b *testing.B, doc string, direction policy.Direction) *Mapper {
	b.Helper()
	var spec Spec
	if err := yaml.Unmarshal([]byte(doc), &spec); err != nil {
		b.Fatal(err)
	}
	m, err := Compile(spec, direction, nil)
	if err != nil {
		b.Fatal(err)
	}
	return m
}
