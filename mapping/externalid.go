package mapping

import (
	"fmt"
	"unicode/utf8"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

// ExternalID returns the record's externalId alone, for records that need
// no mapping of their fields (deletions, failures to report).
func (m *Mapper) ExternalID(r connector.Record) (string, error) {
	ext, err := r.ID, error(nil)
	if m.externalID != "" {
		ext, err = single(toValue(r.Fields[m.externalID]))
	}
	ext = connector.NormalizeID(ext)
	switch {
	case err != nil:
	case ext == "":
		err = ErrNoExternalID
	case utf8.RuneCountInString(ext) > workspace.MaxExternalIDLen:
		err = fmt.Errorf("%w: %d characters, the workspace takes at most %d", ErrTooLong, utf8.RuneCountInString(ext), workspace.MaxExternalIDLen)
	}
	if err != nil {
		return "", &RecordError{RecordID: r.ID, Field: "externalId", From: m.externalID, Err: err}
	}
	return ext, nil
}
