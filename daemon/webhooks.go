package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// WebhookEvents are the events syncd subscribes to.
var WebhookEvents = []string{workspace.EventContactUpdated, workspace.EventContactDeleted}

// WebhookLabel labels the subscriptions syncd makes.
const WebhookLabel = "syncd"

// WebhookAPI is the part of the workspace API the subscription commands
// use; *workspace.Client implements it.
type WebhookAPI interface {
	ListWebhooks(ctx context.Context) ([]workspace.Webhook, error)
	CreateWebhook(ctx context.Context, in workspace.WebhookCreate) (workspace.Webhook, error)
	UpdateWebhook(ctx context.Context, id string, p workspace.WebhookPatch) (workspace.Webhook, error)
	RotateWebhookSecret(ctx context.Context, id string) (workspace.SigningSecret, error)
}

var _ WebhookAPI = (*workspace.Client)(nil)

// Registration is what EnsureWebhook found and did.
type Registration struct {
	Webhook workspace.Webhook
	// Created, Updated (events or status fixed) and Rotated (the secret
	// was not in state, so a new one was asked for) tell what changed;
	// none of them means the subscription was already as wanted.
	Created, Updated, Rotated bool
}

// RememberWebhookRoutes returns the workspace client's
// WebhookRoutesFound: it records in hooks the form of the webhook routes the
// service answered, so that later starts use it at once. A failed write
// is logged; the form is found out again on the next start.
func RememberWebhookRoutes(hooks *state.Webhooks, log *logrus.Entry) func(form string) {
	return func(form string) {
		if err := hooks.PutRoutes(form); err != nil {
			log.WithError(err).WithField(logfield.Form, form).Warn("webhook routes could not be recorded in state; found out again on the next start")
		}
	}
}

// FindWebhook returns the subscription delivering to url, if any (the
// oldest when several do).
func FindWebhook(ctx context.Context, api WebhookAPI, url string) (workspace.Webhook, bool, error) {
	whs, err := api.ListWebhooks(ctx)
	if err != nil {
		return workspace.Webhook{}, false, err
	}
	var found *workspace.Webhook
	for i := range whs {
		if whs[i].URL == url && (found == nil || whs[i].CreatedAt.Before(found.CreatedAt)) {
			found = &whs[i]
		}
	}
	if found == nil {
		return workspace.Webhook{}, false, nil
	}
	return *found, true, nil
}

// EnsureWebhook makes sure a subscription delivers contact.updated and
// contact.deleted to url, enabled, and that its signing secret is in
// state: it creates the subscription, or finds it by url and fixes its
// events and status. Running it again changes nothing. A subscription
// found whose secret state does not hold (made by hand, or state lost)
// gets a new secret by rotation, as the service shows a secret only when
// it makes one.
func EnsureWebhook(ctx context.Context, api WebhookAPI, hooks *state.Webhooks, url string, log *logrus.Entry) (Registration, error) {
	return EnsureWebhookEvents(ctx, api, hooks, url, WebhookEvents, log)
}

