// Package capture collects what a logger or a child process writes, for
// the tests and the benchmarks that read it while it is being written.
package capture

import (
	"bytes"
	"sync"

	"github.com/sirupsen/logrus"
)

// Buffer is an in-memory sink safe for concurrent writers and readers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Logger returns a logger at level that writes to a new Buffer.
func Logger(level logrus.Level) (*logrus.Logger, *Buffer) {
	buf := &Buffer{}
	log := logrus.New()
	log.SetOutput(buf)
	log.SetLevel(level)
	return log, buf
}
