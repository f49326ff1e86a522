package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// salesforceDemo shows the two-way sync with Salesforce: an in-process
// Salesforce test org (login host and instance, the documented REST API)
// and the workspace emulator, with the real receiver taking the
// emulator's signed webhooks.
func (c *runner) salesforceDemo(ctx context.Context, dir string, rows int, serve bool) error {
	out := c.o.Out
	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	org := salesforceemu.NewServer(salesforceemu.Options{RealClock: true, Used: 1200, DailyLimit: 15000})
	defer org.Close()
	var ids []string
	for _, p := range SamplePeople(rows) {
		ids = append(ids, org.Add("Contact", map[string]any{"FirstName": p[1], "LastName": p[2], "Email": p[3], "Phone": p[4], "Title": p[5]}))
	}
	fmt.Fprintf(out, "1. Started a workspace emulator at %s and a Salesforce test org (login host %s, instance %s) with %d Contacts\n",
		emu.URL, org.LoginURL, org.InstanceURL, rows)

	demo, err := c.startTwoWayDemo(ctx, dir, emu.URL, "salesforce", salesforceDemoConnectors(org))
	if err != nil {
		return err
	}
	defer demo.Close()
	d, cfg := demo.d, demo.cfg
	fmt.Fprintf(out, "2. Wrote %s (type salesforce, direction: both, client credentials flow), subscribed the receiver at %s\n", demo.cfgPath, cfg.Webhooks.PublicURL)
	demo.printHealthPage(out)

	// SystemModstamp has whole seconds and a read window ends at the
	// clock, exclusive: a pass sees what changed before its second.
	settle := func() { time.Sleep(1100 * time.Millisecond) }
	settle()
	sums, err := d.RunOnce(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Forward pass: every Contact becomes a workspace contact (source custom-salesforce), %d token call\n   %s\n", org.TokenCalls(), sums[0])

	contacts := emu.Contacts()
	before := org.Stats()
	for i := 0; i < 3 && i < len(contacts); i++ {
		if _, err := (emulator.App{BaseURL: emu.URL}).UpdateContact(ctx, contacts[i].ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some(fmt.Sprintf("Edited-%d", i+1))}}); err != nil {
			return err
		}
	}
	reached := waitFor(10*time.Second, func() bool {
		n := 0
		for _, r := range org.Records("Contact") {
			if s, _ := r.Fields["LastName"].(string); strings.HasPrefix(s, "Edited-") {
				n++
			}
		}
		return n == 3
	})
	after := org.Stats()
	fmt.Fprintf(out, "4. Three edits made in the workspace app reached Salesforce: %v, in %d sObject Collections update call(s)\n",
		reached, after.Requests[salesforceemu.RouteUpdate]-before.Requests[salesforceemu.RouteUpdate])

	settle()
	wsBefore := emu.Stats()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "5. Forward pass reads those Contacts back (syncd's writes moved their SystemModstamp): recognised as its own, %d PATCH\n   %s\n",
		emu.Stats().Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact], sums[0])

	// Someone edits a Contact in Salesforce.
	if err := org.Update(ids[len(ids)-1], map[string]any{"Title": "Countess"}); err != nil {
		return err
	}
	if err := org.Update(ids[len(ids)-1], map[string]any{"LastName": "Lovelace-Byron"}); err != nil {
		return err
	}
	settle()
	before, wsBefore = org.Stats(), emu.Stats()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	time.Sleep(time.Second) // let the workspace's webhook for that PATCH come back
	after = org.Stats()
	fmt.Fprintf(out, "6. An edit made in Salesforce: %d PATCH to the workspace; its webhook came back as an echo and was dropped: %d Salesforce writes\n   %s\n",
		emu.Stats().Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact],
		after.Requests[salesforceemu.RouteUpdate]-before.Requests[salesforceemu.RouteUpdate], sums[0])

	// Someone merges a duplicate in Salesforce: the second Contact into a
	// new one.
	survivor := org.Add("Contact", map[string]any{"FirstName": "Alan", "LastName": "Turing-Merged", "Email": "alan.turing@example.com"})
	if err := org.Merge(survivor, ids[1]); err != nil {
		return err
	}
	settle()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	moved := "no"
	for _, ct := range emu.Contacts() {
		if ct.ExternalID != nil && *ct.ExternalID == survivor {
			moved = fmt.Sprintf("contact %s now has externalId %s and lastName %q", ct.ID, survivor, derefStr(ct.DefaultFields.LastName))
		}
	}
	fmt.Fprintf(out, "7. A Contact merged into another in Salesforce: its workspace contact follows the survivor (%s)\n   %s\n", moved, sums[0])

	st, err := d.Status(ctx)
	if err != nil {
		return err
	}
	for _, cs := range st.Connectors {
		for _, q := range cs.Quotas {
			fmt.Fprintf(out, "8. API usage from Sforce-Limit-Info: %d of %d daily calls; syncd stops a pass at %.0f%% of them\n", q.Used, q.Limit, q.Budget*100)
		}
	}
	logged, err := callAndTextOn(ctx, emu, salesforceLogged(org))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "9. A call (with its summary) and a text made in the workspace app are on the Salesforce Contact's activity timeline: %v (Tasks, TaskSubtype Call with CallType and CallDurationInSeconds, and a Task for the text)\n", logged)
	fmt.Fprintf(out, "10. Look around: curl -s %s/_emulator/contacts ; the state file: %s\n", emu.URL, cfg.State.Path)
	return demo.finish(ctx, out, 11, serve)
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func salesforceDemoConnectors(org *salesforceemu.Server) string {
	return fmt.Sprintf(`  - name: sf
    type: salesforce
    source: custom-salesforce
    direction: both
    onSourceDelete: delete
    schedule: "@every 10s"
    settings:
      loginURL: %s
      clientId: %s
      clientSecret: %s
      apiVersion: "62.0"
      object: Contact
      dailyBudget: 0.5
      settle: 0s
    mapping:
      fields:
        firstName: FirstName
        lastName: { from: LastName, fallback: "(no last name)" }
        emails.work: { from: Email, transform: [email] }
        phoneNumbers.work: { from: Phone, transform: [e164], region: US }
    activities:
      log: [calls, messages, summaries]
`, org.LoginURL, org.ClientID(), org.ClientSecret())
}
