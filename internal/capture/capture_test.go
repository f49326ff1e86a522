package capture

import (
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestBufferTakesConcurrentWriters(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Errorf("%d bytes, want 800", got)
	}
}

func TestLogger(t *testing.T) {
	log, buf := Logger(logrus.InfoLevel)
	log.Debug("hidden")
	log.WithField("connector", "crm").Info("shown")
	got := buf.String()
	if strings.Contains(got, "hidden") || !strings.Contains(got, "shown") || !strings.Contains(got, "connector=crm") {
		t.Errorf("log = %q", got)
	}
}
