package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

func init() {
	registerCommand("webhooks", "register, rotate or list the workspace webhook subscription", func(m *Main) Command { return &WebhooksCommand{m: m} })
}

// WebhooksCommand manages the subscription that delivers workspace
// changes to syncd's receiver: register, rotate, list.
type WebhooksCommand struct {
	m *Main
}

const webhooksUsage = "webhooks register|rotate|list --config FILE [--grace DURATION] [--replace]"

// Run parses the subcommand and its flags.
func (c *WebhooksCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(c.m.Stderr, "Usage: syncd %s\n\n"+
			"  register  create the subscription at webhooks.publicURL, or find it and enable it; keep its secret in state;\n"+
			"            and register each connector's change webhook (Pipedrive), or print what to enter (HubSpot)\n"+
			"  rotate    give the subscription a new signing secret; the old one stays accepted for --grace\n"+
			"  list      show the workspace's subscriptions and their delivery history\n", webhooksUsage)
		return ErrUsage
	}
	sub := args[0]
	fs := c.m.newFlagSet("webhooks "+sub, webhooksUsage)
	conf := c.m.configFlag(fs)
	grace := fs.Duration("grace", -1, "how long the old secret stays accepted after rotate (default: webhooks.secretGrace)")
	limit := fs.Int("deliveries", 20, "deliveries shown per subscription by list (0: all)")
	replace := fs.Bool("replace", false, "register makes each connector's change webhook anew (after changing its webhooks.password)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, log, err := conf.loadWithLog()
	if err != nil {
		return err
	}
	switch sub {
	case "register":
		if cfg.Webhooks.PublicURL == "" && hasConnectorWebhooks(cfg) {
			fmt.Fprintln(c.m.Stdout, "workspace subscription: not registered (webhooks.publicURL is not set)")
		} else if err := c.register(ctx, cfg, log); err != nil {
			return err
		}
		return c.registerConnectors(ctx, cfg, log, *replace)
	case "rotate":
		g := cfg.Webhooks.SecretGrace
		if *grace >= 0 {
			g = *grace
		}
		return c.rotate(ctx, cfg, log, g)
	case "list":
		return c.list(ctx, cfg, log, *limit)
	}
	fs.Usage()
	return fmt.Errorf("unknown webhooks subcommand %q: %w", sub, ErrUsage)
}

// workspaceClient is the configured workspace client. With st it uses
// the form of the webhook routes st remembers, and, when writable is
// set, records the form it finds out.
func workspaceClient(cfg *config.Config, log *logrus.Logger, st *state.Store, writable bool) (*workspace.Client, error) {
	opts := workspace.ClientOptions{
		BaseURL: cfg.Workspace.BaseURL, APIKey: cfg.Workspace.APIKey,
		VersionHeader: cfg.Workspace.VersionHeader, Version: cfg.Workspace.Version,
		RateLimit: cfg.Workspace.RateLimit, Burst: cfg.Workspace.Burst,
		Log: logrus.NewEntry(log).WithField(logfield.Component, "workspace"),
	}
	if st != nil {
		form, err := st.Webhooks.Routes()
		if err != nil {
			return nil, err
		}
		opts.WebhookRoutes = form
		if writable {
			opts.WebhookRoutesFound = daemon.RememberWebhookRoutes(st.Webhooks, logrus.NewEntry(log))
		}
	}
	return workspace.NewClient(opts)
}

// openStateForWrite opens the state file, explaining what to do when a
// daemon holds it.
func openStateForWrite(cfg *config.Config, what string) (*state.Store, error) {
	st, err := openStateFile(cfg.State.Path, createState)
	if errors.Is(err, state.ErrLocked) {
		return nil, fmt.Errorf("%s needs the state file %s, which a running syncd holds: stop it first "+
			"(with webhooks.autoRegister: true, syncd run registers the subscription itself): %w", what, cfg.State.Path, err)
	}
	return st, err
}

