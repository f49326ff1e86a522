package emukit

import (
	"net"
	"net/http"
	"net/http/httptest"
)

// Serve starts serving h on ln, or on a new loopback port when ln is nil
// (as httptest.NewServer does, for the tests). `syncd emulator --crm`
// passes the listener of the address the user gave. The server's URL is
// "http://" and the listener's address; Close stops it.
func Serve(ln net.Listener, h http.Handler) *httptest.Server {
	if ln == nil {
		return httptest.NewServer(h)
	}
	s := httptest.NewUnstartedServer(h)
	_ = s.Listener.Close() // the loopback listener it made, unused
	s.Listener = ln
	s.Start()
	return s
}
