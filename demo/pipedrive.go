package demo

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// pipedriveDemo shows the two-way sync with Pipedrive: an in-process
// Pipedrive test server (API v2 persons, the recents feed, the Lite
// plan's burst limit of 20 requests per 2 s) and the workspace emulator.
func (c *runner) pipedriveDemo(ctx context.Context, dir string, rows int, serve bool) error {
	out := c.o.Out
	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	pd := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 20})
	defer pd.Close()
	ids := addDemoPersons(pd, rows)
	fmt.Fprintf(out, "1. Started a workspace emulator at %s and a Pipedrive test server at %s with %d persons (work and home e-mail each)\n", emu.URL, pd.URL, rows)
	time.Sleep(1100 * time.Millisecond) // read windows end at whole seconds of the clock

	demo, err := c.startTwoWayDemo(ctx, dir, emu.URL, "pipedrive", pipedriveDemoConnectors(pd.URL, pd.Token()))
	if err != nil {
		return err
	}
	defer demo.Close()
	cfg, d := demo.cfg, demo.d
	fmt.Fprintf(out, "2. Wrote %s (direction: both, onSourceDelete: delete)\n", filepath.Join(dir, "syncd.yaml"))
	demo.printHealthPage(out)

	sums, err := d.RunOnce(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Forward pass: every Pipedrive person becomes a workspace contact (source custom-pipedrive)\n   %s\n", sums[0])
	if err := demoEmailEdits(ctx, out, emu, pd); err != nil {
		return err
	}

	time.Sleep(1100 * time.Millisecond)
	wsBefore := emu.Stats()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "5. Forward pass reads those persons back (their update_time moved): recognised as syncd's own writes, %d PATCH\n   %s\n",
		emu.Stats().Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact], sums[0])

	if err := deleteAndMerge(pd, ids); err != nil {
		return err
	}
	time.Sleep(1100 * time.Millisecond)
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "6. A person deleted and two merged in Pipedrive: the deleted one's contact and the merged-away duplicate are deleted (onSourceDelete: delete), the survivor read again\n   %s\n", sums[0])
	if err := demoQuotas(ctx, out, d, pd); err != nil {
		return err
	}
	logged, err := callAndTextOn(ctx, emu, pipedriveLogged(pd))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "8. A call (with its summary) and a text made in the workspace app are on the Pipedrive person: %v (done activities: a call with its duration and note, and a text)\n", logged)
	fmt.Fprintf(out, "9. Look around: curl -s %s/_emulator/contacts ; the state file: %s\n", emu.URL, cfg.State.Path)
	return demo.finish(ctx, out, 10, serve)
}

// addDemoPersons stores the demo's people as persons with a work and a
// home e-mail address, a mobile number and an organization.
func addDemoPersons(pd *pipedriveemu.Server, rows int) []string {
	ids := make([]string, 0, rows)
	for i, p := range SamplePeople(rows) {
		ids = append(ids, pd.Add(pipedriveemu.Person{Name: p[1] + " " + p[2], OrgID: pd.AddOrg(p[5]),
			Emails: []pipedriveemu.Item{{Value: p[3], Label: "work"}, {Value: fmt.Sprintf("home%d@example.net", i+1), Label: "home"}},
			Phones: []pipedriveemu.Item{{Value: p[4], Label: "mobile"}}}))
	}
	return ids
}

// demoEmailEdits edits three work e-mail addresses in the workspace's
// app and reports how they reached Pipedrive.
func demoEmailEdits(ctx context.Context, out io.Writer, emu *demoEmulator, pd *pipedriveemu.Server) error {
	before := pd.Stats()
	start := time.Now()
	contacts := emu.Contacts()
	for i := 0; i < 3 && i < len(contacts); i++ {
		var items []workspace.ItemPatch
		for _, e := range contacts[i].DefaultFields.Emails {
			v := "new." + e.Value
			items = append(items, workspace.ItemPatch{ID: e.ID, Name: e.Name, Value: &v})
		}
		if _, err := (emulator.App{BaseURL: emu.URL}).UpdateContact(ctx, contacts[i].ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Emails: items}}); err != nil {
			return err
		}
	}
	reached := waitFor(10*time.Second, func() bool { return countNewWork(pd) == 3 })
	kept := true
	for _, p := range pd.Persons() {
		kept = kept && len(p.Emails) == 2
	}
	fmt.Fprintf(out, "4. Three e-mail edits made in the workspace app reached Pipedrive: %v, after %s, in %d PATCH; every unmapped home address kept: %v\n",
		reached, time.Since(start).Round(time.Millisecond), pd.Stats().Requests[pipedriveemu.RouteUpdatePerson]-before.Requests[pipedriveemu.RouteUpdatePerson], kept)
	return nil
}

// deleteAndMerge deletes the last person and merges the one before into
// the one before that, as users do in Pipedrive.
func deleteAndMerge(pd *pipedriveemu.Server, ids []string) error {
	if len(ids) < 3 {
		return nil
	}
	if err := pd.Delete(ids[len(ids)-1]); err != nil {
		return err
	}
	return pd.Merge(ids[len(ids)-2], ids[len(ids)-3])
}

// demoQuotas prints what Pipedrive saw and the quotas /status shows.
func demoQuotas(ctx context.Context, out io.Writer, d *daemon.Daemon, pd *pipedriveemu.Server) error {
	st, err := d.Status(ctx)
	if err != nil {
		return err
	}
	all := pd.Stats()
	calls := 0
	for _, n := range all.Requests {
		calls += n
	}
	fmt.Fprintf(out, "7. Pipedrive saw %d API calls (%d tokens by its documented costs), %d answered 429; quotas in /status:\n",
		calls, all.TokensSpent, all.RateLimited())
	for _, q := range st.Connectors[0].Quotas {
		fmt.Fprintf(out, "   %s: %d of %d used, %d remaining\n", q.Name, q.Used, q.Limit, q.Remaining)
	}
	return nil
}

func countNewWork(pd *pipedriveemu.Server) int {
	n := 0
	for _, p := range pd.Persons() {
		for _, e := range p.Emails {
			if e.Label == "work" && strings.HasPrefix(e.Value, "new.") {
				n++
			}
		}
	}
	return n
}

func pipedriveDemoConnectors(pdURL, token string) string {
	return fmt.Sprintf(`  - name: pd
    type: pipedrive
    source: custom-pipedrive
    direction: both
    schedule: "@every 10s"
    onSourceDelete: delete
    settings:
      apiToken: %s
      baseURL: %s
      lookback: 0s
    mapping:
      fields:
        firstName: first_name
        lastName: last_name
        company: { from: org_name, direction: to-workspace }
        emails.work: emails.work
        phoneNumbers.mobile: { from: phones.mobile, transform: [e164], region: US }
    activities:
      log: [calls, messages, summaries]
`, token, pdURL)
}
