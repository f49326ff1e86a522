package csv

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/text/transform"

	"github.com/syncd-io/syncd/connector"
)

var (
	_ connector.Counter     = (*Source)(nil)
	_ connector.Reestimator = (*Source)(nil)
)

// Counting limits: a file up to exactScanMax bytes is scanned whole (at
// disk speed, without parsing fields), so its total is exact; a larger
// one is estimated from the rows of its first sampleSize bytes and its
// size, and the total is marked as an estimate.
const (
	exactScanMax = 256 << 20
	sampleSize   = 4 << 20
)

// Count returns the number of data rows of the file (Changes and
// Snapshot both read them all): rows are counted as the line breaks
// outside quoted fields that end a non-empty line, the way encoding/csv
// splits records, less the header.
func (s *Source) Count(ctx context.Context, _ string, _ bool) (connector.Total, error) {
	if s.closed.Load() {
		return connector.Total{}, errClosed
	}
	f, err := os.Open(s.path)
	if err != nil {
		return connector.Total{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return connector.Total{}, err
	}
	limit := s.exactScanMax
	if limit <= 0 {
		limit = exactScanMax
	}
	if st.Size() <= limit {
		var text io.Reader = f
		if s.enc != nil {
			text = transform.NewReader(f, s.enc.NewDecoder())
		}
		n, _, err := countRows(ctx, text, -1)
		if err != nil {
			return connector.Total{}, err
		}
		return connector.Total{N: max(n-1, 0), Known: true}, nil
	}
	sample := s.sampleSize
	if sample <= 0 {
		sample = sampleSize
	}
	n, read, err := countRows(ctx, f, sample)
	if err != nil {
		return connector.Total{}, err
	}
	if n <= 1 || read == 0 {
		return connector.Total{}, nil
	}
	// The header is in the sample: the bytes per row come from the rows
	// after it, which is close enough for a guide.
	est := int64(float64(n-1) * float64(st.Size()) / float64(read))
	return connector.Total{N: est, Known: true, Estimate: true}, nil
}

// countRows counts the records of r (header included) in its first
// limit bytes (all of it when limit < 0), and how many bytes it read.
func countRows(ctx context.Context, r io.Reader, limit int64) (rows, read int64, err error) {
	buf := make([]byte, 256<<10)
	inQuote, content := false, false
	for limit < 0 || read < limit {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		n, rerr := r.Read(buf)
		for _, b := range buf[:n] {
			switch b {
			case '"':
				inQuote = !inQuote
				content = true
			case '\n':
				if !inQuote {
					if content {
						rows++
					}
					content = false
				}
			case '\r':
			default:
				content = true
			}
		}
		read += int64(n)
		if errors.Is(rerr, io.EOF) {
			if content {
				rows++ // a last row without a line break
			}
			return rows, read, nil
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
	return rows, read, nil
}

// readPosition is how far the read in progress is into its file.
type readPosition struct {
	size, read atomic.Int64
}

// track starts following a read of f and returns the reader to read it
// through.
func (p *readPosition) track(f *os.File) io.Reader {
	p.read.Store(0)
	p.size.Store(0)
	if st, err := f.Stat(); err == nil {
		p.size.Store(st.Size())
	}
	return &countingReader{r: f, n: &p.read}
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// Reestimate projects the rows of the file being read from the done rows
// delivered so far and the share of the file read (a read-ahead of 64 KiB
// at most): an estimate that converges on the count as the read goes on.
// It answers false until a tenth of the file is read, and for files
// Count does not estimate (those it counts).
func (s *Source) Reestimate(done int64) (connector.Total, bool) {
	size, read := s.pos.size.Load(), s.pos.read.Load()
	limit := s.exactScanMax
	if limit <= 0 {
		limit = exactScanMax
	}
	if size <= limit || read*10 < size || done <= 0 {
		return connector.Total{}, false
	}
	if read >= size {
		return connector.Total{N: done, Known: true, Estimate: true}, true
	}
	return connector.Total{N: int64(float64(done) * float64(size) / float64(read)), Known: true, Estimate: true}, true
}
