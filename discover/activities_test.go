package discover_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/discover"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

func TestProposeActivities(t *testing.T) {
	contacts := sqlkit.TableShape{Name: "contacts", Types: map[string]string{"id": "bigint", "name": "text"}, Unique: map[string]bool{"id": true}}
	callLog := sqlkit.TableShape{Name: "public.call_log", Types: map[string]string{"id": "bigint", "activity_key": "text", "contact_id": "bigint",
		"started_at": "timestamp with time zone", "direction": "text", "duration_seconds": "integer", "notes": "text", "body": "text", "type": "text"},
		Unique: map[string]bool{"id": true, "activity_key": true}}
	noKey := sqlkit.TableShape{Name: "phone_calls", Types: map[string]string{"id": "bigint", "customer_id": "bigint", "call_time": "datetime"},
		Unique: map[string]bool{"id": true}}
	otherSchema := callLog
	otherSchema.Name = "tenant_b.call_log"
	orders := sqlkit.TableShape{Name: "orders", Types: map[string]string{"id": "bigint", "contact_id": "bigint", "created_at": "timestamp"}}
	cases := []struct {
		name    string
		tables  []sqlkit.TableShape
		table   string
		mapping string // field=column, sorted as proposed
		note    string
	}{
		{"a call log with a unique key", []sqlkit.TableShape{contacts, orders, callLog}, "public.call_log",
			"contact=contact_id key=activity_key kind=type at=started_at direction=direction duration=duration_seconds summary=notes text=body", ""},
		{"a call table without a key column", []sqlkit.TableShape{contacts, noKey}, "phone_calls", "contact=customer_id at=call_time", "no column holds syncd's key"},
		{"no table named like a log", []sqlkit.TableShape{contacts, orders}, "", "", ""},
		{"a call log of another schema", []sqlkit.TableShape{contacts, otherSchema}, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := discover.ProposeActivities("contacts", tc.tables)
			if tc.table == "" {
				if p != nil {
					t.Fatalf("proposed %+v, want none", p)
				}
				return
			}
			if p == nil || p.Table != tc.table {
				t.Fatalf("proposed %+v, want %s", p, tc.table)
			}
			var got []string
			for _, g := range p.Mapping {
				got = append(got, g.Field+"="+g.Column)
			}
			if strings.Join(got, " ") != tc.mapping || !strings.HasPrefix(p.Note, tc.note) {
				t.Errorf("mapping %v note %q, want %s, note %q", got, p.Note, tc.mapping, tc.note)
			}
		})
	}
}

// TestInitProposesTheActivitiesTable: `syncd init` on a contacts table
// with a call_log beside it (PostgreSQL and MariaDB) writes a commented
// activities block which, uncommented, is a valid activities
// configuration for that table.
func TestInitProposesTheActivitiesTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, typ := range []string{"postgres", "mysql"} {
		t.Run(typ, func(t *testing.T) {
			set := map[string]string{}
			switch typ {
			case "postgres":
				pool := pgtest.Connect(t)
				schema := pgtest.NewSchema(t, pool)
				pgtest.Exec(t, pool, `CREATE TABLE `+schema+`.contacts (id bigint PRIMARY KEY, name text, email text, phone text, updated_at timestamptz NOT NULL DEFAULT now())`)
				pgtest.Exec(t, pool, `INSERT INTO `+schema+`.contacts (id, name, email, phone) VALUES (1, 'Ada', 'ada@example.com', '+15551230000')`)
				pgtest.Exec(t, pool, `CREATE TABLE `+schema+`.call_log (activity_key text PRIMARY KEY, contact_id bigint, started_at timestamptz, direction text, seconds integer, summary text)`)
				set["dsn"], set["table"] = pgtest.URL(), schema+".contacts"
			case "mysql":
				_, dsn := mysqltest.NewDatabase(t)
				mdb := mysqltest.Open(t, dsn)
				mysqltest.Exec(t, mdb, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100), email VARCHAR(100), phone VARCHAR(40),
					updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
				mysqltest.Exec(t, mdb, `INSERT INTO contacts (id, name, email, phone) VALUES (1, 'Ada', 'ada@example.com', '+15551230000')`)
				mysqltest.Exec(t, mdb, `CREATE TABLE call_log (activity_key VARCHAR(200) PRIMARY KEY, contact_id INT, started_at TIMESTAMP(3) NULL, direction VARCHAR(10), seconds INT, summary TEXT)`)
				set["dsn"], set["table"] = dsn, "contacts"
			}
			src, err := discover.Inspect(ctx, discover.Request{Type: typ, Set: set})
			if err != nil {
				t.Fatal(err)
			}
			f := discover.File{Connector: "db", BaseURL: "https://api.example.com", APIKeyEnv: "K", StatePath: "s.db", Source: src, Proposal: discover.Propose(src, nil, "US")}
			out, err := f.YAML()
			if err != nil {
				t.Fatal(err)
			}
			// Uncomment the block where it stands: the lines from
			// "# activities:" on, keeping their indentation.
			lines := strings.Split(string(out), "\n")
			in := false
			for i, line := range lines {
				trimmed := strings.TrimLeft(line, " ")
				in = in || strings.HasPrefix(trimmed, "# activities:")
				if in && strings.HasPrefix(trimmed, "# ") {
					lines[i] = line[:len(line)-len(trimmed)] + strings.TrimPrefix(trimmed, "# ")
				}
			}
			var file struct {
				Connectors []struct {
					Activities config.ActivitiesConfig `yaml:"activities"`
				} `yaml:"connectors"`
			}
			if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &file); err != nil || len(file.Connectors) != 1 {
				t.Fatalf("the uncommented file does not parse: %v\n%s", err, out)
			}
			got := file.Connectors[0]
			spec := got.Activities.TableSpec()
			if spec == nil || !strings.HasSuffix(spec.Table, "call_log") || spec.Columns["key"] != "activity_key" || spec.Columns["contact"] != "contact_id" ||
				spec.Columns["at"] != "started_at" || spec.Columns["duration"] != "seconds" || spec.Columns["summary"] != "summary" || len(got.Activities.Log) == 0 {
				t.Errorf("proposed %+v from\n%s", got.Activities, out)
			}
		})
	}
}
