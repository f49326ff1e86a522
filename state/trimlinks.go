package state

import (
	"bytes"
	"strings"
	"unicode"

	bolt "go.etcd.io/bbolt"
)

// normalizeID is connector.NormalizeID (state sits below connector): a
// record id without the Unicode whitespace around it, the form every
// externalId is keyed by.
func normalizeID(id string) string { return strings.TrimFunc(id, unicode.IsSpace) }

// trimLinkIDs (migration 3) re-keys the links whose externalID carries
// whitespace around it: a link rebuilt from a listing of contacts took the
// contact's externalId as it was, while records are keyed by the trimmed
// form, so such a link was never matched and its record was created
// again. Where the trimmed key is free, the link moves to it; where a
// link holds it already (the record was linked again under it), the
// untrimmed link is dropped and its contact kept, unlinked, rather than
// taken for deleted. It runs inside the migration's transaction.
func trimLinkIDs(tx *bolt.Tx) error {
	links := tx.Bucket(bucketLinks)
	if links == nil {
		return nil
	}
	var connectors []string
	if err := links.ForEachBucket(func(k []byte) error {
		connectors = append(connectors, string(k))
		return nil
	}); err != nil {
		return err
	}
	for _, name := range connectors {
		if err := trimConnectorLinkIDs(tx, name); err != nil {
			return err
		}
	}
	return nil
}

func trimConnectorLinkIDs(tx *bolt.Tx, connector string) error {
	lb, ok := readLinks(tx, connector)
	if !ok {
		return nil
	}
	var untrimmed []string
	if err := lb.ids.ForEach(func(k, _ []byte) error {
		if normalizeID(string(k)) != string(k) {
			untrimmed = append(untrimmed, string(bytes.Clone(k)))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, ext := range untrimmed {
		l, ok, err := deleteLink(tx, connector, ext)
		if err != nil || !ok {
			return err
		}
		trimmed := normalizeID(ext)
		if _, taken := lb.lookup([]byte(trimmed)); taken || trimmed == "" {
			continue
		}
		l.ExternalID = trimmed
		if err := lb.put(l); err != nil {
			return err
		}
	}
	return nil
}
