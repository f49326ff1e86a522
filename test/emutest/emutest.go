// Package emutest drives the workspace emulator's back door from tests,
// as a person using the app would: emulator.App, with a failed call
// ending the test.
package emutest

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// App is the app of the emulator served at a base URL.
type App struct {
	t   testing.TB
	app emulator.App
}

// NewApp returns the app of the emulator at baseURL.
func NewApp(t testing.TB, baseURL string) App {
	return App{t: t, app: emulator.App{BaseURL: baseURL}}
}

// Create creates a contact (with no default source).
func (a App) Create(in workspace.ContactCreate) workspace.Contact {
	a.t.Helper()
	c, err := a.app.CreateContact(context.Background(), in)
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// Patch edits a contact.
func (a App) Patch(id string, p workspace.ContactPatch) workspace.Contact {
	a.t.Helper()
	c, err := a.app.UpdateContact(context.Background(), id, p)
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// Delete deletes a contact.
func (a App) Delete(id string) {
	a.t.Helper()
	if err := a.app.DeleteContact(context.Background(), id); err != nil {
		a.t.Fatal(err)
	}
}
