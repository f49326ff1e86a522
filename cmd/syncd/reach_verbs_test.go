package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/state"
)

var verbCases = []verbCase{
	{name: "status", env: newCSVVerbEnv, args: args("status"), body: statusBody,
		want: []string{"dead letters 1, conflicts 0", "field warnings 1", "crm csv run AGO D ok (3 created", "1 failed"}},
	{name: "status --json", env: newCSVVerbEnv, args: args("status", "--json"), body: statusJSONBody,
		want: []string{`"deadLetters": 1`, `"fieldWarnings": 1`, `"links": 3`, `"lastResult": "ok"`}},
	{name: "deadletters list", env: newCSVVerbEnv, args: args("deadletters", "list"),
		want: []string{"not an e-mail <script>", "1 field warnings", `crm 1 phoneNumbers.mobile mobile "n/a"`}},
	{name: "deadletters list --json", env: newCSVVerbEnv, args: args("deadletters", "list", "--json", "--connector", "crm"),
		want: []string{`"connector":"crm"`, `"operation":"map"`, `{"fieldWarning":{`, `"value":"n/a"`}},
	{name: "deadletters retry", env: newCSVVerbEnv, seed: seedDeadLetterID, wantErr: true, want: []string{"failed again"},
		args: func(e *verbEnv) []string { return args("deadletters", "retry", e.seeded["deadletter"])(e) }},
	{name: "deadletters drop", env: newCSVVerbEnv, seed: seedDeadLetterID, want: []string{"dropped"},
		args: func(e *verbEnv) []string { return args("deadletters", "drop", e.seeded["deadletter"])(e) },
		after: func(t *testing.T, e *verbEnv) {
			e.withStore(func(st *state.Store) error {
				if dls, err := st.DeadLetters.List("crm"); err != nil || len(dls) != 0 {
					t.Errorf("dead letters after drop: %v %v", dls, err)
				}
				return nil
			})
		}},
	{name: "deadletters drop of none", env: newCSVVerbEnv, args: args("deadletters", "drop", "99"), wantErr: true,
		want: []string{"drop dead letter 99", "not found"}},
	{name: "conflicts list", env: newCSVVerbEnv, seed: seedConflicts, args: args("conflicts", "list"),
		want: []string{"#2 TIME crm externalId=2 contact=C2 policy=newest-wins winner=crm", `lastName: workspace "WS", crm "CRM"`}},
	{name: "conflicts list --json", env: newCSVVerbEnv, seed: seedConflicts, args: args("conflicts", "list", "--json", "--limit", "1"),
		want: []string{`{"id":2,"connector":"crm","externalId":"2"`}},
	{name: "matches list", env: newCSVVerbEnv, seed: seedHeldMatch, args: args("matches", "list"),
		want: []string{"crm externalId=9 candidates=C1,C2 2 contacts match email bl@example.com"}},
	{name: "matches list --json", env: newCSVVerbEnv, seed: seedHeldMatch, args: args("matches", "list", "--json"),
		want: []string{`{"connector":"crm","externalId":"9","candidates":["C1","C2"]`}},
	{name: "matches list of an unknown connector", env: newCSVVerbEnv, args: args("matches", "list", "--connector", "nope"),
		wantErr: true, want: []string{`unknown connector "nope"`}},
	{name: "matches resolve --create", env: newCSVVerbEnv, seed: seedHeldMatch,
		args: args("matches", "resolve", "--connector", "crm", "--external-id", "9", "--create"),
		want: []string{"crm: created=1 updated=0"},
		after: func(t *testing.T, e *verbEnv) {
			if n := len(e.emu.Contacts()); n != 4 {
				t.Errorf("%d contacts after resolve, want the 3 synced and Barbara", n)
			}
			e.withStore(func(st *state.Store) error {
				if held, err := st.Matches.Held("crm"); err != nil || len(held) != 0 {
					t.Errorf("held after resolve: %v %v", held, err)
				}
				return nil
			})
		}},
	{name: "matches resolve of a record not held", env: newCSVVerbEnv,
		args:    args("matches", "resolve", "--connector", "crm", "--external-id", "1", "--contact", "C1"),
		wantErr: true, want: []string{"record is not held: crm/1"}},
	{name: "resync --dry-run", env: newCSVVerbEnv, args: args("resync", "--dry-run"),
		want: []string{"crm dry-run: created=0 updated=0 unchanged=3"},
		body: func(s string) string { return sameAnswer(s) }},
	{name: "state backup", env: newCSVVerbEnv,
		args: func(e *verbEnv) []string { return args("state", "backup", filepath.Join(e.dir, "backup.db"))(e) },
		want: []string{"N bytes, schema", "through VIA"},
		after: func(t *testing.T, e *verbEnv) {
			checkBackupLinks(t, filepath.Join(e.dir, "backup.db"), 3)
		}},
	{name: "deletes list", env: newPostgresVerbEnv, seed: seedHeldDeletes, args: args("deletes", "list"),
		want: []string{"db: 2 record deletions held", "syncd deletes approve --connector db"}},
	{name: "deletes list --json", env: newPostgresVerbEnv, seed: seedHeldDeletes, args: args("deletes", "list", "--json"),
		want: []string{`"externalId":"2"`, `"externalId":"4"`}},
	{name: "deletes list of a connector that does not write back", env: newPostgresVerbEnv, args: args("deletes", "list", "--connector", "nope"),
		wantErr: true, want: []string{`unknown connector: "nope"`}},
	{name: "deletes approve", env: newPostgresVerbEnv, seed: seedHeldDeletes, args: args("deletes", "approve", "--connector", "db"),
		want: []string{"db: 2 held record deletions approved"},
		after: func(t *testing.T, e *verbEnv) {
			if n := countRows(t, e); n != 4 {
				t.Errorf("%d rows after approve, want 4", n)
			}
		}},
	{name: "deletes drop", env: newPostgresVerbEnv, seed: seedHeldDeletes, args: args("deletes", "drop", "--connector", "db"),
		want: []string{"db: 2 held record deletions dropped"},
		after: func(t *testing.T, e *verbEnv) {
			if n := countRows(t, e); n != 6 {
				t.Errorf("%d rows after drop, want all 6", n)
			}
		}},
}

