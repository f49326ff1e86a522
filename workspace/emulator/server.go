package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
)

// Server is an Emulator listening on a local address, like
// httptest.Server.
type Server struct {
	*Emulator
	// URL is the base address, http://127.0.0.1:PORT, without a trailing
	// slash: the client's BaseURL.
	URL string

	srv  *http.Server
	done chan struct{}
}

// NewServer starts an Emulator on a free port of 127.0.0.1; it panics if
// no port can be had, as httptest.NewServer does. Close it when done.
func NewServer(opts Options) *Server {
	s, err := Listen("127.0.0.1:0", opts)
	if err != nil {
		panic(fmt.Sprintf("emulator: %v", err))
	}
	return s
}

// Listen starts an Emulator on addr ("127.0.0.1:0" picks a free port).
func Listen(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	e := New(opts)
	s := &Server{
		Emulator: e,
		URL:      "http://" + ln.Addr().String(),
		srv:      &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second},
		done:     make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.opts.Log.WithField(logfield.Error, err.Error()).Error("emulator server stopped")
		}
	}()
	return s, nil
}

// Close stops the server at once, closing open connections, then the
// emulator's delivery goroutines.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
	s.Emulator.Close()
}

// Shutdown stops the server gracefully, waiting for requests in flight
// until ctx ends, then closes the emulator.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	s.Emulator.Close()
	return err
}
