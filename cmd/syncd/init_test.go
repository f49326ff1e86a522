package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// initEnv runs syncd commands in-process with an environment of its own.
type initEnv struct {
	t   *testing.T
	dir string
	env map[string]string
	emu *emulator.Server
}

func newInitEnv(t *testing.T, custom ...workspace.CustomFieldDefinition) *initEnv {
	t.Helper()
	e := &initEnv{t: t, dir: t.TempDir(), env: map[string]string{}}
	e.emu = emulator.NewServer(emulator.Options{Rate: -1, CustomFields: custom})
	t.Cleanup(e.emu.Close)
	e.env[apiKeyEnv] = emulator.DefaultAPIKey
	e.env["SYNCD_ADMIN_LISTEN"] = ""
	return e
}

// run runs one command; prompt, when set, answers init's questions.
func (e *initEnv) run(prompt Prompter, args ...string) (string, string, error) {
	var out, errb capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return e.env[k] }}
	var err error
	if args[0] == "init" {
		err = (&InitCommand{m: m, prompt: prompt}).Run(context.Background(), args[1:])
	} else {
		err = m.Run(context.Background(), args)
	}
	return out.String(), errb.String(), err
}

func (e *initEnv) must(prompt Prompter, args ...string) string {
	e.t.Helper()
	out, errs, err := e.run(prompt, args...)
	if err != nil {
		e.t.Fatalf("syncd %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
	}
	return out
}

// exportsFrom sets, as a user would, the variables of init's export lines.
func (e *initEnv) exportsFrom(out string) {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "export "); ok {
			name, val, _ := strings.Cut(v, "=")
			e.env[name] = strings.ReplaceAll(strings.Trim(val, "'"), `'\''`, "'")
		}
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// contactByExternalID returns the emulator's contacts by externalId.
func contactsByExternalID(emu *emulator.Server) map[string]workspace.Contact {
	out := map[string]workspace.Contact{}
	for _, c := range emu.Contacts() {
		out[str(c.ExternalID)] = c
	}
	return out
}

func items(its []workspace.Item) string {
	var s []string
	for _, it := range its {
		s = append(s, it.Name+"="+it.Value)
	}
	return strings.Join(s, ",")
}

func customValue(c workspace.Contact, key string) string {
	for _, f := range c.CustomFields {
		if f.Key == key {
			return strings.Join(f.Value.Text(), ";")
		}
	}
	return ""
}

// TestInitPostgresTableToContacts is the new user's way: a table whose
// columns are named unlike syncd's examples goes from `syncd init` to
// contacts with every mappable field right, without editing the file:
// init, validate, run --once against the workspace emulator.
func TestInitPostgresTableToContacts(t *testing.T) {
	pool := pgtest.Connect(t)
	schema := pgtest.NewSchema(t, pool)
	table := schema + ".customers"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (
		customer_no bigserial PRIMARY KEY,
		given_name text, family_name text, mail_addr text, cell text, org text, job_title text,
		loyalty_tier text, notes text,
		created_on timestamptz NOT NULL DEFAULT now(),
		modified_on timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `CREATE FUNCTION `+schema+`.touch() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN NEW.modified_on := now(); RETURN NEW; END $$`)
	pgtest.Exec(t, pool, `CREATE TRIGGER customers_touch BEFORE UPDATE ON `+table+` FOR EACH ROW EXECUTE FUNCTION `+schema+`.touch()`)
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (given_name, family_name, mail_addr, cell, org, job_title, loyalty_tier, notes) VALUES
		('Ada', 'Lovelace', 'ada@example.com', '07700 900123', 'Analytical Engines', 'Programmer', 'gold', 'likes tea'),
		('Alan', 'Turing', 'alan@example.org', '07700 900456', 'Bletchley Park', 'Cryptanalyst', 'silver', NULL),
		('Grace', 'Hopper', 'grace@example.net', '+44 7700 900789', 'Navy', 'Rear Admiral', 'gold', 'COBOL')`)

	// The file does not set changes, so the connector streams (changes:
	// auto); its slot and publication are the test's own and dropped.
	name := strings.TrimPrefix(pgtest.Slot(t, pool), "syncd_")
	initTableToContacts(t, "postgres", pgtest.URL(), table, name, []string{
		"dsn: ${POSTGRES_DSN}", "idColumn: customer_no # the primary key",
		"updatedAtColumn: modified_on # timestamp with time zone, set by trigger customers_touch on every update",
	})
}

// initTableToContacts runs init on a table of the customers shape (with
// --name name unless empty), checks the file, validates it, syncs once
// and checks every contact's fields.
func initTableToContacts(t *testing.T, typ, dsn, table, name string, wantLines []string) {
	t.Helper()
	e := newInitEnv(t, workspace.CustomFieldDefinition{Name: "Loyalty tier", Key: "loyaltyTier", Type: workspace.FieldString})
	cfg := filepath.Join(e.dir, "syncd.yaml")
	args := []string{"init", "--type", typ, "--set", "dsn=" + dsn, "--set", "table=" + table, "--base-url", e.emu.URL, "--out", cfg}
	if name != "" {
		args = append(args, "--name", name)
	}
	out := e.must(nil, args...)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := string(data)
	t.Logf("init wrote:\n%s\nand said:\n%s", file, out)
	if typ == "postgres" {
		// init only looked: no publication (nor the slot named like it)
		// was left for the table it sampled.
		assertNoPublication(t, table)
	}
	for _, want := range append(wantLines,
		"apiKey: ${WORKSPACE_API_KEY}", `firstName: given_name # "given_name" is a usual name for the first name`,
		"lastName: family_name", "company: org", "role: job_title",
		"emails.work: mail_addr", "phoneNumbers.mobile: {from: cell, transform: [e164], region: GB}",
		"custom.loyaltyTier: loyalty_tier", "notes: no guess", "created_on: a date or time",
	) {
		if !strings.Contains(file, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	if strings.Contains(file, dsn) {
		t.Fatal("the dsn is in the file")
	}
	if !strings.Contains(out, "export "+strings.ToUpper(typ)+"_DSN='"+dsn+"'") {
		t.Fatalf("init did not print the export line of the dsn:\n%s", out)
	}
	e.exportsFrom(out)

	// The file as written parses, validates and syncs: nobody edits it.
	if _, err := config.ParseConfig(data, func(k string) string { return e.env[k] }); err != nil {
		t.Fatalf("config.ParseConfig: %v", err)
	}
	e.must(nil, "validate", "--config", cfg)
	e.must(nil, "run", "--once", "--config", cfg)

	got := contactsByExternalID(e.emu)
	if len(got) != 3 {
		t.Fatalf("%d contacts, want 3", len(got))
	}
	want := []struct{ id, first, last, company, role, email, phone, tier string }{
		{"1", "Ada", "Lovelace", "Analytical Engines", "Programmer", "work=ada@example.com", "mobile=+447700900123", "gold"},
		{"2", "Alan", "Turing", "Bletchley Park", "Cryptanalyst", "work=alan@example.org", "mobile=+447700900456", "silver"},
		{"3", "Grace", "Hopper", "Navy", "Rear Admiral", "work=grace@example.net", "mobile=+447700900789", "gold"},
	}
	for _, w := range want {
		c, ok := got[w.id]
		if !ok {
			t.Errorf("no contact for row %s", w.id)
			continue
		}
		d := c.DefaultFields
		gotRow := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s", str(d.FirstName), str(d.LastName), str(d.Company), str(d.Role), items(d.Emails), items(d.PhoneNumbers), customValue(c, "loyaltyTier"))
		wantRow := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s", w.first, w.last, w.company, w.role, w.email, w.phone, w.tier)
		if gotRow != wantRow {
			t.Errorf("row %s: contact %s, want %s", w.id, gotRow, wantRow)
		}
	}
}

// TestInitWithoutTerminalNamesWhatIsMissing: no terminal, no prompter:
// init fails naming every missing input and writes nothing.
func TestInitWithoutTerminalNamesWhatIsMissing(t *testing.T) {
	e := newInitEnv(t)
	delete(e.env, apiKeyEnv)
	cfg := filepath.Join(e.dir, "syncd.yaml")
	_, _, err := e.run(nil, "init", "--type", "postgres", "--set", "table=contacts", "--out", cfg)
	var me *MissingInputError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a MissingInputError", err)
	}
	for _, want := range []string{"--set dsn=...", "--base-url", "WORKSPACE_API_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "table") {
		t.Errorf("error names table, which was given:\n%v", err)
	}
	if _, err := os.Stat(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("init wrote a file")
	}
}

// TestInitNeverOverwritesWithoutForce: an existing file stays as it was
// unless --force is given.
func TestInitNeverOverwritesWithoutForce(t *testing.T) {
	e := newInitEnv(t)
	csvPath := filepath.Join(e.dir, "people.csv")
	if err := os.WriteFile(csvPath, []byte("id,first,surname,e_mail\n1,Ada,Lovelace,ada@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.dir, "syncd.yaml")
	if err := os.WriteFile(cfg, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"init", "--type", "csv", "--set", "path=" + csvPath, "--base-url", e.emu.URL, "--out", cfg}
	_, _, err := e.run(nil, args...)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want one naming --force", err)
	}
	if data, _ := os.ReadFile(cfg); string(data) != "mine\n" {
		t.Fatalf("the file was overwritten: %q", data)
	}
	e.must(nil, append(args, "--force")...)
	data, _ := os.ReadFile(cfg)
	for _, want := range []string{"firstName: first", "lastName: surname", "emails.work: e_mail"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the file written with --force lacks %q:\n%s", want, data)
		}
	}
}

// TestInitMySQLTableToContacts: the same on MariaDB, the cursor a
// TIMESTAMP(6) column ON UPDATE CURRENT_TIMESTAMP named unlike syncd's
// examples.
func TestInitMySQLTableToContacts(t *testing.T) {
	_, dsn := mysqltest.NewDatabase(t)
	db := mysqltest.Open(t, dsn)
	mysqltest.Exec(t, db, "CREATE TABLE customers ("+
		"customer_no BIGINT AUTO_INCREMENT PRIMARY KEY, "+
		"given_name VARCHAR(100), family_name VARCHAR(100), mail_addr VARCHAR(200), cell VARCHAR(40), org VARCHAR(100), job_title VARCHAR(100), "+
		"loyalty_tier VARCHAR(20), notes TEXT, "+
		"created_on TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "+
		"modified_on TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)) CHARACTER SET utf8mb4")
	mysqltest.Exec(t, db, `INSERT INTO customers (given_name, family_name, mail_addr, cell, org, job_title, loyalty_tier, notes, created_on, modified_on) VALUES
		('Ada', 'Lovelace', 'ada@example.com', '07700 900123', 'Analytical Engines', 'Programmer', 'gold', 'likes tea', NOW(6) - INTERVAL 1 HOUR, NOW(6) - INTERVAL 1 HOUR),
		('Alan', 'Turing', 'alan@example.org', '07700 900456', 'Bletchley Park', 'Cryptanalyst', 'silver', NULL, NOW(6) - INTERVAL 1 HOUR, NOW(6) - INTERVAL 1 HOUR),
		('Grace', 'Hopper', 'grace@example.net', '+44 7700 900789', 'Navy', 'Rear Admiral', 'gold', 'COBOL', NOW(6) - INTERVAL 1 HOUR, NOW(6) - INTERVAL 1 HOUR)`)
	initTableToContacts(t, "mysql", dsn, "customers", "", []string{
		"dsn: ${MYSQL_DSN}", "idColumn: customer_no # the primary key",
		"updatedAtColumn: modified_on # timestamp(6), set by ON UPDATE CURRENT_TIMESTAMP on every update",
	})
}

// TestInitCSVToContacts: a CSV export with headers unlike syncd's
// examples (a customer_id, Forename, Surname, E-Mail, Mobile No,
// Organisation, a column of phone numbers named Contact) goes from init
// to contacts, without editing the file.
func TestInitCSVToContacts(t *testing.T) {
	e := newInitEnv(t)
	csvPath := filepath.Join(e.dir, "export.csv")
	rows := "customer_id;Forename;Surname;E-Mail;Mobile No;Organisation;Contact;Remarks\n" +
		"c1;Ada;Lovelace;ada@example.com;0151 23456789;Engines;030 901820;vip\n" +
		"c2;Alan;Turing;alan@example.com;0170 1234567;Bletchley;089 12345678;\n"
	if err := os.WriteFile(csvPath, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.dir, "syncd.yaml")
	out := e.must(nil, "init", "--type", "csv", "--set", "path="+csvPath, "--base-url", e.emu.URL, "--out", cfg)
	data, _ := os.ReadFile(cfg)
	for _, want := range []string{
		`delimiter: ; # the header is split by ";"`, "idColumn: customer_id # the only column named like an id",
		"firstName: Forename", "lastName: Surname", "company: Organisation", "emails.work: E-Mail",
		"phoneNumbers.mobile: {from: Mobile No, transform: [e164], region: DE}",
		"phoneNumbers.work: {from: Contact, transform: [e164], region: DE} # 100% of the samples are phone numbers",
		"Phone region DE", "Remarks: no guess",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the file lacks %q:\n%s", want, data)
		}
	}
	e.exportsFrom(out)
	e.must(nil, "validate", "--config", cfg)
	e.must(nil, "run", "--once", "--config", cfg)
	got := contactsByExternalID(e.emu)
	for id, want := range map[string]string{
		"c1": "Ada|Lovelace|Engines|work=ada@example.com|mobile=+4915123456789,work=+4930901820",
		"c2": "Alan|Turing|Bletchley|work=alan@example.com|mobile=+491701234567,work=+498912345678",
	} {
		c := got[id]
		d := c.DefaultFields
		if row := strings.Join([]string{str(d.FirstName), str(d.LastName), str(d.Company), items(d.Emails), items(d.PhoneNumbers)}, "|"); row != want {
			t.Errorf("contact %s: %s, want %s", id, row, want)
		}
	}
}

