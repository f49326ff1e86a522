package faults

import (
	"flag"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
)

var traceLinks = flag.Bool("tracelinks", false, "poll the links every millisecond and show their changes in failure reports (slow; for diagnosis)")

// watchLinks records every change of a link seen by polling, when
// -tracelinks is set: "LINK <externalId> <contact> <firstName...>".
func (w *world) watchLinks() {
	if !*traceLinks {
		return
	}
	go func() {
		last := map[string]string{}
		for w.ctx.Err() == nil {
			seen := map[string]bool{}
			_ = w.d.Store().Links.ForEach(e2e.Connector, func(l state.Link) error {
				s := fmt.Sprintf("LINK ext=%s contact=%s fields=%v contactUpdatedAt=%s", l.ExternalID, l.ContactID, l.Fields, l.ContactUpdatedAt.Format("15:04:05.000"))
				seen[l.ExternalID] = true
				if last[l.ExternalID] != s {
					w.trace.Add(s)
					last[l.ExternalID] = s
				}
				return nil
			})
			for ext := range last {
				if !seen[ext] {
					w.trace.Add(fmt.Sprintf("LINK ext=%s removed", ext))
					delete(last, ext)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
}
