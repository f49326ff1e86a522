package bench

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/bench/workload"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
)

// Mapping targets: one changed record mapped and hashed.
const (
	mappingMaxNs     = 5000
	mappingMaxAllocs = 30
)

// Mapping measures the mapping of one changed record and the hash of its
// canonical fields (mapping's BenchmarkToContactAndHash, run in this
// process with testing.Benchmark): time and allocations per record. The
// CPU time per record is given too, as it holds on a busy machine.
func Mapping() ([]Figure, error) {
	var spec mapping.Spec
	if err := yaml.Unmarshal([]byte(workload.CRMSpec), &spec); err != nil {
		return nil, err
	}
	m, err := mapping.Compile(spec, mapping.ToWorkspace, nil)
	if err != nil {
		return nil, err
	}
	recs := make([]connector.Record, 1024)
	for i := range recs {
		recs[i] = workload.Record(i)
	}
	var failed error
	total := 0 // records mapped over every round testing.Benchmark runs
	cpu0 := selfCPU()
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mapped, err := m.ToContact(recs[i%len(recs)])
			if err != nil {
				failed = err
				b.FailNow()
			}
			if h := mapped.Fields.Hash(); len(h) != 64 {
				failed = fmt.Errorf("hash %q", h)
				b.FailNow()
			}
			i++
		}
		total += i
	})
	cpu := selfCPU() - cpu0
	if failed != nil {
		return nil, failed
	}
	ns, allocs := res.NsPerOp(), res.AllocsPerOp()
	scn := "mapping and hashing one changed record (BenchmarkToContactAndHash)"
	return []Figure{
		fig(scn, "time per record", fmt.Sprintf("%.1f µs", float64(ns)/1000), fmt.Sprintf("<= %.0f µs", float64(mappingMaxNs)/1000), ns <= mappingMaxNs),
		fig(scn, "allocations per record", fmt.Sprint(allocs), fmt.Sprintf("<= %d", mappingMaxAllocs), allocs <= mappingMaxAllocs),
		fig(scn, "CPU time per record (this process, all benchmark rounds)", fmt.Sprintf("%.1f µs", float64(cpu.Nanoseconds())/float64(max(total, 1))/1000), "", true),
	}, nil
}

// selfCPU is the user and system time this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
