package main

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// emuAPI drives the emulator in tests: through the API as an operator
// would, and through the back door as a person in the app would.
type emuAPI struct {
	t    *testing.T
	base string
}

func (a *emuAPI) client() *workspace.Client {
	c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: a.base, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

func (a *emuAPI) disable(id string) (workspace.Webhook, error) {
	return a.client().UpdateWebhook(context.Background(), id, workspace.WebhookPatch{Status: workspace.Some(workspace.WebhookDisabled)})
}

func (a *emuAPI) appCreate(first string) workspace.Contact {
	return emutest.NewApp(a.t, a.base).Create(workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{FirstName: first}})
}

func (a *emuAPI) appPatch(id string, p workspace.ContactPatch) workspace.Contact {
	return emutest.NewApp(a.t, a.base).Patch(id, p)
}
