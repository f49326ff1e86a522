package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/workspace"
)

// hubspotDemo shows the two-way sync with HubSpot: an in-process HubSpot
// test server (the documented CRM v3 behaviour) and the workspace
// emulator, with the real receiver taking the emulator's signed webhooks.
func (c *runner) hubspotDemo(ctx context.Context, dir string, rows int, serve bool) error {
	out := c.o.Out
	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	hs := hubspotemu.NewServer(hubspotemu.Options{Seed: 1, KeepBatchOrder: true})
	defer hs.Close()
	for _, p := range SamplePeople(rows) {
		hs.Add(map[string]string{"firstname": p[1], "lastname": p[2], "email": p[3], "phone": p[4], "company": p[5]})
	}
	fmt.Fprintf(out, "1. Started a workspace emulator at %s and a HubSpot test server at %s with %d contacts\n", emu.URL, hs.URL, rows)

	demo, err := c.startTwoWayDemo(ctx, dir, emu.URL, "hubspot", hubspotDemoConnectors(hs.URL, hs.Token()))
	if err != nil {
		return err
	}
	defer demo.Close()
	d, cfg := demo.d, demo.cfg
	fmt.Fprintf(out, "2. Wrote %s (direction: both), subscribed the receiver at %s to contact, call and message webhooks\n", demo.cfgPath, cfg.Webhooks.PublicURL)
	demo.printHealthPage(out)

	sums, err := d.RunOnce(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Forward pass: every HubSpot contact becomes a workspace contact (source custom-hubspot)\n   %s\n", sums[0])

	// A person edits three contacts in the workspace's app.
	before := hs.Stats()
	start := time.Now()
	if err := editThreeCompanies(ctx, emu); err != nil {
		return err
	}
	reached := waitFor(10*time.Second, func() bool {
		n := 0
		for _, hc := range hs.Contacts() {
			if len(hc.Properties["company"]) > 13 && hc.Properties["company"][:13] == "Head of Sales" {
				n++
			}
		}
		return n == 3
	})
	after := hs.Stats()
	fmt.Fprintf(out, "4. Three edits made in the workspace app reached HubSpot: %v, after %s, in %d batch/update call(s)\n",
		reached, time.Since(start).Round(time.Millisecond), after.Requests[hubspotemu.RouteBatchUpdate]-before.Requests[hubspotemu.RouteBatchUpdate])

	wsBefore := emu.Stats()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	wsAfter := emu.Stats()
	fmt.Fprintf(out, "5. Forward pass reads those HubSpot contacts back (their lastmodifieddate moved): recognised as syncd's own writes, %d PATCH\n   %s\n",
		wsAfter.Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact], sums[0])

	// Someone edits a contact in HubSpot.
	hc := hs.Contacts()[len(hs.Contacts())-1]
	if err := hs.Update(hc.ID, map[string]string{"lastname": "Lovelace-Byron"}); err != nil {
		return err
	}
	before, wsBefore = hs.Stats(), emu.Stats()
	// A read window ends at the clock, exclusive: an edit in the very
	// millisecond a pass starts is read by the next pass. No schedule
	// runs that close to an edit; the demo waits as time would.
	time.Sleep(20 * time.Millisecond)
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	time.Sleep(time.Second) // let the workspace's webhook for that PATCH come back
	after, wsAfter = hs.Stats(), emu.Stats()
	fmt.Fprintf(out, "6. An edit made in HubSpot: %d PATCH to the workspace; its webhook came back as an echo and was dropped: %d HubSpot writes\n   %s\n",
		wsAfter.Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact],
		after.Requests[hubspotemu.RouteBatchUpdate]-before.Requests[hubspotemu.RouteBatchUpdate], sums[0])
	logged, err := callAndText(ctx, emu, hs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "7. A call (with its summary) and a text made in the workspace app are on the HubSpot contact's timeline: %v (a calls object and a communications object, channel SMS)\n", logged)
	fmt.Fprintf(out, "8. Look around: curl -s %s/_emulator/contacts ; the state file: %s\n", emu.URL, cfg.State.Path)
	return demo.finish(ctx, out, 9, serve)
}

// callAndText has a linked contact call in and text the workspace, and
// reports whether both reach the HubSpot contact, the call with its
// summary.
func callAndText(ctx context.Context, emu *demoEmulator, hs *hubspotemu.Server) (bool, error) {
	return callAndTextOn(ctx, emu, func() bool {
		calls := hs.Engagements(hubspotemu.ObjectCalls)
		return len(calls) == 1 && strings.Contains(calls[0].Properties["hs_call_body"], "annual plan") &&
			len(hs.Engagements(hubspotemu.ObjectCommunications)) == 1
	})
}

func hubspotDemoConnectors(hsURL, token string) string {
	return fmt.Sprintf(`  - name: hubspot
    type: hubspot
    direction: both
    schedule: "@every 10s"
    settings:
      token: %s
      baseURL: %s
      lookback: 0s
    mapping:
      externalId: hs_object_id
      fields:
        firstName: firstname
        lastName: lastname
        company: company
        emails.work: { from: email, transform: [email] }
        phoneNumbers.work: { from: phone, transform: [e164], region: US }
    activities:
      log: [calls, messages, summaries]
`, token, hsURL)
}