func (c *WebhooksCommand) register(ctx context.Context, cfg *config.Config, log *logrus.Logger) error {
	st, err := openStateForWrite(cfg, "webhooks register")
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := workspaceClient(cfg, log, st, true)
	if err != nil {
		return err
	}
	reg, err := daemon.EnsureWebhookEvents(ctx, ws, st.Webhooks, cfg.Webhooks.PublicURL, daemon.WebhookEventsFor(cfg), logrus.NewEntry(log))
	if err != nil {
		return err
	}
	what := "unchanged"
	switch {
	case reg.Created:
		what = "created"
	case reg.Updated && reg.Rotated:
		what = "updated, secret rotated"
	case reg.Updated:
		what = "updated"
	case reg.Rotated:
		what = "secret rotated (it was not in state)"
	}
	fmt.Fprintf(c.m.Stdout, "subscription %s %s: %s, events %s, status %s\n", reg.Webhook.ID, what,
		reg.Webhook.URL, strings.Join(reg.Webhook.Events, ","), reg.Webhook.Status)
	return nil
}

func (c *WebhooksCommand) rotate(ctx context.Context, cfg *config.Config, log *logrus.Logger, grace time.Duration) error {
	st, err := openStateForWrite(cfg, "webhooks rotate")
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := workspaceClient(cfg, log, st, true)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	wh, err := daemon.RotateWebhook(ctx, ws, st.Webhooks, cfg.Webhooks.PublicURL, grace, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.m.Stdout, "subscription %s: new secret stored; the previous one is accepted until %s\n",
		wh.ID, now.Add(grace).Format(time.RFC3339))
	return nil
}

func (c *WebhooksCommand) list(ctx context.Context, cfg *config.Config, log *logrus.Logger, limit int) error {
	// Which subscriptions state holds a secret for (never the secret), and
	// the form of the webhook routes it remembers.
	secrets := map[string]int{}
	var ws *workspace.Client
	st, err := openStateFile(cfg.State.Path, readState)
	switch {
	case err == nil:
		if cur, prev, err := st.Webhooks.Secrets(); err == nil {
			for _, s := range append([]state.WebhookSecret{cur}, prev...) {
				secrets[s.WebhookID]++
			}
		}
		if ws, err = workspaceClient(cfg, log, st, false); err != nil {
			fmt.Fprintf(c.m.Stderr, "syncd: the state file's webhook routes could not be read (%v); they are found out again\n", err)
		}
		st.Close()
	case errors.Is(err, state.ErrLocked):
		fmt.Fprintln(c.m.Stderr, "syncd: a running syncd holds the state file; secrets in state are not shown")
	}
	if ws == nil {
		if ws, err = workspaceClient(cfg, log, nil, false); err != nil {
			return err
		}
	}
	whs, err := ws.ListWebhooks(ctx)
	if err != nil {
		return err
	}
	if len(whs) == 0 {
		fmt.Fprintln(c.m.Stdout, "no webhook subscriptions")
		return nil
	}
	for i, wh := range whs {
		if i > 0 {
			fmt.Fprintln(c.m.Stdout)
		}
		mark := ""
		if wh.URL == cfg.Webhooks.PublicURL {
			mark = "  (syncd's: webhooks.publicURL)"
		}
		fmt.Fprintf(c.m.Stdout, "subscription %s  %s  %s%s\n  events: %s\n  label: %s  created: %s  secrets in state: %d\n",
			wh.ID, wh.Status, wh.URL, mark, strings.Join(wh.Events, ", "), wh.Label, wh.CreatedAt.Format(time.RFC3339), secrets[wh.ID])
		ds, err := ws.WebhookDeliveries(ctx, wh.ID)
		if err != nil {
			fmt.Fprintf(c.m.Stdout, "  deliveries: %v\n", err)
			continue
		}
		printDeliveries(c.m.Stdout, ds, limit)
	}
	return nil
}

// printDeliveries prints the newest limit deliveries, newest last.
func printDeliveries(w io.Writer, ds []workspace.Delivery, limit int) {
	if len(ds) == 0 {
		fmt.Fprintln(w, "  deliveries: none")
		return
	}
	shown := ds
	if limit > 0 && len(ds) > limit {
		shown = ds[len(ds)-limit:]
	}
	fmt.Fprintf(w, "  deliveries: %d (showing %d)\n", len(ds), len(shown))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  EVENT\tTYPE\tSTATUS\tATTEMPTS\tANSWER\tUPDATED\tLAST ERROR")
	for _, d := range shown {
		answer := "-"
		if d.ResponseStatus != 0 {
			answer = fmt.Sprint(d.ResponseStatus)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.EventID, d.Type, d.Status, d.Attempts, answer,
			d.UpdatedAt.Format(time.RFC3339), d.LastError)
	}
	_ = tw.Flush()
}
