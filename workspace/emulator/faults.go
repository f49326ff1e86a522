package emulator

import "github.com/syncd-io/syncd/internal/logfield"

// FaultHeader names the injected fault ("500", "429", "latency") on the
// answer that met it, for tests; the service sends no such header.
const FaultHeader = "Emulator-Fault"

// fault is an injected failure.
type fault int

// The faults, drawn with equal probability once a request meets one.
const (
	faultNone        fault = iota
	faultServerError       // 500 with the error body
	faultTooMany           // 429 with the error body
	faultLatency           // FaultLatency before handling
	faultLost              // handled (a write is applied), then the connection is closed
)

var faultNames = map[fault]string{faultServerError: "500", faultTooMany: "429", faultLatency: "latency", faultLost: "lost"}

// String names the fault as Stats.FaultsByKind does.
func (f fault) String() string { return faultNames[f] }

// drawFault decides whether the current request meets a fault. The
// decisions come from one random sequence seeded by Options.Seed, drawn
// once per authenticated, admitted request: the same sequence of requests
// meets the same faults.
func (e *Emulator) drawFault(route string) fault {
	e.faultMu.Lock()
	p := e.faultRate
	f := faultNone
	if p > 0 && e.faultRand.Float64() < p {
		f = fault(1 + e.faultRand.Intn(4))
	}
	e.faultMu.Unlock()
	if f == faultNone {
		return f
	}
	e.statsMu.Lock()
	e.stats.Faults++
	e.stats.FaultsByKind[f.String()]++
	e.statsMu.Unlock()
	e.opts.Log.WithField(logfield.Route, route).WithField(logfield.Fault, f.String()).Debug("emulator fault injected")
	return f
}
