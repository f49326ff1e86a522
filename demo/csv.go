package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
)

// csvDemo syncs a sample CRM export (a CSV file) into the emulator, one
// way: a first sync, a pass that changes nothing, and a pass after the
// export changed.
func (c *runner) csvDemo(ctx context.Context, dir string, rows int, serve bool) error {
	out := c.o.Out
	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	fmt.Fprintf(out, "1. Started a workspace emulator at %s (API key %q)\n", emu.URL, APIKey)

	csvPath := filepath.Join(dir, "contacts.csv")
	people := SamplePeople(rows)
	if err := writeDemoCSV(csvPath, people); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "syncd.yaml")
	if err := os.WriteFile(cfgPath, []byte(demoConfig(emu.URL, dir, csvPath)), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "2. Wrote a sample CRM export (%d rows) to %s\n   and a configuration to %s\n", len(people), csvPath, cfgPath)

	cfg, err := config.Load(cfgPath, c.o.Getenv)
	if err != nil {
		return err
	}
	log := c.o.Log
	d, err := daemon.New(ctx, cfg, daemon.Options{Log: log})
	if err != nil {
		return err
	}
	defer d.Close()
	adminRun, err := d.Start(ctx, daemon.AdminPart)
	if err != nil {
		return err
	}
	defer func() { adminRun.Stop(); _ = adminRun.Wait() }()
	addr := adminRun.AdminAddr
	printHealthPage(out, addr)

	step := func(n int, what string) error {
		before := emu.Stats()
		stopWatch := c.o.watch(ctx, d)
		sums, err := d.RunOnce(ctx)
		stopWatch()
		if err != nil {
			return err
		}
		after := emu.Stats()
		delta := func(k string) int { return after.Requests[k] - before.Requests[k] }
		fmt.Fprintf(out, "%d. %s\n   %s\n   calls the emulator saw: %d POST, %d PATCH, %d DELETE, %d list (%d of them throttled with a 429 and retried)\n", n, what, sums[0],
			delta("POST /v1/contacts"), delta("PATCH /v1/contacts/{id}"), delta("DELETE /v1/contacts/{id}"), delta("GET /v1/contacts"), after.Throttled-before.Throttled)
		return nil
	}
	if err := step(3, "First sync: every row becomes a contact (source custom-crm, externalId = the row's id)"); err != nil {
		return err
	}
	if err := step(4, "Second sync, nothing changed: no write at all"); err != nil {
		return err
	}
	people[2][2] = "Lovelace-King"
	people[4][4] = "+44 20 7946 0999"
	people = append(people[:len(people)-1:len(people)-1], []string{fmt.Sprint(len(people) + 1), "Grace", "Hopper", "grace@example.com", "+1 212 555 0100", "Navy"})
	if err := writeDemoCSV(csvPath, people); err != nil {
		return err
	}
	if err := step(5, "The CRM changed two rows, dropped one and added one: two PATCHes, one DELETE, one POST"); err != nil {
		return err
	}
	if !serve {
		// The emulator stops with the demo: no address to curl.
		fmt.Fprintf(out, "6. Look around: the state file %s and the CSV %s stay.\n   The workspace emulator stopped with the demo; run 'syncd demo --serve' to keep it and the daemon running and look at its contacts and calls at the address it prints\n",
			cfg.State.Path, csvPath)
		return nil
	}
	fmt.Fprintf(out, "6. Look around:\n   curl -s %s/_emulator/contacts   # the workspace's contacts\n   curl -s %s/_emulator/stats      # every call syncd made\n   the state file: %s\n",
		emu.URL, emu.URL, cfg.State.Path)
	fmt.Fprintf(out, "7. Serving until interrupted: edit %s and watch the next pass (every 10s)\n   on the health page: http://%s/\n", csvPath, addr)
	return serveForward(ctx, d)
}
