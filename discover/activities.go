package discover

import (
	"context"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// ActivityProposal is an activities table init found beside the contact
// table, and the mapping it proposes for it (the activities block of a
// database connector). init writes it as a comment to uncomment: logging
// calls into the company's table is the operator's choice.
type ActivityProposal struct {
	Table string
	// Mapping is activity field -> column, with why per field.
	Mapping []ActivityGuess
	// Why says why the table looks like an activity log; Note what is
	// left to do (a unique index on the key column), "" when nothing.
	Why, Note string
}

// ActivityGuess is one activity field's column.
type ActivityGuess struct {
	Field, Column, Why string
}

// tableShapes lists a database's tables, by connector type.
type tableShapes func(ctx context.Context, dsn string) ([]sqlkit.TableShape, error)

// withActivities runs p, then looks for an activities table with shapes;
// a failure to list the tables leaves the proposal out, it does not fail
// init.
func withActivities(p preparer, shapes tableShapes) preparer {
	return func(ctx context.Context, in *inspection) error {
		if err := p(ctx, in); err != nil {
			return err
		}
		if tables, err := shapes(ctx, in.values["dsn"]); err == nil {
			in.src.Activities = ProposeActivities(in.values["table"], tables)
		}
		return nil
	}
}

// activityTableWords name an activity log table ("call_log", "calls",
// "sms_history", "PhoneActivities").
var activityTableWords = set("call", "calls", "activity", "activities", "sms", "text", "texts", "message", "messages",
	"communication", "communications", "interaction", "interactions", "phonecalls", "calllog", "calllogs")

// activityColumns are the joined words of column names that hold each
// activity field, most telling first.
var activityColumns = []struct {
	field string
	names []string
	time  bool
}{
	{connector.ActivityFieldKey, []string{"activitykey", "synckey", "syncdkey", "externalkey", "externalid", "activityuid", "uid", "uuid", "key"}, false},
	{connector.ActivityFieldKind, []string{"kind", "activitytype", "type", "channel", "medium"}, false},
	{connector.ActivityFieldAt, []string{"startedat", "starttime", "occurredat", "happenedat", "calledat", "sentat", "calltime", "timestamp", "at", "time", "date", "createdat"}, true},
	{connector.ActivityFieldDirection, []string{"direction", "calldirection"}, false},
	{connector.ActivityFieldDuration, []string{"durationseconds", "durationsec", "durationsecs", "duration", "seconds", "callduration", "length"}, false},
	{connector.ActivityFieldFrom, []string{"fromnumber", "from", "caller", "callernumber", "fromphone"}, false},
	{connector.ActivityFieldTo, []string{"tonumber", "to", "callee", "calleenumber", "tophone"}, false},
	{connector.ActivityFieldStatus, []string{"status", "outcome", "result", "disposition"}, false},
	{connector.ActivityFieldOwner, []string{"owneremail", "useremail", "agentemail", "repemail", "owner", "agent"}, false},
	{connector.ActivityFieldSubject, []string{"subject", "title"}, false},
	{connector.ActivityFieldSummary, []string{"summary", "notes", "note", "description"}, false},
	{connector.ActivityFieldText, []string{"body", "text", "message", "messagetext", "content"}, false},
	{connector.ActivityFieldTranscript, []string{"transcript", "transcription"}, false},
	{connector.ActivityFieldRecording, []string{"recordingurl", "recording", "recordinglink"}, false},
	{connector.ActivityFieldSourceID, []string{"sourceid", "callid", "messageid", "workspaceid"}, false},
}

// ProposeActivities picks, among the database's tables, the one that
// looks most like a log of calls and texts about the contact table's
// rows (a name of activity words, a column pointing at a contact, a time
// column), and proposes its mapping; nil when none does.
func ProposeActivities(contactTable string, tables []sqlkit.TableShape) *ActivityProposal {
	var best *ActivityProposal
	bestScore := 0
	for _, t := range tables {
		if sameTable(t.Name, contactTable) || !sameSchema(t.Name, contactTable) {
			continue
		}
		tw := words(unqualified(t.Name))
		named := false
		for _, w := range tw {
			named = named || activityTableWords[w]
		}
		if !named && !activityTableWords[strings.Join(tw, "")] {
			continue
		}
		p := proposeFor(contactTable, t)
		if p == nil {
			continue
		}
		if score := len(p.Mapping); score > bestScore {
			best, bestScore = p, score
		}
	}
	return best
}

func proposeFor(contactTable string, t sqlkit.TableShape) *ActivityProposal {
	cols := make([]string, 0, len(t.Types))
	for c := range t.Types {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	contact, why := contactColumn(contactTable, cols)
	if contact == "" {
		return nil
	}
	p := &ActivityProposal{Table: t.Name, Why: "named like a log of calls or texts, with " + contact + " pointing at a contact"}
	used := map[string]bool{contact: true}
	p.Mapping = append(p.Mapping, ActivityGuess{Field: connector.ActivityFieldContact, Column: contact, Why: why})
	for _, ac := range activityColumns {
		col := ""
		for _, name := range ac.names {
			for _, c := range cols {
				if !used[c] && col == "" && strings.Join(words(c), "") == name && (!ac.time || isTimeType(t.Types[c])) {
					col = c
				}
			}
		}
		if col == "" {
			continue
		}
		used[col] = true
		why := "named like it"
		if ac.field == connector.ActivityFieldKey {
			why = "named like a key; unique"
			if !t.Unique[col] {
				why = "named like a key"
				p.Note = "the key column needs a unique index: CREATE UNIQUE INDEX ON " + t.Name + " (" + col + ")"
			}
		}
		p.Mapping = append(p.Mapping, ActivityGuess{Field: ac.field, Column: col, Why: why})
	}
	if !hasField(p.Mapping, connector.ActivityFieldKey) {
		p.Note = "no column holds syncd's key: add one with a unique index (ALTER TABLE " + t.Name + " ADD COLUMN activity_key varchar(200) UNIQUE) and map key to it"
	}
	if !hasField(p.Mapping, connector.ActivityFieldAt) {
		return nil
	}
	return p
}

// contactColumn finds the column pointing at the contact table's rows:
// <contact table in the singular>_id, or contact_id, customer_id,
// person_id, client_id.
func contactColumn(contactTable string, cols []string) (string, string) {
	ct := words(unqualified(contactTable))
	singular := strings.TrimSuffix(strings.Join(ct, ""), "s")
	for _, name := range []string{singular + "id", "contactid", "customerid", "personid", "clientid", "leadid"} {
		for _, c := range cols {
			if strings.Join(words(c), "") == name {
				return c, "the id of a " + strings.TrimSuffix(name, "id") + " row"
			}
		}
	}
	return "", ""
}

func hasField(gs []ActivityGuess, f string) bool {
	for _, g := range gs {
		if g.Field == f {
			return true
		}
	}
	return false
}

func isTimeType(typ string) bool {
	t := strings.ToLower(typ)
	return strings.Contains(t, "time") || strings.Contains(t, "date")
}

func unqualified(name string) string {
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, "\"`")
}

func sameTable(a, b string) bool {
	return strings.EqualFold(unqualified(a), unqualified(b))
}

// sameSchema reports whether table sits in the contact table's schema:
// the activities of one application's contacts are kept beside them, not
// in another schema of the database (another application's, or another
// tenant's). An unqualified contact table is in PostgreSQL's default
// schema, public; MySQL's names are never qualified (one database).
func sameSchema(table, contactTable string) bool {
	ts, cs := schemaOf(table), schemaOf(contactTable)
	if cs == "" {
		return ts == "" || ts == "public"
	}
	return ts == cs
}

// schemaOf is the lower-cased schema part of a qualified name, "" when
// it has none.
func schemaOf(name string) string {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return ""
	}
	return strings.ToLower(strings.Trim(name[:i], "\"`"))
}

// comment is the proposal as a commented activities block: uncommented
// (and with the connector's direction allowing writes), it logs calls
// and texts into the table.
func (a *ActivityProposal) comment() string {
	var b strings.Builder
	b.WriteString("Calls and texts can be logged as rows of " + a.Table + " (" + a.Why + "):\n")
	b.WriteString("uncomment to log them.\n")
	if a.Note != "" {
		b.WriteString("First, " + a.Note + ".\n")
	}
	b.WriteString("activities:\n  log: [calls, messages, summaries]\n  table: " + yamlScalar(a.Table) + "\n  mapping:\n")
	for _, g := range a.Mapping {
		b.WriteString("    " + g.Field + ": " + yamlScalar(g.Column) + "  # " + g.Why + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// yamlScalar writes s as a YAML plain scalar when it is one, else quoted.
func yamlScalar(s string) string {
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
	}
	return s
}
