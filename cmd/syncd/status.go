package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("status", "show each connector's last run, records in sync and failures", func(m *Main) Command { return &StatusCommand{m: m} })
}

// StatusCommand shows the status: asked of the running daemon through
// its admin API, or read from the state file when none runs.
type StatusCommand struct{ m *Main }

// Run parses the flags and prints the status.
func (c *StatusCommand) Run(ctx context.Context, args []string) error {
	return c.m.runVerb(ctx, "status", opVerb{
		usage:  "status --config FILE [--json]",
		json:   "print the status as JSON (the admin API's GET /status)",
		indent: true,
		ask: func(ctx context.Context, op operator) (reply, error) {
			st, ready, err := statusAsker(op).Status(ctx)
			if err != nil {
				return nil, err
			}
			return statusAnswer{st, ready}, nil
		},
	}, args)
}

// statusAnswer is the status, and a live daemon's readiness.
type statusAnswer struct {
	st    admin.Status
	ready *admin.Readiness
}

func (a statusAnswer) text(w io.Writer) { printStatus(w, a.st, a.ready, time.Now()) }
func (a statusAnswer) values() []any    { return []any{a.st} }

// printStatus prints the status for a person: a header, the readiness
// checks (of a live daemon), and a table of connectors.
func printStatus(w io.Writer, st admin.Status, ready *admin.Readiness, now time.Time) {
	if st.Live {
		fmt.Fprintf(w, "syncd %s running since %s (%s); state %s, schema %d\n",
			st.Version, st.StartedAt.Local().Format(time.RFC3339), ago(now, st.StartedAt), st.State.Path, st.State.SchemaVersion)
	} else {
		fmt.Fprintf(w, "no daemon holds the state: read from %s, schema %d\n", st.State.Path, st.State.SchemaVersion)
	}
	if ready != nil {
		verdict := "ready"
		if !ready.Ready {
			verdict = "NOT READY"
		}
		var checks []string
		for _, c := range ready.Checks {
			s := c.Name + " ok"
			if !c.OK {
				s = c.Name + " FAILING: " + c.Detail
			}
			checks = append(checks, s)
		}
		fmt.Fprintf(w, "%s: %s\n", verdict, strings.Join(checks, "; "))
	}
	if st.Webhooks != "" {
		fmt.Fprintf(w, "webhook receiver on %s\n", st.Webhooks)
	}
	fmt.Fprintf(w, "dead letters %d, conflicts %d, webhook events waiting %d", st.DeadLetters, st.Conflicts, st.InboxPending)
	if logsActivities(st) {
		fmt.Fprintf(w, ", call and text events waiting %d (all connectors)", st.ActivitiesPending)
	}
	fmt.Fprintln(w)
	if st.FieldWarnings > 0 {
		fmt.Fprintf(w, "field warnings %d: records synced without a value that did not map (syncd deadletters list shows them)\n", st.FieldWarnings)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONNECTOR\tTYPE\tMODE\tLAST RUN\tRESULT\tIN SYNC\tFAILING\tCONFLICTS\tLAST SUCCESS")
	for _, cs := range st.Connectors {
		last, result := "never", "-"
		if r := cs.LastRun; r != nil {
			switch {
			case cs.Running:
				last, result = fmt.Sprintf("%s started %s", r.Kind, ago(now, r.StartedAt)), "running"
			case r.FinishedAt.IsZero():
				last, result = fmt.Sprintf("%s started %s", r.Kind, ago(now, r.StartedAt)), "interrupted"
			default:
				last = fmt.Sprintf("%s %s (%s)", r.Kind, ago(now, r.FinishedAt), r.Duration(now).Round(time.Second))
				result = r.Result()
				result += fmt.Sprintf(" (%d created, %d updated, %d deleted, %d failed)", r.Created, r.Updated, r.Deleted, r.Failed)
			}
		}
		success := "never"
		if !cs.LastSuccess.IsZero() {
			success = ago(now, cs.LastSuccess)
		}
		schedule := cs.Schedule
		if cs.Mode != "" {
			schedule = cs.Mode
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", cs.Name, cs.Type, schedule, last, result, cs.Links, cs.DeadLetters, cs.Conflicts, success)
	}
	tw.Flush()
	for _, cs := range st.Connectors {
		if p := cs.Progress; p != nil {
			fmt.Fprintf(w, "\n%s: %s %s, %s\n", cs.Name, p.Kind, p.Phase, p)
		}
	}
	for _, cs := range st.Connectors {
		if r := cs.LastRun; r != nil && r.Stopped == state.StoppedBudget {
			fmt.Fprintf(w, "\n%s: last run stopped at the API budget; the next scheduled pass resumes it", cs.Name)
		} else if r != nil && r.Err != "" {
			fmt.Fprintf(w, "\n%s: last run stopped early: %s", cs.Name, r.Err)
		}
		if cs.Notice != "" {
			fmt.Fprintf(w, "\n%s: %s", cs.Name, cs.Notice)
		}
		for _, q := range cs.Quotas {
			fmt.Fprintf(w, "\n%s: API %s: %s", cs.Name, q.Name, quotaLine(q))
		}
		if a := cs.Activities; a != nil {
			fmt.Fprintf(w, "\n%s: calls and texts: %d logged, %d updated, %d skipped (no record has the number), %d failed",
				cs.Name, a.Logged, a.Updated, a.Skipped, a.Failed)
		}
	}
	for _, cs := range st.Connectors {
		if r := cs.RefusedDelete; r != nil {
			fmt.Fprintf(w, "\n%s: MASS DELETE REFUSED %s (%s): %s\n", cs.Name, ago(now, r.At), r.Kind, r.Reason)
			fmt.Fprintf(w, "  the contacts stay until you act: check the source; if the records are gone for good, run: %s\n", r.Command)
			fmt.Fprintf(w, "  if they come back, a resync clears this: %s\n", r.Undo)
		}
	}
	for _, o := range st.ReplicationOrphans {
		fmt.Fprintf(w, "\nwarning: %s: drop it with %s\n", o, o.Drop)
	}
	for _, cs := range st.Connectors {
		if cs.DeadLetters > 0 {
			fmt.Fprintf(w, "\nsee the failing records with: syncd deadletters list --connector %s\n", cs.Name)
			break
		}
	}
}

// quotaLine says how much of an API allowance is spent and left.
func quotaLine(q admin.Quota) string {
	s := fmt.Sprintf("%d used", q.Used)
	if q.Limit > 0 {
		s = fmt.Sprintf("%d of %d used", q.Used, q.Limit)
	}
	if q.Budget > 0 && q.Remaining >= 0 {
		s += fmt.Sprintf(", %d left of syncd's budget (%g%%)", q.Remaining, q.Budget*100)
	}
	if !q.ResetAt.IsZero() {
		s += ", renews " + q.ResetAt.Local().Format(time.RFC3339)
	}
	return s
}

// ago says how long before now t was, to the second.
func ago(now, t time.Time) string {
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}

// logsActivities reports whether a connector of st logs calls and texts.
func logsActivities(st admin.Status) bool {
	for _, cs := range st.Connectors {
		if cs.Activities != nil {
			return true
		}
	}
	return false
}
