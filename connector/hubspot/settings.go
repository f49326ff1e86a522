package hubspot

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Defaults of the settings.
const (
	DefaultBaseURL         = "https://api.hubapi.com"
	DefaultRateLimit       = 100 // requests per 10 s: Free and Starter
	DefaultSearchRateLimit = 4   // searches per second: HubSpot allows 5
	DefaultLookback        = 30 * time.Second
	MaxPageSize            = 200 // the search endpoint's largest page
)

// Secret is a string that never prints (connector.Secret).
type Secret = connector.Secret

// Settings are the `settings:` of a hubspot connector.
type Settings struct {
	// Token is the private app access token, e.g. ${HUBSPOT_TOKEN}.
	Token Secret `yaml:"token"`
	// Properties are the contact properties to read. Empty means the
	// fields the mapping names, or when it names none HubSpot's common
	// ones (email, firstname, lastname, phone, mobilephone, company,
	// jobtitle, lifecyclestage); hs_object_id and lastmodifieddate are
	// always read. The list must keep a search request under HubSpot's
	// 3,000 characters: Open refuses one that does not.
	Properties []string `yaml:"properties"`
	// BaseURL is the API's base URL, for the test server or a regional
	// host (e.g. https://api-eu1.hubapi.com).
	BaseURL string `yaml:"baseURL"`
	// RateLimit is the number of calls per 10 seconds the connector
	// allows itself: 100 for Free/Starter, 190 for Professional and
	// Enterprise, 250 with the capacity pack. Connectors sharing a token
	// share the limit. Ignored when the daemon hands the connector its
	// own limiter (connector.Options.Limiter).
	RateLimit int `yaml:"rateLimit"`
	// SearchRateLimit is the number of search calls per second, on top of
	// RateLimit; HubSpot allows 5.
	SearchRateLimit float64 `yaml:"searchRateLimit"`
	// Lookback is how far before the end of the last read window the next
	// read starts, to catch changes the search index showed late. When a
	// page or more of contacts was read in that span, a count decides
	// whether it needs reading again (see the package comment).
	Lookback time.Duration `yaml:"lookback"`
	// PageSize is the number of contacts per search page (at most 200).
	PageSize int `yaml:"pageSize"`
	// ArchivedInterval is the least time between two scans of the
	// archived contacts (which list them all); 0 scans on every read.
	ArchivedInterval time.Duration `yaml:"archivedInterval"`
	// Webhooks, when set, take the app's change webhooks: a verified one
	// starts a pass at once (webhooks.go).
	Webhooks *Webhooks `yaml:"webhooks"`
}

// NewSettings returns settings with their defaults.
func NewSettings() *Settings {
	return &Settings{
		BaseURL:         DefaultBaseURL,
		RateLimit:       DefaultRateLimit,
		SearchRateLimit: DefaultSearchRateLimit,
		Lookback:        DefaultLookback,
		PageSize:        MaxPageSize,
	}
}

// Validate returns every problem of the settings. It never shows the
// token.
func (s *Settings) Validate() []error {
	var errs []error
	if strings.TrimSpace(string(s.Token)) == "" {
		errs = append(errs, errors.New("token: required (a private app access token, e.g. ${HUBSPOT_TOKEN})"))
	}
	if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("baseURL: %q is not an http(s) URL", s.BaseURL))
	}
	if s.RateLimit < 1 {
		errs = append(errs, fmt.Errorf("rateLimit: %d is not a positive number of calls per 10 seconds", s.RateLimit))
	}
	if s.SearchRateLimit <= 0 {
		errs = append(errs, fmt.Errorf("searchRateLimit: %g is not a positive number of searches per second", s.SearchRateLimit))
	}
	if s.Lookback < 0 {
		errs = append(errs, fmt.Errorf("lookback: %s is negative", s.Lookback))
	}
	if s.PageSize < 1 || s.PageSize > MaxPageSize {
		errs = append(errs, fmt.Errorf("pageSize: %d is not between 1 and %d", s.PageSize, MaxPageSize))
	}
	if s.ArchivedInterval < 0 {
		errs = append(errs, fmt.Errorf("archivedInterval: %s is negative", s.ArchivedInterval))
	}
	if s.Webhooks != nil {
		errs = append(errs, s.Webhooks.validate()...)
	}
	for i, p := range s.Properties {
		if strings.TrimSpace(p) == "" || strings.ContainsAny(p, ", ") {
			errs = append(errs, fmt.Errorf("properties[%d]: %q is not a property name", i, p))
		}
	}
	return errs
}
