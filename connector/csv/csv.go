// Package csv is the connector for CSV files, such as the nightly export
// of a CRM or an accounting system. A file has no change time, so each
// read takes the whole file (the connector is not incremental): the
// reconciler skips the rows whose mapped values did not change, and
// treats linked rows missing from a complete read as deleted. The
// connector is read-only.
//
// The header line names the fields; one column (idColumn, default "id")
// holds each row's ID, without the whitespace around it
// (connector.NormalizeID). Files are streamed, never loaded whole. A
// malformed line (a wrong field count, a broken quote, an empty id,
// invalid UTF-8) becomes a record marked Invalid, naming the file, the
// line and the problem, which the reconciler sets aside as a dead letter
// while the other rows sync; a quote that never closes costs its own
// line only (rows.go). A repeated ID fails the read (which of the two
// rows is right cannot be told), and so does a file that changes while
// it is read (torn.go: ErrFileChanged): since such a read does not
// complete, no deletion is inferred from it.
//
// A file without an id column (an address book export) may derive each
// row's ID from its e-mail or phone columns (idFrom, key.go); there a
// repeated ID is reported on its line and the read goes on. Files in
// UTF-16 or a single-byte code page are read through a decoder
// (encoding.go); empty names at the end of the header (a spreadsheet's
// trailing empty columns) are left out.
package csv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/text/encoding"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// TypeName is the connector's `type:` in the configuration.
const TypeName = "csv"

func init() {
	connector.Register(connector.Type{
		Name:         TypeName,
		NewSettings:  func() connector.Settings { return NewSettings() },
		Open:         Open,
		Writable:     false,
		Incremental:  false,
		SoftDelete:   false,
		Capabilities: []connector.Capability{connector.CapCount, connector.CapReestimate, connector.CapFields, connector.CapNotify},
	})
}

// Open opens a source on the settings' file. The file itself is opened
// by each read.
func Open(ctx context.Context, opts connector.Options) (connector.Source, error) {
	s, ok := opts.Settings.(*Settings)
	if !ok || s == nil {
		return nil, fmt.Errorf("open csv connector %s: settings of type %T", opts.Name, opts.Settings)
	}
	if errs := s.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("open csv connector %s: %w", opts.Name, errors.Join(errs...))
	}
	delim, _ := s.delimiter()
	enc, _ := lookupEncoding(s.Encoding)
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	return &Source{
		path:      s.Path,
		delim:     delim,
		idColumn:  s.IDColumn,
		idFrom:    append([]string(nil), s.IDFrom...),
		enc:       enc,
		batchSize: s.BatchSize,
		watch:     s.Watch,
		settle:    cmp.Or(s.Settle, DefaultSettle),
		fields:    append([]string(nil), opts.Fields...),
		log:       log.WithField(logfield.Path, s.Path),
	}, nil
}

var (
	_ connector.Source      = (*Source)(nil)
	_ connector.FieldLister = (*Source)(nil)
)

// errClosed is returned by the reads of a closed source.
var errClosed = errors.New("csv source is closed")

// Source reads one CSV file.
type Source struct {
	path     string
	delim    rune
	idColumn string
	// idFrom, when set, are the columns the row ID is derived from
	// (key.go); idColumn is then not used.
	idFrom []string
	// enc decodes the file; nil for UTF-8.
	enc       encoding.Encoding
	batchSize int
	// watch and settle: see Settings.
	watch  bool
	settle time.Duration
	// fields limits the fields of records; empty means every column.
	fields []string
	// spillAt bounds the repeated-ID check's memory (see idset.Set); 0
	// is the default.
	spillAt int
	log     *logrus.Entry
	closed  atomic.Bool
	// exactScanMax and sampleSize override, in tests, the size up to
	// which Count scans the whole file and the sample it estimates a
	// larger one from; 0 means the default.
	exactScanMax, sampleSize int64
	// pos is the read in progress's position, for Reestimate.
	pos readPosition
}

// Close marks the source closed; it holds no file between reads.
func (s *Source) Close() error {
	s.closed.Store(true)
	return nil
}
