package pipedrive

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Defaults of the settings.
const (
	DefaultBaseURL   = "https://api.pipedrive.com"
	DefaultRateLimit = 20 // requests per 2 s: the Lite plan's api_token burst limit
	DefaultLookback  = 5 * time.Second
	// DefaultIDScanInterval is the default least time between id scans:
	// four a day, 20 tokens per pageSize persons each.
	DefaultIDScanInterval = 6 * time.Hour
	MaxPageSize           = 500 // the largest limit of a v2 list
	burstWindow           = 2 * time.Second
)

// Settings are the `settings:` of a pipedrive connector.
type Settings struct {
	// APIToken is a user's personal API token, e.g.
	// ${PIPEDRIVE_API_TOKEN}. It is sent in the x-api-token header only.
	APIToken connector.Secret `yaml:"apiToken"`
	// BaseURL is https://api.pipedrive.com or the company domain URL
	// (https://<company>.pipedrive.com), or a test server's.
	BaseURL string `yaml:"baseURL"`
	// RateLimit is the number of requests per 2-second window the
	// connector allows itself: Pipedrive's burst limit of the plan for
	// api_token requests (Lite 20, Growth 40, Premium 100, Ultimate 120).
	// Connectors sharing a token share it. An answer announcing a lower
	// x-ratelimit-limit lowers it.
	RateLimit int `yaml:"rateLimit"`
	// PageSize is the number of persons per page (at most 500).
	PageSize int `yaml:"pageSize"`
	// Lookback is how long before the clock a read window ends: a change
	// Pipedrive stamps up to this much in the past (clock skew, a slow
	// commit) is still read by the next window.
	Lookback time.Duration `yaml:"lookback"`
	// DeletionsInterval is the least time between two scans of the
	// recents feed for deleted and merged persons; 0 scans on every read.
	DeletionsInterval time.Duration `yaml:"deletionsInterval"`
	// IDScanInterval is the least time between two scans of every live
	// person's id, which find the deleted persons the recents feed does
	// not show (a scan costs one list call per pageSize persons); 0 scans
	// on every read.
	IDScanInterval time.Duration `yaml:"idScanInterval"`
	// Currency is the currency code (ISO 4217, e.g. EUR) the amounts of
	// monetary custom fields are written in when the person has no
	// currency for the field yet; a person's own currency is kept.
	Currency string `yaml:"currency"`
	// TokenBudget is the number of API tokens a day (by Pipedrive's
	// documented costs) this connector may spend of the company's daily
	// budget; 0 sets no budget of syncd's own. Once spent, a pass stops
	// and resumes the next day.
	TokenBudget int64 `yaml:"tokenBudget"`
	// Webhooks, when set, have Pipedrive's person webhooks start a pass
	// at once; syncd registers them (webhooks.go).
	Webhooks *Webhooks `yaml:"webhooks"`
}

// NewSettings returns settings with their defaults.
func NewSettings() *Settings {
	return &Settings{BaseURL: DefaultBaseURL, RateLimit: DefaultRateLimit, PageSize: MaxPageSize, Lookback: DefaultLookback, IDScanInterval: DefaultIDScanInterval}
}

// Validate returns every problem of the settings. It never shows the
// token.
func (s *Settings) Validate() []error {
	var errs []error
	if strings.TrimSpace(s.APIToken.Reveal()) == "" {
		errs = append(errs, errors.New("apiToken: required (a personal API token, e.g. ${PIPEDRIVE_API_TOKEN})"))
	}
	if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("baseURL: %q is not an http(s) URL, e.g. https://api.pipedrive.com or https://yourcompany.pipedrive.com", s.BaseURL))
	} else if p := strings.TrimRight(u.Path, "/"); p == "/v1" || p == "/api/v2" || p == "/api/v1" {
		errs = append(errs, fmt.Errorf("baseURL: %q names an API version; give the host only (%s://%s): the connector picks v2 or v1 per endpoint", s.BaseURL, u.Scheme, u.Host))
	}
	if s.RateLimit < 1 {
		errs = append(errs, fmt.Errorf("rateLimit: %d is not a positive number of requests per 2 seconds", s.RateLimit))
	}
	if s.PageSize < 1 || s.PageSize > MaxPageSize {
		errs = append(errs, fmt.Errorf("pageSize: %d is not between 1 and %d", s.PageSize, MaxPageSize))
	}
	if s.Lookback < 0 {
		errs = append(errs, fmt.Errorf("lookback: %s is negative", s.Lookback))
	}
	if s.IDScanInterval < 0 {
		errs = append(errs, fmt.Errorf("idScanInterval: %s is negative", s.IDScanInterval))
	}
	if s.DeletionsInterval < 0 {
		errs = append(errs, fmt.Errorf("deletionsInterval: %s is negative", s.DeletionsInterval))
	}
	if c := strings.TrimSpace(s.Currency); c != "" && !currencyCode.MatchString(c) {
		errs = append(errs, fmt.Errorf("currency: %q is not a currency code; give an ISO 4217 code such as EUR or USD", s.Currency))
	}
	if s.Webhooks != nil {
		errs = append(errs, s.Webhooks.validate()...)
	}
	if s.TokenBudget < 0 {
		errs = append(errs, fmt.Errorf("tokenBudget: %d is negative (0 sets no budget)", s.TokenBudget))
	}
	return errs
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)
