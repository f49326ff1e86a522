package emukit

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestCountsAndFaults(t *testing.T) {
	c := NewCounts[string]()
	c.Add("GET /a", 200)
	c.Add("GET /a", 429)
	c.Add("POST /b", 429)
	snap := c.Clone()
	c.Add("GET /a", 200)
	if snap.Requests["GET /a"] != 2 || snap.Responses["GET /a"][200] != 1 || c.Requests["GET /a"] != 3 {
		t.Errorf("clone %+v follows later counts %+v", snap, c)
	}
	if n := c.RateLimited(); n != 2 {
		t.Errorf("RateLimited = %d, want 2", n)
	}
	q := Faults[string, int]{}
	q.Push("GET /a", 500, 502)
	if f, ok := q.Pop("GET /a"); !ok || f != 500 {
		t.Errorf("first fault %d %v", f, ok)
	}
	if f, ok := q.Pop("GET /a"); !ok || f != 502 {
		t.Errorf("second fault %d %v", f, ok)
	}
	if _, ok := q.Pop("GET /a"); ok {
		t.Error("a third fault")
	}
}

func TestAnswerWrite(t *testing.T) {
	a := Answer{Status: http.StatusTooManyRequests, Body: map[string]string{"message": "slow down"}}
	a.SetHeader("Retry-After", "2")
	rec := httptest.NewRecorder()
	a.Write(rec, "application/json")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" ||
		rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != `{"message":"slow down"}`+"\n" {
		t.Errorf("wrote %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	Answer{Status: http.StatusNoContent}.Write(rec, "application/json")
	if rec.Code != http.StatusNoContent || rec.Header().Get("Content-Type") != "" || rec.Body.Len() != 0 {
		t.Errorf("bodiless answer wrote %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}

func TestClock(t *testing.T) {
	c := Clock{Precision: time.Millisecond}
	before := time.Now().UTC().Truncate(time.Millisecond)
	if now := c.Now(); now.Before(before) || now.Location() != time.UTC || now.Nanosecond()%int(time.Millisecond) != 0 {
		t.Errorf("running clock at %v, want the wall clock in UTC, to the millisecond", now)
	}
	c.Advance(time.Hour)
	if now := c.Now(); now.Sub(before) < time.Hour {
		t.Errorf("advanced clock at %v, want an hour past %v", now, before)
	}
	at := time.Date(2026, 3, 2, 10, 0, 0, 1500, time.FixedZone("CET", 3600))
	c.Freeze(at)
	c.Advance(time.Second + 1500)
	if want := time.Date(2026, 3, 2, 9, 0, 1, 0, time.UTC); !c.Now().Equal(want) || c.Now().Location() != time.UTC {
		t.Errorf("frozen clock at %v, want %v", c.Now(), want)
	}
}

func TestServeOnAGivenListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "here") }))
	defer s.Close()
	if want := "http://" + ln.Addr().String(); s.URL != want {
		t.Errorf("URL = %s, want %s", s.URL, want)
	}
	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "here" {
		t.Errorf("body = %q", b)
	}
}
