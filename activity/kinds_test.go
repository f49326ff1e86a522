package activity_test

import (
	"strings"
	"testing"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
)

// kindsOnly is a writer that can log only its kinds: KindProblems reads
// nothing else of it.
type kindsOnly struct {
	connector.ActivityWriter
	kinds []connector.ActivityKind
}

func (k kindsOnly) ActivityKinds() []connector.ActivityKind { return k.kinds }

// TestKindProblems: an activities.log entry whose kind the writer cannot
// log is refused with its path and the kinds the writer can log.
func TestKindProblems(t *testing.T) {
	both := []connector.ActivityKind{connector.ActivityCall, connector.ActivityMessage}
	for _, tc := range []struct {
		name  string
		kinds []connector.ActivityKind
		log   []policy.ActivityLog
		want  []string
	}{
		{"both kinds", both, []policy.ActivityLog{policy.LogCalls, policy.LogMessages, policy.LogSummaries}, nil},
		{"calls only, texts asked", []connector.ActivityKind{connector.ActivityCall},
			[]policy.ActivityLog{policy.LogCalls, policy.LogMessages},
			[]string{"connectors[crm].activities.log[1]: this connector cannot log messages", "it can log calls"}},
		{"texts only, a call's parts asked", []connector.ActivityKind{connector.ActivityMessage},
			[]policy.ActivityLog{policy.LogMessages, policy.LogCalls, policy.LogTranscripts},
			[]string{"activities.log[1]: this connector cannot log calls", "activities.log[2]: this connector cannot log transcripts (it goes into a call activity); it can log messages"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := activity.KindProblems("crm", kindsOnly{kinds: tc.kinds}, tc.log)
			all := strings.Join(got, "\n")
			if len(tc.want) == 0 && len(got) != 0 {
				t.Fatalf("problems = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems = %q, want one with %q", got, w)
				}
			}
			if err := activity.CheckKinds("crm", kindsOnly{kinds: tc.kinds}, tc.log); (err != nil) != (len(tc.want) > 0) {
				t.Errorf("CheckKinds = %v", err)
			}
		})
	}
}
