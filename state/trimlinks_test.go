package state

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestMigrateTrimsLinkExternalIDs: a state file of schema 2 whose links
// were keyed by untrimmed externalIds (rebuilt from contacts that carried
// them so) is migrated so that every record finds its link under the
// trimmed id: no second contact after the upgrade, none taken for deleted.
func TestMigrateTrimsLinkExternalIDs(t *testing.T) {
	s, clk := openTest(t)
	must(t, s.Links.PutAll([]Link{
		{Connector: "crm", ExternalID: " p100", ContactID: "c100", RecordID: " p100"},
		{Connector: "crm", ExternalID: "p200\u00a0", ContactID: "c200-old"},
		{Connector: "crm", ExternalID: "p200", ContactID: "c200", RecordID: "p200"},
		{Connector: "crm", ExternalID: "p300", ContactID: "c300"},
		{Connector: "other", ExternalID: "\tx1\n", ContactID: "cx1"},
	}))
	must(t, s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("2")) }))

	s = reopen(t, s, clk)
	if v, _ := s.SchemaVersion(); v != CurrentSchemaVersion() {
		t.Fatalf("schema version %d, want %d", v, CurrentSchemaVersion())
	}
	tests := []struct {
		name, connector, ext, contact string
	}{
		{"leading space moved to the trimmed id", "crm", "p100", "c100"},
		{"the trimmed id's own link kept", "crm", "p200", "c200"},
		{"a trimmed id untouched", "crm", "p300", "c300"},
		{"tabs and newlines, another connector", "other", "x1", "cx1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok, err := s.Links.Get(tt.connector, tt.ext)
			if err != nil || !ok || l.ContactID != tt.contact {
				t.Errorf("link %s/%q = %+v, %v, %v; want contact %s", tt.connector, tt.ext, l, ok, err, tt.contact)
			}
			if l2, ok, _ := s.Links.ByContact(tt.connector, tt.contact); !ok || l2.ExternalID != tt.ext {
				t.Errorf("contact %s links %q, %v; want %q", tt.contact, l2.ExternalID, ok, tt.ext)
			}
		})
	}
	if n, _ := s.Links.Count("crm"); n != 3 {
		t.Errorf("crm holds %d links, want 3 (the untrimmed twin of p200 dropped)", n)
	}
	if _, ok, _ := s.Links.ByContact("crm", "c200-old"); ok {
		t.Error("the untrimmed twin's contact is still linked")
	}
}