// TestInitTableWithoutCursorSaysWhatToSet: a table with no timestamp that
// moves on update: init, without a terminal, fails naming
// updatedAtColumn and how to set it, and writes nothing.
func TestInitTableWithoutCursorSaysWhatToSet(t *testing.T) {
	pool := pgtest.Connect(t)
	schema := pgtest.NewSchema(t, pool)
	table := schema + ".people"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id int PRIMARY KEY, first_name text, created_at timestamptz DEFAULT now())`)
	e := newInitEnv(t)
	cfg := filepath.Join(e.dir, "syncd.yaml")
	_, _, err := e.run(nil, "init", "--type", "postgres", "--set", "dsn="+pgtest.URL(), "--set", "table="+table, "--base-url", e.emu.URL, "--out", cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "updatedAtColumn: ") || !strings.Contains(err.Error(), "--set updatedAtColumn=COLUMN") {
		t.Fatalf("err = %v, want one naming updatedAtColumn and the --set to give", err)
	}
	if _, err := os.Stat(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("init wrote a file")
	}
}

// assertNoPublication fails the test when a publication of the
// PostgreSQL table (schema.name) exists.
func assertNoPublication(t *testing.T, table string) {
	t.Helper()
	pool := pgtest.Connect(t)
	var pubs []string
	rows, err := pool.Query(context.Background(),
		`SELECT pubname FROM pg_publication_tables WHERE schemaname || '.' || tablename = $1`, table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pubs) > 0 {
		t.Errorf("publications %v of %s after init: init must leave nothing on the server", pubs, table)
	}
}