// EnsureWebhookEvents is EnsureWebhook for the given events (see
// WebhookEventsFor: what the configuration asks for and nothing more).
func EnsureWebhookEvents(ctx context.Context, api WebhookAPI, hooks *state.Webhooks, url string, events []string, log *logrus.Entry) (Registration, error) {
	if url == "" {
		return Registration{}, errors.New("webhooks.publicURL is not set: the workspace needs the address to deliver to")
	}
	var reg Registration
	wh, found, err := FindWebhook(ctx, api, url)
	if err != nil {
		return reg, fmt.Errorf("find subscription: %w", err)
	}
	if !found {
		created, err := api.CreateWebhook(ctx, workspace.WebhookCreate{URL: url, Events: events, Status: workspace.WebhookEnabled, Label: WebhookLabel})
		switch {
		case err == nil:
			if err := hooks.PutSecret(state.WebhookSecret{WebhookID: created.ID, Secret: created.Key}); err != nil {
				return reg, fmt.Errorf("subscription %s created, but its secret could not be stored (run register again: it rotates the secret): %w", created.ID, err)
			}
			created.Key = ""
			log.WithField(logfield.Webhook, created.ID).WithField(logfield.URL, url).Info("webhook subscription created")
			return Registration{Webhook: created, Created: true}, nil
		case errors.Is(err, workspace.ErrOutcomeUnknown):
			// The create may have been applied: look before anything else.
			if wh, found, err = FindWebhook(ctx, api, url); err != nil {
				return reg, fmt.Errorf("find subscription after a create with an unknown outcome: %w", err)
			}
			if !found {
				return reg, fmt.Errorf("create subscription: %w", err)
			}
			reg.Created = true
		default:
			return reg, fmt.Errorf("create subscription: %w", err)
		}
	}
	var p workspace.WebhookPatch
	if !sameEvents(wh.Events, events) {
		p.Events = events
	}
	if wh.Status != workspace.WebhookEnabled {
		p.Status = workspace.Some(workspace.WebhookEnabled)
	}
	if len(p.Events) > 0 || p.Status.IsSet() {
		if wh, err = api.UpdateWebhook(ctx, wh.ID, p); err != nil {
			return reg, fmt.Errorf("update subscription: %w", err)
		}
		reg.Updated = true
		log.WithField(logfield.Webhook, wh.ID).Info("webhook subscription updated: events and status")
	}
	reg.Webhook = wh
	has, err := hasSecret(hooks, wh.ID)
	if err != nil {
		return reg, err
	}
	if !has {
		s, err := rotate(ctx, api, wh.ID)
		if err != nil {
			return reg, err
		}
		if err := hooks.PutSecret(state.WebhookSecret{WebhookID: wh.ID, Secret: s.Key}); err != nil {
			return reg, fmt.Errorf("store the secret of subscription %s: %w", wh.ID, err)
		}
		reg.Rotated = true
		log.WithField(logfield.Webhook, wh.ID).Info("webhook secret was not in state: rotated, and the new one stored")
	}
	return reg, nil
}

// RotateWebhook gives the subscription delivering to url a new signing
// secret and stores it; the secrets state held for it stay accepted for
// grace (deliveries signed before the rotation are still retried).
func RotateWebhook(ctx context.Context, api WebhookAPI, hooks *state.Webhooks, url string, grace time.Duration, now time.Time) (workspace.Webhook, error) {
	wh, found, err := FindWebhook(ctx, api, url)
	if err != nil {
		return wh, fmt.Errorf("find subscription: %w", err)
	}
	if !found {
		return wh, fmt.Errorf("no subscription delivers to %s: run syncd webhooks register first", url)
	}
	old, err := secretsOf(hooks, wh.ID)
	if err != nil {
		return wh, err
	}
	s, err := rotate(ctx, api, wh.ID)
	if err != nil {
		return wh, err
	}
	if err := hooks.PutSecret(state.WebhookSecret{WebhookID: wh.ID, Secret: s.Key, CreatedAt: now}); err != nil {
		return wh, fmt.Errorf("secret rotated but not stored (rotate again): %w", err)
	}
	until := now.Add(grace)
	for _, o := range old {
		if o.Secret == s.Key || (!o.ExpiresAt.IsZero() && o.ExpiresAt.Before(until)) {
			continue
		}
		o.ExpiresAt = until
		if err := hooks.PutSecret(o); err != nil {
			return wh, fmt.Errorf("set the grace period of the old secret: %w", err)
		}
	}
	return wh, nil
}

// rotate rotates a secret; an unknown outcome is rotated again, since the
// first may already have replaced the secret.
func rotate(ctx context.Context, api WebhookAPI, id string) (workspace.SigningSecret, error) {
	s, err := api.RotateWebhookSecret(ctx, id)
	if errors.Is(err, workspace.ErrOutcomeUnknown) {
		s, err = api.RotateWebhookSecret(ctx, id)
	}
	if err != nil {
		return s, fmt.Errorf("rotate secret of subscription %s: %w", id, err)
	}
	return s, nil
}

// secretsOf returns the unexpired secrets state holds for the webhook.
func secretsOf(hooks *state.Webhooks, webhookID string) ([]state.WebhookSecret, error) {
	cur, prev, err := hooks.Secrets()
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []state.WebhookSecret
	for _, s := range append([]state.WebhookSecret{cur}, prev...) {
		if s.WebhookID == webhookID {
			out = append(out, s)
		}
	}
	return out, nil
}

func hasSecret(hooks *state.Webhooks, webhookID string) (bool, error) {
	s, err := secretsOf(hooks, webhookID)
	return len(s) > 0, err
}

func sameEvents(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
