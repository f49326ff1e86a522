package daemon

import (
	"testing"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
)

// pollsTable is a source that says whether it polls its table.
type pollsTable struct {
	connector.Source
	polls bool
}

func (p pollsTable) PollsTable() bool { return p.polls }

// Only a polled table whose edits flow back is read between passes: a
// change stream must not be read twice, and a CRM's reads cost quota.
func TestObservesOnlyPolledTablesThatWriteBack(t *testing.T) {
	for _, tc := range []struct {
		name        string
		src         connector.Source
		dir         policy.Direction
		incremental bool
		want        bool
	}{
		{name: "polled table, both ways", src: pollsTable{polls: true}, dir: policy.Both, incremental: true, want: true},
		{name: "streamed table", src: pollsTable{polls: false}, dir: policy.Both, incremental: true},
		{name: "one way", src: pollsTable{polls: true}, dir: policy.ToWorkspace, incremental: true},
		{name: "not incremental", src: pollsTable{polls: true}, dir: policy.Both},
		{name: "not a table (a CRM)", src: nil, dir: policy.Both, incremental: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Connector{Source: tc.src, Config: config.ConnectorConfig{Direction: tc.dir}, Type: connector.Type{Incremental: tc.incremental}}
			if got := c.observes(); got != tc.want {
				t.Errorf("observes() = %v, want %v", got, tc.want)
			}
		})
	}
}
