package daemon_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/admin"
	_ "github.com/syncd-io/syncd/connector/salesforce"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestSalesforcePassStopsAtDailyBudget runs the daemon on a Salesforce
// org that has used 495 of its 1,000 daily calls, with dailyBudget 0.5:
// the pass counts its records (one call) and reads four query pages (the
// Sforce-Limit-Info usage reaches 500), records them, and stops, saying so in the log, /status and the
// health page. The next day's pass resumes after the last page, and no
// record is read twice.
func TestSalesforcePassStopsAtDailyBudget(t *testing.T) {
	const contacts, page = 1000, 200 // 4 pages within the budget, one after
	org := salesforceemu.NewServer(salesforceemu.Options{RealClock: true, DailyLimit: 1000, Used: 495})
	t.Cleanup(org.Close)
	for i := range contacts {
		org.Add("Contact", map[string]any{"FirstName": fmt.Sprint("Ada", i), "LastName": fmt.Sprint("Lovelace", i)})
	}
	time.Sleep(1100 * time.Millisecond) // a read window ends at the clock's second, exclusive

	emu := emulator.NewServer(emulator.Options{APIKey: envAPIKey, Rate: -1})
	t.Cleanup(emu.Close)
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: "${TEST_API_KEY}", RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(t.TempDir(), "syncd.db")},
		Connectors: []configfile.Connector{{Name: "sf", Type: "salesforce", Source: "custom-salesforce", Schedule: "@every 1h",
			Settings: map[string]any{"loginURL": org.LoginURL, "clientId": org.ClientID(), "clientSecret": org.ClientSecret(),
				"dailyBudget": 0.5, "pageSize": page, "settle": "0s"},
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{
				"firstName": configfile.From("FirstName"),
				"lastName":  configfile.From("LastName"),
			}},
		}},
	}
	d, logs := newLoggedDaemon(t, f)

	sums, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce = %v, want no error for a pass stopped at its budget", err)
	}
	if got := sums[0]; got.Created != 4*page || got.Stopped != state.StoppedBudget {
		t.Fatalf("first pass = %+v, want %d created and stopped at the budget", got, 4*page)
	}
	if org.Used() != 500 {
		t.Errorf("the org counted %d calls, want the pass to stop at 500", org.Used())
	}
	if !strings.Contains(logs.String(), `"msg":"sync pass stopped: api budget spent, resuming at the next schedule"`) ||
		!strings.Contains(logs.String(), "500 of its 1000 daily API calls") {
		t.Errorf("the log does not say the pass stopped at the budget:\n%s", logs)
	}
	st, err := d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := st.Connectors[0]
	if cs.LastResult != "budget" || len(cs.Quotas) != 1 || cs.Quotas[0].Used != 500 || cs.Quotas[0].Limit != 1000 || cs.Quotas[0].Remaining != 0 {
		t.Errorf("status: lastResult %q, quotas %+v; want budget, 500 of 1000 used, 0 left", cs.LastResult, cs.Quotas)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "127.0.0.1:8081"
	(&admin.Server{Daemon: d}).Handler().ServeHTTP(rec, req)
	for _, want := range []string{"stopped: API budget spent", "API daily API requests: 500 of 1000 used · syncd's budget 50%, 0 left"} {
		if !strings.Contains(rec.Body.String(), want) {
			i := strings.Index(rec.Body.String(), `id="connector-sf"`)
			t.Errorf("health page lacks %q:\n%s", want, rec.Body.String()[max(i, 0):min(max(i, 0)+1500, len(rec.Body.String()))])
		}
	}

	// A new day: the allowance renews, the next pass reads the rest.
	org.SetUsed(0)
	sums, err = d.RunOnce(context.Background())
	if err != nil || sums[0].Created != contacts-4*page || sums[0].Stopped != "" {
		t.Fatalf("second pass = %+v, %v; want the %d remaining records created", sums[0], err, contacts-4*page)
	}
	for id, n := range org.ReadCounts() {
		if n != 1 {
			t.Errorf("record %s read %d times", id, n)
		}
	}
}