// TestVerbsAnswerAlikeFromFileAndDaemon asks each operator verb of the
// state file (no daemon) and of a running daemon that holds the file,
// each on an environment of its own that ran once: the answers, errors
// included, are the same but for times and who answered, and so is
// what the verb changed.
func TestVerbsAnswerAlikeFromFileAndDaemon(t *testing.T) {
	for _, tc := range verbCases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == nil {
				body = sameAnswer
			}
			answers := map[string]string{}
			for _, mode := range []string{"file", "daemon"} {
				e := tc.env(t)
				if tc.seed != nil {
					e.withStore(func(st *state.Store) error { return tc.seed(e, st) })
				}
				stop := func() {}
				if mode == "daemon" {
					stop = e.startDaemon()
				}
				out, serr, err := e.main(context.Background(), opsToken, tc.args(e)...)
				stop()
				if (err != nil) != tc.wantErr {
					t.Fatalf("%s: syncd %s: %v, want error %v\n%s%s", mode, strings.Join(tc.args(e), " "), err, tc.wantErr, out, serr)
				}
				got := body(out)
				if err != nil {
					got += "error: " + sameAnswer(err.Error())
				}
				for _, want := range tc.want {
					if !strings.Contains(got, want) {
						t.Errorf("%s: answer lacks %q:\n%s", mode, want, got)
					}
				}
				if tc.after != nil {
					tc.after(t, e)
				}
				answers[mode] = strings.ReplaceAll(got, e.dir, "DIR")
			}
			if answers["file"] != answers["daemon"] {
				t.Errorf("the state file answered\n%s\nthe daemon answered\n%s", answers["file"], answers["daemon"])
			}
		})
	}
}
