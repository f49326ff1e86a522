package discover

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
)

func TestWords(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"snake", "given_name", "given name"},
		{"camel", "MobilePhone", "mobile phone"},
		{"hyphen", "E-Mail", "e mail"},
		{"dotted", "phones.mobile", "phones mobile"},
		{"acronym", "HTTPUrl", "http url"},
		{"spaces", "Job Title", "job title"},
		{"all caps", "EMAIL", "email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(words(tt.in), " "); got != tt.want {
				t.Fatalf("words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestProposeByName: one field at a time, the target its name or samples
// give, or none.
func TestProposeByName(t *testing.T) {
	custom := []workspace.CustomFieldDefinition{{Name: "Loyalty tier", Key: "loyaltyTier", Type: "string"}, {Name: "Customer since", Key: "since", Type: "date"}}
	tests := []struct {
		name    string
		field   Field
		want    string // target <- why fragment, or "" for unmapped
		wantWhy string
	}{
		{"given name", Field{Name: "given_name"}, "firstName", "usual name for the first name"},
		{"forename", Field{Name: "Forename"}, "firstName", "first name"},
		{"firstname hubspot", Field{Name: "firstname"}, "firstName", "first name"},
		{"family name", Field{Name: "family_name"}, "lastName", "last name"},
		{"surname", Field{Name: "Surname"}, "lastName", "last name"},
		{"organisation", Field{Name: "organisation"}, "company", "company"},
		{"org", Field{Name: "org"}, "company", "company"},
		{"pipedrive org_name", Field{Name: "org_name"}, "company", "company"},
		{"job title", Field{Name: "JobTitle"}, "role", "role"},
		{"title", Field{Name: "Title"}, "role", "role"},
		{"e-mail", Field{Name: "E-Mail"}, "emails.work", "names an e-mail"},
		{"mail_addr", Field{Name: "mail_addr"}, "emails.work", "names an e-mail"},
		{"home email", Field{Name: "home_email"}, "emails.home", "names an e-mail"},
		{"pipedrive emails.work", Field{Name: "emails.work"}, "emails.work", "names an e-mail"},
		{"email by samples", Field{Name: "contact", Samples: []string{"a@example.com", "b@example.org"}}, "emails.work", "100% of the samples are e-mail addresses"},
		{"email bounce reason", Field{Name: "EmailBouncedReason", Samples: []string{"mailbox full"}}, "", ""},
		{"cell", Field{Name: "cell"}, "phoneNumbers.mobile", "names a phone number"},
		{"MobilePhone", Field{Name: "MobilePhone"}, "phoneNumbers.mobile", "names a phone number"},
		{"mobile", Field{Name: "mobile"}, "phoneNumbers.mobile", "names a phone number"},
		{"phone", Field{Name: "Phone"}, "phoneNumbers.work", "names a phone number"},
		{"home phone", Field{Name: "HomePhone"}, "phoneNumbers.home", "names a phone number"},
		{"phone by samples", Field{Name: "whatsapp", Samples: []string{"+1 415 555 0100", "(415) 555-0199"}}, "phoneNumbers.work", "100% of the samples are phone numbers"},
		{"fax", Field{Name: "fax", Samples: []string{"+1 415 555 0100"}}, "", ""},
		{"dates are no phones", Field{Name: "born", Samples: []string{"1990-01-02", "1985-12-31"}}, "", ""},
		{"custom by name", Field{Name: "loyalty_tier"}, "custom.loyaltyTier", `custom field "Loyalty tier"`},
		{"custom by key", Field{Name: "since"}, "custom.since", "custom field"},
		{"full name", Field{Name: "full_name"}, "firstName", "holds the whole name"},
		{"timestamp named like a role", Field{Name: "title", Time: true}, "", ""},
		{"notes", Field{Name: "notes", Samples: []string{"likes tea"}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Propose(&Source{Fields: []Field{tt.field}}, custom, "")
			if tt.want == "" {
				if len(p.Guesses) != 0 || len(p.Unmapped) != 1 {
					t.Fatalf("guesses %+v, unmapped %+v; want it unmapped", p.Guesses, p.Unmapped)
				}
				return
			}
			if len(p.Guesses) != 1 {
				t.Fatalf("guesses %+v, want one for %s", p.Guesses, tt.want)
			}
			g := p.Guesses[0]
			if g.Target != tt.want || !strings.Contains(g.Why, tt.wantWhy) {
				t.Fatalf("guess %s (%s), want %s with a reason naming %q", g.Target, g.Why, tt.want, tt.wantWhy)
			}
			if strings.HasPrefix(g.Target, "phoneNumbers.") && (len(g.Transform) != 1 || g.Transform[0] != "e164" || g.Region == "") {
				t.Fatalf("phone guess %+v: want the e164 transform and a region", g)
			}
		})
	}
}

// TestProposeTakesEachTargetOnce: the first field takes a target; a
// second e-mail goes to emails.other, the id and skipped fields are left
// out, and every field appears once, mapped or unmapped.
func TestProposeTakesEachTargetOnce(t *testing.T) {
	src := &Source{
		Fields: []Field{{Name: "id"}, {Name: "email"}, {Name: "mail"}, {Name: "first_name"}, {Name: "given_name"}, {Name: "name"}, {Name: "updated_at", Time: true}},
		Skip:   map[string]string{"updated_at": "the change cursor"},
	}
	p := Propose(src, nil, "")
	var got []string
	for _, g := range p.Guesses {
		got = append(got, g.Target+"<-"+g.From)
	}
	for _, u := range p.Unmapped {
		got = append(got, "-"+u.Field)
	}
	want := "firstName<-first_name,emails.work<-email,emails.other<-mail,-given_name,-name"
	if strings.Join(got, ",") != want {
		t.Fatalf("proposal %s, want %s", strings.Join(got, ","), want)
	}
}

func TestGuessRegion(t *testing.T) {
	tests := []struct {
		name    string
		samples []string
		want    string
	}{
		{"no samples", nil, "US"},
		{"US national", []string{"(415) 555-0100", "212 555 0199"}, "US"},
		{"UK national", []string{"020 7946 0018", "0161 496 0000"}, "GB"},
		{"German national", []string{"030 901820", "089 12345678"}, "DE"},
		{"international only", []string{"+33 1 42 68 53 00", "+33 6 12 34 56 78"}, "FR"},
		{"00 prefix", []string{"0033 1 42 68 53 00"}, "FR"},
		{"UK fictional mobiles with one +44", []string{"07700 900123", "07700 900456", "+44 7700 900789"}, "GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := GuessRegion(tt.samples)
			if got != tt.want || why == "" {
				t.Fatalf("GuessRegion(%q) = %s (%s), want %s", tt.samples, got, why, tt.want)
			}
		})
	}
}

// TestProposeRegionFlagWins: --region overrides the samples' region.
func TestProposeRegionFlagWins(t *testing.T) {
	src := &Source{Fields: []Field{{Name: "mobile", Samples: []string{"020 7946 0018"}}}}
	p := Propose(src, nil, "IE")
	if p.Region != "IE" || p.Guesses[0].Region != "IE" {
		t.Fatalf("region %s / %s, want IE from the flag", p.Region, p.Guesses[0].Region)
	}
}

func TestCursor(t *testing.T) {
	ts := "timestamp with time zone"
	tests := []struct {
		name    string
		cols    []SQLColumn
		want    string
		wantErr string
	}{
		{"trigger set", []SQLColumn{{Name: "created", Type: ts, Time: true}, {Name: "stamp", Type: ts, Time: true, SetOnUpdate: "touch"}}, "stamp", ""},
		{"trigger beats name", []SQLColumn{{Name: "updated_at", Type: ts, Time: true}, {Name: "stamp", Type: ts, Time: true, SetOnUpdate: "touch"}}, "stamp", ""},
		{"modified_on", []SQLColumn{{Name: "created_on", Type: ts, Time: true}, {Name: "modified_on", Type: ts, Time: true}}, "modified_on", ""},
		{"LastChanged", []SQLColumn{{Name: "LastChanged", Type: ts, Time: true}}, "LastChanged", ""},
		{"text named updated", []SQLColumn{{Name: "updated_by", Type: "text"}}, "", "no timestamp column"},
		{"none", []SQLColumn{{Name: "created_at", Type: ts, Time: true}}, "", "--set updatedAtColumn=COLUMN"},
		{"two named", []SQLColumn{{Name: "updated_at", Type: ts, Time: true}, {Name: "modified", Type: ts, Time: true}}, "", "updated_at, modified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why, err := Cursor("t", tt.cols)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "updatedAtColumn: ") {
					t.Fatalf("Cursor = %q, %v; want an error naming updatedAtColumn and %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || why == "" {
				t.Fatalf("Cursor = %q (%s), %v; want %q", got, why, err, tt.want)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	for _, tt := range []struct{ typ, key, want string }{
		{"postgres", "dsn", "POSTGRES_DSN"}, {"pipedrive", "apiToken", "PIPEDRIVE_API_TOKEN"}, {"salesforce", "clientSecret", "SALESFORCE_CLIENT_SECRET"},
	} {
		t.Run(fmt.Sprint(tt.typ, "/", tt.key), func(t *testing.T) {
			if got := EnvName(tt.typ, tt.key); got != tt.want {
				t.Fatalf("EnvName = %s, want %s", got, tt.want)
			}
		})
	}
}
