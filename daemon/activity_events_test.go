package daemon_test

import (
	"slices"
	"testing"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/policy"
)

// TestWebhookEventsFor: the subscription asks for what the configuration
// logs and reads, and nothing more.
func TestWebhookEventsFor(t *testing.T) {
	cases := []struct {
		name string
		cc   []config.ConnectorConfig
		want []string
	}{
		{"nothing asked: the contact events, as before", []config.ConnectorConfig{{Direction: policy.ToWorkspace}},
			[]string{"contact.updated", "contact.deleted"}},
		{"calls only, no write-back", []config.ConnectorConfig{{Direction: policy.ToWorkspace, Activities: config.ActivitiesConfig{Log: []policy.ActivityLog{policy.LogCalls}}}},
			[]string{"call.completed"}},
		{"texts and summaries with write-back", []config.ConnectorConfig{{Direction: policy.Both,
			Activities: config.ActivitiesConfig{Log: []policy.ActivityLog{policy.LogMessages, policy.LogCalls, policy.LogSummaries}}}},
			[]string{"contact.updated", "contact.deleted", "call.completed", "call.summary.completed", "message.received", "message.delivered"}},
		{"two connectors, one each", []config.ConnectorConfig{
			{Direction: policy.ToWorkspace, Activities: config.ActivitiesConfig{Log: []policy.ActivityLog{policy.LogCalls, policy.LogRecordings}}},
			{Direction: policy.ToWorkspace, Activities: config.ActivitiesConfig{Log: []policy.ActivityLog{policy.LogMessages, policy.LogTranscripts}}}},
			[]string{"call.completed", "call.recording.completed", "call.transcript.completed", "message.received", "message.delivered"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := daemon.WebhookEventsFor(&config.Config{Connectors: c.cc})
			a, b := slices.Clone(got), slices.Clone(c.want)
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				t.Errorf("events = %v, want %v", got, c.want)
			}
		})
	}
}
