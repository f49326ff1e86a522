package pipedrive

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/changehook"
)

// DefaultWebhookUser is the Basic user name syncd registers when the
// settings name none.
const DefaultWebhookUser = "syncd"

// minWebhookPassword is the least length of webhooks.password: the
// password is the only thing that tells Pipedrive's deliveries apart.
const minWebhookPassword = 16

// Webhooks are the `webhooks:` settings of a pipedrive connector: the
// company's person webhooks (v2) start a pass at once. Absent, the
// connector polls on its schedule only.
type Webhooks struct {
	// URL is the subscription URL syncd registers, as Pipedrive calls it:
	// the webhook listener's public address followed by
	// /webhooks/connectors/<connector name>. Pipedrive wants it public,
	// over HTTPS with a certificate it trusts.
	URL string `yaml:"url"`
	// User and Password are the HTTP Basic credentials syncd registers
	// with the webhook (http_auth_user, http_auth_password); Pipedrive
	// sends them with every delivery and syncd refuses one without them.
	// Password e.g. ${PIPEDRIVE_WEBHOOK_PASSWORD}, at least 16
	// characters.
	User     string           `yaml:"user"`
	Password connector.Secret `yaml:"password"`
}

// validate returns the problems of the webhooks settings, each naming
// its key under webhooks.
func (w *Webhooks) validate() []error {
	var errs []error
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("webhooks.url: %q is not an http(s) URL; give the listener's public URL of this connector, e.g. https://syncd.example.com/webhooks/connectors/<name>", w.URL))
	}
	if strings.Contains(w.User, ":") {
		errs = append(errs, fmt.Errorf("webhooks.user: %q contains a colon, which HTTP Basic credentials cannot carry", w.User))
	}
	if n := len(strings.TrimSpace(w.Password.Reveal())); n < minWebhookPassword {
		errs = append(errs, fmt.Errorf("webhooks.password: %d characters, want at least %d (a random secret, e.g. ${PIPEDRIVE_WEBHOOK_PASSWORD})", n, minWebhookPassword))
	}
	return errs
}

// verifier accepts a delivery that carries the registered Basic
// credentials; Pipedrive signs nothing else.
func verifier(user, password string) changehook.Verifier {
	return func(r *http.Request, _ []byte, _ time.Time) error {
		u, p, ok := r.BasicAuth()
		if !ok {
			return fmt.Errorf("%w: no Basic credentials", changehook.ErrRefused)
		}
		userOK := subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1
		passOK := subtle.ConstantTimeCompare([]byte(p), []byte(password)) == 1
		if !userOK || !passOK {
			return fmt.Errorf("%w: the Basic credentials are not the registered ones (run syncd webhooks register after changing webhooks.password)", changehook.ErrRefused)
		}
		return nil
	}
}

// hook is where the person webhooks go and the credentials they bring;
// the endpoint itself is the Source's changehook.Endpoint.
type hook struct {
	url      string
	user     string
	password connector.Secret
}

// openHook sets up the webhook of the settings, if any.
func (s *Source) openHook(w *Webhooks) {
	if w == nil {
		return
	}
	s.hook.url, s.hook.user, s.hook.password = w.URL, w.User, connector.Secret(strings.TrimSpace(w.Password.Reveal()))
	if s.hook.user == "" {
		s.hook.user = DefaultWebhookUser
	}
	// The pass a delivery starts reads up to the clock (recent.go); a read
	// window ends lookback before it, so the trailing pass, this much
	// after a burst, closes a window over the burst and the checkpoint
	// moves past it.
	s.Endpoint.Open(verifier(s.hook.user, s.hook.password.Reveal()), nil, s.lookback+1250*time.Millisecond, s.log)
}

// webhook is a webhook as GET /v1/webhooks lists it.
type webhook struct {
	ID              int64  `json:"id"`
	SubscriptionURL string `json:"subscription_url"`
	EventAction     string `json:"event_action"`
	EventObject     string `json:"event_object"`
	HTTPAuthUser    string `json:"http_auth_user"`
	IsActive        any    `json:"is_active"`
	Version         string `json:"version"`
}

// fits reports whether w is the webhook the settings ask for. Pipedrive
// does not list the password: a rotated one needs replace.
func (s *Source) fits(w webhook) bool {
	return w.SubscriptionURL == s.hook.url && w.EventObject == "person" && w.EventAction == "*" &&
		w.HTTPAuthUser == s.hook.user && w.Version == "2.0" && active(w.IsActive)
}

// active reads is_active, a number (1) in v1 answers or a boolean.
func active(v any) bool {
	switch a := v.(type) {
	case bool:
		return a
	case float64:
		return a != 0
	case nil:
		return true
	}
	return false
}

// RegisterWebhook makes sure one webhook v2 of every person event
// (event_object person, event_action *) calls the URL of the settings
// with their Basic credentials: POST /v1/webhooks. One that is already
// right is kept (unless replace); others to the same URL are deleted.
func (s *Source) RegisterWebhook(ctx context.Context, replace bool) (string, error) {
	if s.Webhook() == nil {
		return "", connector.ErrWebhooksOff
	}
	var list struct {
		Data []webhook `json:"data"`
	}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/v1/webhooks", route: "GET /v1/webhooks", idempotent: true}, &list); err != nil {
		return "", fmt.Errorf("list webhooks: %w", err)
	}
	kept := int64(0)
	var deleted []string
	for _, w := range list.Data {
		if w.SubscriptionURL != s.hook.url {
			continue
		}
		if kept == 0 && !replace && s.fits(w) {
			kept = w.ID
			continue
		}
		id := strconv.FormatInt(w.ID, 10)
		if err := s.c.do(ctx, call{method: http.MethodDelete, path: "/v1/webhooks/" + id, route: "DELETE /v1/webhooks/{id}", idempotent: true}, nil); err != nil && !errors.Is(err, connector.ErrNotFound) {
			return "", fmt.Errorf("delete webhook %s: %w", id, err)
		}
		deleted = append(deleted, id)
	}
	if kept != 0 {
		return fmt.Sprintf("webhook %d to %s kept", kept, s.hook.url), nil
	}
	var made struct {
		Data webhook `json:"data"`
	}
	body := map[string]any{
		"subscription_url": s.hook.url, "event_action": "*", "event_object": "person",
		"http_auth_user": s.hook.user, "http_auth_password": s.hook.password.Reveal(), "version": "2.0",
	}
	if err := s.c.do(ctx, call{method: http.MethodPost, path: "/v1/webhooks", body: body, route: "POST /v1/webhooks"}, &made); err != nil {
		return "", fmt.Errorf("create webhook: %w", err)
	}
	what := fmt.Sprintf("webhook %d to %s created", made.Data.ID, s.hook.url)
	if len(deleted) > 0 {
		what += " (replacing " + strings.Join(deleted, ", ") + ")"
	}
	return what, nil
}

var _ connector.WebhookSource = (*Source)(nil)
