package salesforce

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Defaults of the settings.
const (
	DefaultAPIVersion  = "62.0"
	DefaultObject      = "Contact"
	DefaultDailyBudget = 0.5
	DefaultPageSize    = 2000 // query batch size: Salesforce's largest
	DefaultSettle      = time.Minute
	DefaultRateLimit   = 20 // calls per second
	minPageSize        = 200
	minAPIVersion      = 42 // sObject Collections
)

// Objects the connector syncs.
var Objects = []string{"Contact", "Lead"}

// Secret is a setting that never prints (connector.Secret).
type Secret = connector.Secret

// Settings are the `settings:` of a salesforce connector.
type Settings struct {
	// LoginURL is the host of the OAuth token endpoint (the org's My
	// Domain, https://acme.my.salesforce.com, or login.salesforce.com).
	// API calls go to the instance_url of the token answer instead.
	LoginURL string `yaml:"loginURL"`
	// ClientID is the connected app's consumer key.
	ClientID Secret `yaml:"clientId"`
	// ClientSecret is the consumer secret, for the OAuth 2.0 client
	// credentials flow. Leave it empty to use the JWT bearer flow.
	ClientSecret Secret `yaml:"clientSecret"`
	// Username and PrivateKey (PEM, RSA) select the JWT bearer flow: the
	// connector signs an assertion for that user with the key whose
	// certificate is uploaded to the connected app.
	Username   string `yaml:"username"`
	PrivateKey Secret `yaml:"privateKey"`
	// Audience is the JWT's aud: https://login.salesforce.com (default)
	// or, for a sandbox (a loginURL on test.salesforce.com or
	// *.sandbox.my.salesforce.com), https://test.salesforce.com.
	Audience string `yaml:"audience"`
	// APIVersion is the REST API version, "62.0" by default.
	APIVersion string `yaml:"apiVersion"`
	// Object is Contact (default) or Lead.
	Object string `yaml:"object"`
	// DailyBudget is the share of the org's daily API allowance syncd may
	// use (0 < dailyBudget <= 1, 0.5 by default): a pass stops once the
	// Sforce-Limit-Info usage reaches it, and resumes at the next
	// schedule.
	DailyBudget float64 `yaml:"dailyBudget"`
	// PageSize is the query batch size (200 to 2,000).
	PageSize int `yaml:"pageSize"`
	// Settle is how old a change must be before a read takes it: a read
	// window ends this long before the clock, so that a transaction that
	// commits late with an earlier SystemModstamp (or a clock of syncd's
	// ahead of Salesforce's) is read by the next window, and no record is
	// read twice. 1 minute by default.
	Settle time.Duration `yaml:"settle"`
	// RateLimit is the number of API calls per second the connector
	// allows itself (connectors of the same org and client share it).
	RateLimit float64 `yaml:"rateLimit"`
}

// NewSettings returns settings with their defaults.
func NewSettings() *Settings {
	return &Settings{
		APIVersion:  DefaultAPIVersion,
		Object:      DefaultObject,
		DailyBudget: DefaultDailyBudget,
		PageSize:    DefaultPageSize,
		Settle:      DefaultSettle,
		RateLimit:   DefaultRateLimit,
	}
}

var versionRE = regexp.MustCompile(`^([0-9]{2,3})\.0$`)

// Validate returns every problem of the settings. It never shows a
// secret.
func (s *Settings) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if u, err := url.Parse(s.LoginURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		add("loginURL: %q is not the https URL of a login host (e.g. https://acme.my.salesforce.com)", s.LoginURL)
	}
	if strings.TrimSpace(s.ClientID.Reveal()) == "" {
		add("clientId: required (the connected app's consumer key, e.g. ${SF_CLIENT_ID})")
	}
	secret := strings.TrimSpace(s.ClientSecret.Reveal()) != ""
	jwt := strings.TrimSpace(s.Username) != "" || strings.TrimSpace(s.PrivateKey.Reveal()) != ""
	switch {
	case secret && jwt:
		add("clientSecret: set either clientSecret (client credentials flow) or username and privateKey (JWT bearer flow), not both")
	case !secret && !jwt:
		add("clientSecret: required (e.g. ${SF_CLIENT_SECRET}), or username and privateKey for the JWT bearer flow")
	case jwt && strings.TrimSpace(s.Username) == "":
		add("username: required with privateKey (the Salesforce user the JWT bearer flow signs in as)")
	case jwt:
		if _, err := parsePrivateKey(s.PrivateKey.Reveal()); err != nil {
			add("privateKey: %v", err)
		}
	}
	if a := s.Audience; a != "" {
		if u, err := url.Parse(a); err != nil || u.Scheme != "https" || u.Host == "" {
			add("audience: %q is not an https URL (https://login.salesforce.com or https://test.salesforce.com)", a)
		}
	}
	if m := versionRE.FindStringSubmatch(s.APIVersion); m == nil {
		add("apiVersion: %q is not a version like \"62.0\"", s.APIVersion)
	} else if n, _ := strconv.Atoi(m[1]); n < minAPIVersion {
		add("apiVersion: %s is older than %d.0, the first with sObject Collections", s.APIVersion, minAPIVersion)
	}
	if objectName(s.Object) == "" {
		add("object: %q is not one of %s", s.Object, strings.Join(Objects, ", "))
	}
	if !(s.DailyBudget > 0 && s.DailyBudget <= 1) {
		add("dailyBudget: %g is not a share between 0 (excluded) and 1 of the org's daily API allowance", s.DailyBudget)
	}
	if s.PageSize < minPageSize || s.PageSize > DefaultPageSize {
		add("pageSize: %d is not between %d and %d", s.PageSize, minPageSize, DefaultPageSize)
	}
	if s.Settle < 0 {
		add("settle: %s is negative", s.Settle)
	}
	if s.RateLimit <= 0 {
		add("rateLimit: %g is not a positive number of calls per second", s.RateLimit)
	}
	return errs
}

// objectName returns the object's API name as Salesforce spells it, or
// "" when the connector does not sync it.
func objectName(o string) string {
	for _, n := range Objects {
		if strings.EqualFold(strings.TrimSpace(o), n) {
			return n
		}
	}
	return ""
}

// parsePrivateKey reads an RSA key in PEM (PKCS #1 or PKCS #8).
func parsePrivateKey(p string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(p)))
	if block == nil {
		return nil, errors.New("not a PEM block (-----BEGIN PRIVATE KEY----- ...)")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not an RSA private key in PKCS #1 or PKCS #8")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key (the JWT bearer flow signs with RS256)")
	}
	return rk, nil
}

// audience is the JWT bearer flow's aud for the settings: Audience when
// set, else Salesforce's login host for production or for sandboxes.
func (s *Settings) audience() string {
	if s.Audience != "" {
		return s.Audience
	}
	u, _ := url.Parse(s.LoginURL)
	if h := strings.ToLower(u.Hostname()); h == "test.salesforce.com" || strings.HasSuffix(h, ".sandbox.my.salesforce.com") {
		return "https://test.salesforce.com"
	}
	return "https://login.salesforce.com"
}
