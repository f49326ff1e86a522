package hubspot

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Webhooks are the `webhooks:` settings of a hubspot connector: the app
// whose change webhooks start a pass at once. Absent, the connector
// polls on its schedule only.
type Webhooks struct {
	// ClientSecret is the client secret of the app (private or public)
	// whose webhooks call syncd: HubSpot signs each request with it,
	// e.g. ${HUBSPOT_CLIENT_SECRET}.
	ClientSecret Secret `yaml:"clientSecret"`
	// URL is the target URL entered in the app's webhook settings, as
	// HubSpot calls it: the webhook listener's public address followed by
	// /webhooks/connectors/<connector name>, with its query string if it
	// was entered with one. The signature covers it, so it must be
	// exactly the URL HubSpot calls.
	URL string `yaml:"url"`
}

// validate returns the problems of the webhooks settings, each naming
// its key under webhooks.
func (w *Webhooks) validate() []error {
	var errs []error
	if strings.TrimSpace(w.ClientSecret.Reveal()) == "" {
		errs = append(errs, fmt.Errorf("webhooks.clientSecret: required (the app's client secret, which signs its webhooks, e.g. ${HUBSPOT_CLIENT_SECRET})"))
	}
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("webhooks.url: %q is not an http(s) URL; give the target URL entered in the app's webhook settings, e.g. https://syncd.example.com/webhooks/connectors/<name>", w.URL))
	}
	return errs
}

// webhookSettle is how long after a burst of deliveries the trailing
// pass reads again: HubSpot does not document how soon search shows a
// change its webhook announced (FACTS.md), and the look-back re-reads
// the rest at the next scheduled pass.
const webhookSettle = 3 * time.Second

// RegisterWebhook cannot register: a HubSpot app's webhook target URL
// and subscriptions are set in the app's settings. The error says what
// to enter.
func (s *Source) RegisterWebhook(context.Context, bool) (string, error) {
	if s.Webhook() == nil {
		return "", connector.ErrWebhooksOff
	}
	return "", fmt.Errorf("%w: in HubSpot, the app's Webhooks settings: target URL %s; subscriptions contact.creation, contact.deletion, contact.merge, contact.restore and contact.propertyChange of each property the mapping reads; and the app's client secret as webhooks.clientSecret",
		connector.ErrManualWebhook, s.hookURL)
}

var _ connector.WebhookSource = (*Source)(nil)
