package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/demo"
	"github.com/syncd-io/syncd/internal/logfield"
)

const emulatorUsage = `emulator --api-key KEY [--listen ADDR] [flags]
       syncd emulator --crm hubspot|salesforce|pipedrive [--listen ADDR] [--records FILE] [--sample N] [flags]

The first form serves the workspace API in memory (contacts, custom fields,
webhooks, rate limits, faults), for tests and demos.

The second serves a CRM stand-in in memory: the test server syncd's own
tests run that CRM's connector against, built from the vendor's
documentation (connector/<crm>/FACTS.md), to try a mapping and a
connector's settings before touching a real account. It answers the
vendor's routes the connector uses, with the vendor's paging, rate limits
(--rate-limit), refusals and merges. At start it prints on standard output
the connectors: section to put in syncd.yaml (URL and credentials), and
seeds --sample sample people and the records of --records:
  hubspot     [{"properties": {"firstname": "Ada", "email": "ada@example.com"}}]
              (properties outside HubSpot's standard ones become the account's)
  salesforce  [{"FirstName": "Ada", "LastName": "Lovelace", "Email": "ada@example.com"}]
              (Contact fields; custom fields end in __c)
  pipedrive   [{"name": "Ada Lovelace", "emails": [{"value": "ada@example.com", "label": "work", "primary": true}],
                "phones": [{"value": "+14155550100", "label": "mobile"}], "org_name": "Analytical Engines"}]
HubSpot sends its signed change webhooks to --webhook-url (signed with
--webhook-secret, the app's client secret; retried as HubSpot retries).
Pipedrive's webhooks are registered on the stand-in by syncd itself, as on
Pipedrive (the connector's webhooks: settings, printed as a comment, then
syncd webhooks register or webhooks.autoRegister); Salesforce sends none.
Salesforce's login host listens on --login-listen, its instance on --listen.

Flags marked (--crm) apply to the second form only; --listen, --seed and
--log-level to both; the others to the first form only.`

// crmFlags defines the flags of the --crm form on fs.
func crmFlags(fs *flag.FlagSet) *crmOptions {
	o := &crmOptions{}
	fs.StringVar(&o.crm, "crm", "", "(--crm) serve a stand-in of this CRM instead of the workspace: "+strings.Join(crmNames, ", "))
	fs.StringVar(&o.loginListen, "login-listen", "127.0.0.1:8091", "(--crm) address of Salesforce's login host (the token endpoint)")
	fs.StringVar(&o.records, "records", "", "(--crm) a JSON file of records to seed, in the CRM's own shape (see above)")
	fs.IntVar(&o.sample, "sample", 10, "(--crm) number of sample people to seed")
	fs.IntVar(&o.rateLimit, "rate-limit", 0, "(--crm) HubSpot: requests per 10 s (100 Free/Starter, 190 Professional); Pipedrive: requests per 2 s (the burst limit); Salesforce: the daily API allowance (default 100000); 0: no limit but HubSpot's and Pipedrive's documented search limits")
	fs.StringVar(&o.webhookURL, "webhook-url", "", "(--crm hubspot) send change webhooks to this URL: the receiver's /webhooks/connectors/<name>")
	fs.StringVar(&o.webhookSecret, "webhook-secret", "", "(--crm hubspot) the app's client secret the webhooks are signed with (required with --webhook-url)")
	return o
}

// checkFlagsOfMode refuses a flag of the other form than the one chosen.
func checkFlagsOfMode(fs *flag.FlagSet, crm bool) error {
	var errs []string
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "listen" || f.Name == "seed" || f.Name == "log-level" || f.Name == "crm":
		case strings.HasPrefix(f.Usage, "(--crm") != crm:
			if crm {
				errs = append(errs, fmt.Sprintf("--%s is a flag of the workspace emulator, not of --crm", f.Name))
			} else {
				errs = append(errs, fmt.Sprintf("--%s goes with --crm", f.Name))
			}
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(errs, "; "), ErrUsage)
	}
	return nil
}

