package daemon_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// customFieldsDaemon is a daemon syncing csv (a CSV file's content),
// with the custom fields of custom (target: column), into an emulator
// that defines vip (boolean), seats (number) and renewal (date), in the
// tests' form.
func customFieldsDaemon(t *testing.T, csv string, custom map[string]string) (*daemon.Daemon, *emulator.Emulator, error) {
	t.Helper()
	emu := emulator.New(emulator.Options{APIKey: "k", Rate: -1, CustomFields: []workspace.CustomFieldDefinition{
		{Name: "VIP", Key: "vip", Type: workspace.FieldBoolean}, {Name: "Seats", Key: "seats", Type: workspace.FieldNumber},
		{Name: "Renewal", Key: "renewal", Type: workspace.FieldDate}}})
	t.Cleanup(emu.Close)
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	path := filepath.Join(dir, "contacts.csv")
	if err := os.WriteFile(path, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: srv.URL, APIKey: "k", RateLimit: 1000, Burst: 100, CustomFieldValues: emulator.TestCustomFieldValues()},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Settings: map[string]any{"path": path},
			Mapping: configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	for target, column := range custom {
		f.Connectors[0].Mapping.Fields[target] = configfile.From(column)
	}
	cfg, err := config.ParseConfig(f.YAML(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet()})
	if err == nil {
		t.Cleanup(func() { d.Close() })
	}
	return d, emu, err
}

// TestDaemonWritesCustomFieldsByType: the daemon reads the definitions
// once at start-up and writes each value in the form of its type; a value
// that does not parse sets only its record aside, naming the field.
func TestDaemonWritesCustomFieldsByType(t *testing.T) {
	d, emu, err := customFieldsDaemon(t, "id,first_name,vip,seats,renewal\n1,Ann,yes,43.0,2023-01-02\n2,Bob,no,many,2023-01-02\n",
		map[string]string{"custom.vip": "vip", "custom.seats": "seats", "custom.renewal": "renewal"})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := d.RunOnce(context.Background())
	if err != nil || sums[0].Created != 1 || sums[0].Failed != 1 {
		t.Fatalf("run: %v %v; want 1 created, 1 failed", sums, err)
	}
	if n := emu.Stats().Requests[workspace.RouteCustomFields]; n != 1 {
		t.Errorf("%d reads of the definitions, want 1", n)
	}
	dls, err := d.Store().DeadLetters.List("crm")
	if err != nil || len(dls) != 1 || dls[0].Key != "2" || !strings.Contains(dls[0].Reason, "custom.seats") || !strings.Contains(dls[0].Reason, "not a number") {
		t.Fatalf("dead letters %+v, %v; want row 2's, naming custom.seats", dls, err)
	}
	var ann workspace.Contact
	for _, c := range emu.Contacts() {
		ann = c
	}
	got := map[string]string{}
	for _, f := range ann.CustomFields {
		b, _ := json.Marshal(f.Value)
		got[f.Key] = string(b)
	}
	want := map[string]string{"vip": `true`, "seats": `43`, "renewal": `"2023-01-02T00:00:00.000Z"`}
	if emulator.TestCustomFieldValues() == workspace.ValuesArrays {
		want = map[string]string{"vip": `["true"]`, "seats": `["43"]`, "renewal": `["2023-01-02T00:00:00.000Z"]`}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("contact's custom fields %v, want %v", got, want)
	}
}

// TestDaemonRefusesUnknownCustomFieldKey: a mapping naming a custom field
// the workspace does not define stops the start-up with the fix.
func TestDaemonRefusesUnknownCustomFieldKey(t *testing.T) {
	_, _, err := customFieldsDaemon(t, "id,first_name,tier\n1,Ann,gold\n", map[string]string{"custom.tier": "tier"})
	if err == nil || !strings.Contains(err.Error(), "fields.custom.tier") || !strings.Contains(err.Error(), `no custom field with key "tier"`) {
		t.Fatalf("err = %v, want the unknown key named", err)
	}
}
