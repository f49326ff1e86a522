package reverse

import (
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

func TestDecideGroup(t *testing.T) {
	m, err := mapping.Compile(testSpec, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	target := func(dir policy.Direction, onDelete policy.Delete, writer bool) *Target {
		tg := &Target{Name: "mem", Mapper: m, Direction: dir, OnWorkspaceDelete: onDelete}
		if writer {
			tg.Writer = newMem()
		}
		return tg
	}
	both := target(policy.Both, policy.DeleteIgnore, true)
	toWorkspace := target(policy.ToWorkspace, policy.DeleteIgnore, true)
	readOnly := target(policy.Both, policy.DeleteRemove, false)
	unlinking := target(policy.Both, policy.DeleteUnlink, true)
	deleting := target(policy.Both, policy.DeleteRemove, true)
	// byID's records are keyed by their own id: a link's externalId is
	// the record's id.
	byIDSpec := testSpec
	byIDSpec.ExternalID = ""
	byIDMapper, err := mapping.Compile(byIDSpec, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := &Target{Name: "mem", Mapper: byIDMapper, Direction: policy.Both, OnWorkspaceDelete: policy.DeleteRemove, Writer: newMem()}
	link := func(recordID, externalID string) *state.Link {
		return &state.Link{ContactID: "CT1", RecordID: recordID, ExternalID: externalID, ContactUpdatedAt: noon}
	}
	version := func(at time.Time) workspace.Contact { return workspace.Contact{ID: "CT1", UpdatedAt: at} }

	tests := []struct {
		name   string
		target *Target
		g      group
		want   verdict
	}{
		{name: "linked, newer version", target: both, g: group{link: link("r1", "1"), contact: version(noon.Add(time.Second))}, want: vCompare},
		{name: "linked, same version again", target: both, g: group{link: link("r1", "1"), contact: version(noon)}, want: vCompare},
		{name: "linked, older version", target: both, g: group{link: link("r1", "1"), contact: version(noon.Add(-time.Second))}, want: vStale},
		{name: "linked, connector does not write back", target: toWorkspace, g: group{link: link("r1", "1"), contact: version(noon.Add(time.Second))}, want: vIgnore},
		{name: "linked, read-only connector", target: readOnly, g: group{link: link("r1", "1"), contact: version(noon.Add(time.Second))}, want: vIgnore},
		{name: "deleted, onWorkspaceDelete ignore", target: both, g: group{link: link("r1", "1"), deleted: true}, want: vIgnore},
		{name: "deleted, onWorkspaceDelete unlink", target: unlinking, g: group{link: link("r1", "1"), deleted: true}, want: vUnlink},
		{name: "deleted, onWorkspaceDelete delete", target: deleting, g: group{link: link("r1", "1"), deleted: true}, want: vDelete},
		{name: "deleted, delete by the externalId", target: byID, g: group{link: link("", "7"), deleted: true}, want: vDelete},
		{name: "deleted, delete without any record id", target: deleting, g: group{link: link("", "7"), deleted: true}, want: vNoDeleteID},
		{name: "deleted, delete on a read-only connector", target: readOnly, g: group{link: link("r1", "1"), deleted: true}, want: vUnlink},
		{name: "made in the app", target: both, g: group{contact: version(noon)}, want: vCreate},
		{name: "made in the app and deleted", target: both, g: group{deleted: true}, want: vIgnore},
		{name: "deleted while its record was created", target: both, g: group{deleted: true, pending: &state.PendingCreate{RecordID: "r9"}}, want: vDeletedCreating},
		{name: "pending create with its record id", target: both, g: group{pending: &state.PendingCreate{RecordID: "r9"}}, want: vResume},
		{name: "pending create without record id", target: both, g: group{pending: &state.PendingCreate{}}, want: vCreateUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideGroup(tt.target, &tt.g); got != tt.want {
				t.Errorf("decideGroup = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecideUpdate(t *testing.T) {
	tests := []struct {
		name string
		u    update
		want verdict
	}{
		{name: "nothing changed: an echo", u: update{recordID: "r1"}, want: vEcho},
		{name: "nothing changed, no record id: still an echo", u: update{}, want: vEcho},
		{name: "a change to write", u: update{recordID: "r1", changed: []string{"lastName"}}, want: vWrite},
		{name: "a change but no record id", u: update{changed: []string{"lastName"}}, want: vNoRecordID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideUpdate(&tt.u); got != tt.want {
				t.Errorf("decideUpdate = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMergeUpdate(t *testing.T) {
	m, err := mapping.Compile(testSpec, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	base := mapping.Fields{"firstName": "Ada", "lastName": "Lovelace", "role": "Countess"}
	record := func(last string, at time.Time) *connector.Record {
		return &connector.Record{ID: "1", UpdatedAt: at, Fields: map[string]any{"id": "1", "first_name": "Ada", "last_name": last, "title": "Countess"}}
	}
	tests := []struct {
		name       string
		conflict   policy.Conflict
		rec        *connector.Record
		wantLast   string // want["lastName"]
		wantWinner string // "" when no conflict
	}{
		{name: "record unchanged: the workspace's value", conflict: policy.NewestWins, rec: record("Lovelace", noon), wantLast: "King"},
		{name: "record not readable: the workspace's value", conflict: policy.CRMWins, rec: nil, wantLast: "King"},
		{name: "both changed, workspace newer", conflict: policy.NewestWins, rec: record("Byron", noon.Add(-time.Minute)), wantLast: "King", wantWinner: "workspace"},
		{name: "both changed, record newer", conflict: policy.NewestWins, rec: record("Byron", noon.Add(time.Minute)), wantLast: "Byron", wantWinner: "mem"},
		{name: "both changed, record without time", conflict: policy.NewestWins, rec: record("Byron", time.Time{}), wantLast: "King", wantWinner: "workspace"},
		{name: "both changed, workspace-wins", conflict: policy.WorkspaceWins, rec: record("Byron", noon.Add(time.Minute)), wantLast: "King", wantWinner: "workspace"},
		{name: "both changed, crm-wins", conflict: policy.CRMWins, rec: record("Byron", noon.Add(-time.Minute)), wantLast: "Byron", wantWinner: "mem"},
		{name: "record changed to the same value", conflict: policy.CRMWins, rec: record("King", noon.Add(time.Minute)), wantLast: "King"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := &Target{Name: "mem", Mapper: m, Direction: policy.Both, Conflict: tt.conflict}
			u := &update{g: &group{contactID: "CT1", link: &state.Link{ExternalID: "1"}, contact: workspace.Contact{ID: "CT1", UpdatedAt: noon}},
				ws: mapping.Fields{"firstName": "Ada", "lastName": "King", "role": "Countess"}, base: base, changed: []string{"lastName"}, recordID: "1"}
			got := mergeUpdate(tg, u, tt.rec)
			if got.want["lastName"] != tt.wantLast {
				t.Errorf("want[lastName] = %q, want %q", got.want["lastName"], tt.wantLast)
			}
			// The link agrees on the contact's value whoever won: when
			// the record wins, the forward pass patches the record's
			// value over it (see mergeUpdate).
			if agreed := got.agreed["lastName"]; agreed != "King" {
				t.Errorf("agreed[lastName] = %q, want the contact's King", agreed)
			}
			switch {
			case tt.wantWinner == "" && got.conflict != nil:
				t.Errorf("conflict %+v, want none", got.conflict)
			case tt.wantWinner != "" && (got.conflict == nil || got.conflict.Winner != tt.wantWinner):
				t.Errorf("conflict %+v, want won by %s", got.conflict, tt.wantWinner)
			case got.conflict != nil && (got.conflict.Workspace["lastName"] != "King" || got.conflict.Source["lastName"] != "Byron" || got.conflict.Policy != tt.conflict.String()):
				t.Errorf("conflict %+v does not hold both values and the policy", got.conflict)
			}
		})
	}
}