// runCRM serves the CRM stand-in of o until ctx is done.
func (c *EmulatorCommand) runCRM(ctx context.Context, o crmOptions, logLevel string) error {
	level, err := logrus.ParseLevel(logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %v: %w", err, ErrUsage)
	}
	if o.listen == "" {
		o.listen = "127.0.0.1:8090"
	}
	if o.sample < 0 || o.rateLimit < 0 {
		return fmt.Errorf("--sample and --rate-limit cannot be negative: %w", ErrUsage)
	}
	if o.webhookURL != "" || o.webhookSecret != "" {
		if o.crm != "hubspot" {
			return fmt.Errorf("--webhook-url: only the HubSpot stand-in is told where to send webhooks; syncd registers Pipedrive's itself, Salesforce sends none: %w", ErrUsage)
		}
		if o.webhookURL == "" || o.webhookSecret == "" {
			return fmt.Errorf("--webhook-url and --webhook-secret go together: %w", ErrUsage)
		}
	}
	log := logrus.New()
	log.SetOutput(c.m.Stderr)
	log.SetLevel(level)
	entry := log.WithField(logfield.Component, "emulator").WithField(logfield.Type, o.crm)
	s, err := startCRM(o)
	if err != nil {
		return fmt.Errorf("emulator --crm %s: %w", o.crm, err)
	}
	defer s.close()
	fmt.Fprintf(c.m.Stdout, "# A %s stand-in with %d records; its connector for syncd.yaml, beside workspace: and state:\n%s", o.crm, s.records, s.config)
	entry.WithField(logfield.URL, strings.Join(s.urls, " ")).WithField(logfield.Records, s.records).Info("emulator listening")
	<-ctx.Done()
	entry.Info("emulator stopped")
	return nil
}

// crmNames are the CRMs `syncd emulator --crm` stands in for.
var crmNames = []string{"hubspot", "salesforce", "pipedrive"}

// crmOptions are the flags of `syncd emulator --crm`.
type crmOptions struct {
	crm, listen, loginListen  string
	records                   string // a JSON file of records in the CRM's own shape
	sample, rateLimit         int
	seed                      uint64
	webhookURL, webhookSecret string
}

// crmStandIn is one CRM's test server, running, with what to put in
// syncd.yaml to reach it.
type crmStandIn struct {
	urls    []string // the base URLs, for the log
	records int      // how many records it was seeded with
	config  string   // the connectors: section of a syncd.yaml
	close   func()
}

// startCRM starts the test server of o.crm on o's addresses and seeds it.
func startCRM(o crmOptions) (*crmStandIn, error) {
	switch o.crm {
	case "hubspot":
		return startHubSpot(o)
	case "salesforce":
		return startSalesforce(o)
	case "pipedrive":
		return startPipedrive(o)
	}
	return nil, fmt.Errorf("--crm %q: want one of %s: %w", o.crm, strings.Join(crmNames, ", "), ErrUsage)
}

// readRecords decodes o.records, a JSON array of objects, into out.
func readRecords(path string, out any) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--records: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("--records %s: want a JSON array of records: %w", path, err)
	}
	return nil
}

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln, nil
}

// hubspotRecord is a record of --records for HubSpot: the contact create
// body of the CRM v3 API ({"properties": {...}}).
type hubspotRecord struct {
	Properties map[string]string `json:"properties"`
}

func startHubSpot(o crmOptions) (*crmStandIn, error) {
	var recs []hubspotRecord
	if err := readRecords(o.records, &recs); err != nil {
		return nil, err
	}
	// The account defines the non-standard properties the records use,
	// as a portal with those custom properties would.
	var custom []string
	seen := map[string]bool{}
	for _, p := range hubspotemu.StandardProperties {
		seen[p] = true
	}
	for _, r := range recs {
		for k := range r.Properties {
			if !seen[k] {
				seen[k] = true
				custom = append(custom, k)
			}
		}
	}
	ln, err := listen(o.listen)
	if err != nil {
		return nil, err
	}
	hs := hubspotemu.NewServer(hubspotemu.Options{Listener: ln, Seed: o.seed, RateLimit: o.rateLimit, Properties: custom})
	for i, r := range recs {
		if _, err := hs.Seed(r.Properties); err != nil {
			hs.Close()
			return nil, fmt.Errorf("--records %s: record %d: %w", o.records, i, err)
		}
	}
	for _, p := range demo.SamplePeople(o.sample) {
		hs.Add(map[string]string{"firstname": p[1], "lastname": p[2], "email": p[3], "phone": p[4], "company": p[5]})
	}
	hooks := ""
	if o.webhookURL != "" {
		hs.SetWebhooks(&hubspotemu.WebhookTarget{URL: o.webhookURL, ClientSecret: o.webhookSecret, AppID: 1, PortalID: 1})
		hooks = fmt.Sprintf("      webhooks: { url: %q, clientSecret: %q }\n", o.webhookURL, o.webhookSecret)
	}
	return &crmStandIn{urls: []string{hs.URL}, records: len(recs) + o.sample, close: hs.Close, config: fmt.Sprintf(`connectors:
  - name: hubspot
    type: hubspot
    source: custom-hubspot
    settings:
      baseURL: %s
      token: %s
%s    mapping:
      externalId: hs_object_id
      fields:
        firstName: firstname
        lastName: lastname
        company: company
        emails.work: { from: email, transform: [email] }
        phoneNumbers.work: { from: phone, transform: [e164], region: US }
`, hs.URL, hs.Token(), hooks)}, nil
}

