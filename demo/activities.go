package demo

import (
	"context"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// demoSummary is what the demos' call summary says, looked for in the
// CRM's activity.
const demoSummary = "Asked about the annual plan"

// callAndTextOn has a linked contact call in (the call then summarized)
// and text the workspace in its app, and reports whether logged, polled
// for up to 10 s, sees both on the CRM record.
func callAndTextOn(ctx context.Context, emu *demoEmulator, logged func() bool) (bool, error) {
	var phone string
	for _, c := range emu.Contacts() {
		if len(c.DefaultFields.PhoneNumbers) > 0 {
			phone = c.DefaultFields.PhoneNumbers[0].Value
			break
		}
	}
	app := emulator.App{BaseURL: emu.URL}
	id, err := app.Call(ctx, emulator.CallIn{Participants: []string{phone}, Direction: workspace.Incoming, Duration: 95})
	if err != nil {
		return false, err
	}
	if err := app.Summarize(ctx, id, []string{demoSummary}, []string{"Send the price list"}); err != nil {
		return false, err
	}
	if _, err := app.Message(ctx, emulator.MessageIn{From: phone, To: []string{emulator.PhoneNumber}, Text: "Thanks, talk soon", Direction: workspace.Incoming}); err != nil {
		return false, err
	}
	return waitFor(10*time.Second, logged), nil
}

// salesforceLogged reports whether the org holds the demo's call, with
// its summary, and text as Tasks on a Contact.
func salesforceLogged(org *salesforceemu.Server) func() bool {
	return func() bool {
		var calls, texts int
		for _, r := range org.Records("Task") {
			if who, _ := r.Fields["WhoId"].(string); who == "" {
				continue
			}
			desc, _ := r.Fields["Description"].(string)
			switch r.Fields["TaskSubtype"] {
			case "Call":
				if strings.Contains(desc, demoSummary) {
					calls++
				}
			default:
				texts++
			}
		}
		return calls == 1 && texts == 1
	}
}

// pipedriveLogged reports whether the server holds the demo's call, with
// its summary, and text as done activities on a person.
func pipedriveLogged(pd *pipedriveemu.Server) func() bool {
	return func() bool {
		var calls, texts int
		for _, a := range pd.Activities() {
			if a.PersonID == 0 || !a.Done {
				continue
			}
			if a.Type == "call" && strings.Contains(a.Note, demoSummary) {
				calls++
			} else if a.Type != "call" {
				texts++
			}
		}
		return calls == 1 && texts == 1
	}
}
