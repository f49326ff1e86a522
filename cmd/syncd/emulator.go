package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func init() {
	registerCommand("emulator", "serve an in-memory workspace API, or a CRM stand-in with --crm, for tests and trials",
		func(m *Main) Command { return &EmulatorCommand{m: m} })
}

// EmulatorCommand serves the workspace API emulator until its context ends.
type EmulatorCommand struct{ m *Main }

// customFieldFlags collects --custom-field key:type:name values.
type customFieldFlags []workspace.CustomFieldDefinition

func (f *customFieldFlags) String() string {
	parts := make([]string, len(*f))
	for i, d := range *f {
		parts[i] = d.Key + ":" + d.Type + ":" + d.Name
	}
	return strings.Join(parts, ",")
}

// Set parses key:type:name; the name may itself contain colons.
func (f *customFieldFlags) Set(v string) error {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return fmt.Errorf("want key:type:name, got %q", v)
	}
	if !emulator.ValidFieldType(parts[1]) {
		return fmt.Errorf("type %q of %q is not one of %s", parts[1], parts[0], strings.Join(emulator.FieldTypes, ", "))
	}
	for _, d := range *f {
		if d.Key == parts[0] {
			return fmt.Errorf("custom field key %q given twice", parts[0])
		}
	}
	*f = append(*f, workspace.CustomFieldDefinition{Key: parts[0], Type: parts[1], Name: parts[2]})
	return nil
}

// Run parses the flags and serves until ctx is done.
func (c *EmulatorCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("emulator", emulatorUsage)
	listen := fs.String("listen", "", "address to listen on (port 0 picks a free one); default 127.0.0.1:8089, with --crm 127.0.0.1:8090")
	apiKey := fs.String("api-key", "", "the API key with every right (required)")
	readOnly := fs.String("read-only-key", "", "an API key that may only read (its writes get 403)")
	rate := fs.Float64("rate", workspace.DefaultRateLimit, "requests per second per API key; negative for no limit")
	burst := fs.Int("burst", workspace.DefaultBurst, "burst of each API key's token bucket")
	retryAfter := fs.Bool("retry-after", false, "send Retry-After on 429 (the public service does not)")
	faultRate := fs.Float64("fault-rate", 0, "probability in [0,1] of a fault per API request: 500, 429, latency or lost answer")
	faultLatency := fs.Duration("fault-latency", emulator.DefaultFaultLatency, "delay of a latency fault")
	latency := fs.Duration("latency", 0, "delay added to every API request")
	seed := fs.Int64("seed", 0, "seed of faults, ids and secrets")
	versionHeader := fs.String("version-header", workspace.DefaultVersionHeader, "name of the version header")
	version := fs.String("api-version", workspace.DefaultVersion, "the API version required on webhook operations")
	legacy := fs.Bool("legacy-signature", false, "also sign deliveries with the older openphone-signature header")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	values := fs.String("custom-field-values", workspace.ValuesTyped, "form of custom field values taken and answered: typed (by the field's type, as the published OpenAPI document) or arrays (every value an array of strings, as the spec)")
	envelope := fs.String("webhook-envelope", emulator.EnvelopeObject, "where deliveries carry the contact: object (data.object, as the service's webhook guide) or resource (data.resource, the shape of earlier emulators)")
	whRoutes := fs.String("webhook-routes", emulator.RoutesBoth, "webhook routes served: both, spec (/webhooks, as the spec) or v1 (/v1/webhooks, as the published OpenAPI document)")
	dups := fs.Float64("webhook-duplicates", 0, "share in [0,1] of events delivered twice (the same webhook-id), as at-least-once services do")
	noOrg := fs.Bool("no-organization", false, "answer 404 on GET /v1/organization, as versions of the service without it do")
	var fields customFieldFlags
	fs.Var(&fields, "custom-field", "a custom field definition key:type:name (repeatable); types: "+strings.Join(emulator.FieldTypes, ", "))
	crm := crmFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), ErrUsage)
	}
	if err := checkFlagsOfMode(fs, crm.crm != ""); err != nil {
		return err
	}
	if crm.crm != "" {
		crm.listen, crm.seed = *listen, uint64(*seed)
		return c.runCRM(ctx, *crm, *logLevel)
	}
	if *listen == "" {
		*listen = "127.0.0.1:8089"
	}
	if *apiKey == "" {
		fs.Usage()
		return fmt.Errorf("--api-key is required: %w", ErrUsage)
	}
	if !workspace.ValidValueForm(*values) {
		return fmt.Errorf("--custom-field-values %q: want %s or %s: %w", *values, workspace.ValuesTyped, workspace.ValuesArrays, ErrUsage)
	}
	if *envelope != emulator.EnvelopeObject && *envelope != emulator.EnvelopeResource {
		return fmt.Errorf("--webhook-envelope %q: want %s or %s: %w", *envelope, emulator.EnvelopeObject, emulator.EnvelopeResource, ErrUsage)
	}
	if *whRoutes != emulator.RoutesBoth && !workspace.ValidWebhookRoutes(*whRoutes) {
		return fmt.Errorf("--webhook-routes %q: want %s, %s or %s: %w", *whRoutes, emulator.RoutesBoth, emulator.RoutesSpec, emulator.RoutesV1, ErrUsage)
	}
	if *faultRate < 0 || *faultRate > 1 {
		return fmt.Errorf("--fault-rate %v: want a probability in [0,1]: %w", *faultRate, ErrUsage)
	}
	if *dups < 0 || *dups > 1 {
		return fmt.Errorf("--webhook-duplicates: must be a share in [0,1], not %v: %w", *dups, ErrUsage)
	}
	level, err := logrus.ParseLevel(*logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %v: %w", err, ErrUsage)
	}
	log := logrus.New()
	log.SetOutput(c.m.Stderr)
	log.SetLevel(level)
	entry := log.WithField(logfield.Component, "emulator")

	srv, err := emulator.Listen(*listen, emulator.Options{
		APIKey: *apiKey, ReadOnlyKey: *readOnly,
		VersionHeader: *versionHeader, Version: *version,
		Rate: *rate, Burst: *burst, RetryAfter: *retryAfter,
		FaultRate: *faultRate, FaultLatency: *faultLatency, Latency: *latency,
		Seed: *seed, CustomFields: fields, CustomFieldValues: *values, LegacySignature: *legacy,
		WebhookEnvelope: *envelope, WebhookRoutes: *whRoutes, NoOrganization: *noOrg,
		WebhookDuplicates: *dups,
		Log:               entry,
	})
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	entry.WithField(logfield.URL, srv.URL).WithField(logfield.Rate, *rate).WithField(logfield.FaultRate, *faultRate).
		WithField(logfield.CustomFields, len(fields)).WithField(logfield.CustomFieldValues, *values).Info("emulator listening")
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("emulator shutdown: %w", err)
	}
	entry.Info("emulator stopped")
	return nil
}