func startSalesforce(o crmOptions) (*crmStandIn, error) {
	var recs []map[string]any
	if err := readRecords(o.records, &recs); err != nil {
		return nil, err
	}
	var custom []string
	seen := map[string]bool{}
	for _, r := range recs {
		for k := range r {
			if strings.HasSuffix(k, "__c") && !seen[k] {
				seen[k] = true
				custom = append(custom, k)
			}
		}
	}
	login, err := listen(o.loginListen)
	if err != nil {
		return nil, err
	}
	inst, err := listen(o.listen)
	if err != nil {
		_ = login.Close()
		return nil, err
	}
	org := salesforceemu.NewServer(salesforceemu.Options{LoginListener: login, InstanceListener: inst,
		RealClock: true, DailyLimit: int64(o.rateLimit), CustomFields: custom})
	for i, r := range recs {
		if _, err := org.Seed("Contact", r); err != nil {
			org.Close()
			return nil, fmt.Errorf("--records %s: record %d: %w", o.records, i, err)
		}
	}
	for _, p := range demo.SamplePeople(o.sample) {
		org.Add("Contact", map[string]any{"FirstName": p[1], "LastName": p[2], "Email": p[3], "Phone": p[4], "Title": p[5]})
	}
	return &crmStandIn{urls: []string{org.LoginURL, org.InstanceURL}, records: len(recs) + o.sample, close: org.Close, config: fmt.Sprintf(`connectors:
  - name: salesforce
    type: salesforce
    source: custom-salesforce
    settings:
      loginURL: %s
      clientId: %s
      clientSecret: %s
      object: Contact
      # The stand-in commits at once; keep the default (1m) with a real org.
      settle: 1s
    mapping:
      fields:
        firstName: FirstName
        lastName: LastName
        emails.work: { from: Email, transform: [email] }
        phoneNumbers.work: { from: Phone, transform: [e164], region: US }
`, org.LoginURL, org.ClientID(), org.ClientSecret())}, nil
}

// pipedriveRecord is a record of --records for Pipedrive: the person
// create body of API v2, with the organization by name.
type pipedriveRecord struct {
	Name    string              `json:"name"`
	Emails  []pipedriveemu.Item `json:"emails"`
	Phones  []pipedriveemu.Item `json:"phones"`
	OrgName string              `json:"org_name"`
}

func startPipedrive(o crmOptions) (*crmStandIn, error) {
	var recs []pipedriveRecord
	if err := readRecords(o.records, &recs); err != nil {
		return nil, err
	}
	for i, r := range recs {
		if strings.TrimSpace(r.Name) == "" {
			return nil, fmt.Errorf("--records %s: record %d: name is required, as Pipedrive requires it", o.records, i)
		}
	}
	ln, err := listen(o.listen)
	if err != nil {
		return nil, err
	}
	pd := pipedriveemu.NewServer(pipedriveemu.Options{Listener: ln, BurstLimit: o.rateLimit})
	orgs := map[string]int64{}
	org := func(name string) int64 {
		if name == "" {
			return 0
		}
		if orgs[name] == 0 {
			orgs[name] = pd.AddOrg(name)
		}
		return orgs[name]
	}
	for _, r := range recs {
		pd.Add(pipedriveemu.Person{Name: r.Name, Emails: r.Emails, Phones: r.Phones, OrgID: org(r.OrgName)})
	}
	for _, p := range demo.SamplePeople(o.sample) {
		pd.Add(pipedriveemu.Person{Name: p[1] + " " + p[2], OrgID: org(p[5]),
			Emails: []pipedriveemu.Item{{Value: p[3], Label: "work", Primary: true}},
			Phones: []pipedriveemu.Item{{Value: p[4], Label: "mobile", Primary: true}}})
	}
	return &crmStandIn{urls: []string{pd.URL}, records: len(recs) + o.sample, close: pd.Close, config: fmt.Sprintf(`connectors:
  - name: pipedrive
    type: pipedrive
    source: custom-pipedrive
    settings:
      baseURL: %s
      apiToken: %s
      # Change webhooks: syncd registers them on the stand-in (syncd webhooks
      # register), which delivers them to the receiver (webhooks.listen):
      # webhooks: { url: http://RECEIVER/webhooks/connectors/pipedrive, user: syncd, password: A-RANDOM-SECRET-16+ }
    mapping:
      fields:
        firstName: first_name
        lastName: last_name
        company: { from: org_name, direction: to-workspace }
        emails.work: emails.work
        phoneNumbers.mobile: { from: phones.mobile, transform: [e164], region: US }
`, pd.URL, pd.Token())}, nil
}
