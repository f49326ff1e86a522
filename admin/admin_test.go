package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
)

const testToken = "s3cret-admin-token"

func quietLog() *logrus.Entry {
	l, _ := test.NewNullLogger()
	return logrus.NewEntry(l)
}

func serve(t *testing.T, s *Server, method, target string, body io.Reader, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, body)
	req.Host = "127.0.0.1:8081"
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

func TestStateChangingCallsNeedTheToken(t *testing.T) {
	tests := []struct {
		name       string
		token      string
		method     string
		path       string
		hdr        map[string]string
		wantStatus int
	}{
		{"resync without token", testToken, "POST", "/resync", nil, 401},
		{"resync with a wrong token", testToken, "POST", "/resync", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"resync with the token raw", testToken, "POST", "/resync", map[string]string{"Authorization": testToken}, 401},
		{"resync with the token", testToken, "POST", "/resync", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"retry without token", testToken, "POST", "/deadletters/4/retry", nil, 401},
		{"retry with the token", testToken, "POST", "/deadletters/4/retry", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"drop without token", testToken, "POST", "/deadletters/4/drop", nil, 401},
		{"backup without token", testToken, "GET", "/state/backup", nil, 401},
		{"backup with the token", testToken, "GET", "/state/backup", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"token works from any host", testToken, "POST", "/resync", map[string]string{"Authorization": "Bearer " + testToken, "Host": "syncd.internal:8081"}, 200},
		{"reads need no token", testToken, "GET", "/status", nil, 200},

		{"no token: local call", "", "POST", "/resync", nil, 200},
		{"no token: localhost name", "", "POST", "/resync", map[string]string{"Host": "localhost:8081"}, 200},
		{"no token: IPv6 loopback", "", "POST", "/resync", map[string]string{"Host": "[::1]:8081"}, 200},
		{"no token: same-origin browser", "", "POST", "/deadletters/4/drop", map[string]string{"Origin": "http://127.0.0.1:8081", "Sec-Fetch-Site": "same-origin"}, 200},
		{"no token: cross-site form", "", "POST", "/deadletters/4/drop", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"no token: other origin without fetch metadata", "", "POST", "/resync", map[string]string{"Origin": "https://evil.example"}, 403},
		{"no token: null origin", "", "POST", "/resync", map[string]string{"Origin": "null"}, 403},
		{"no token: same-site subdomain", "", "POST", "/resync", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"no token: DNS rebinding", "", "POST", "/resync", map[string]string{"Host": "rebind.evil.example:8081", "Origin": "http://rebind.evil.example:8081"}, 403},
		{"no token: backup locally", "", "GET", "/state/backup", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			s := &Server{Daemon: f, Token: tt.token, Log: quietLog()}
			rec := serve(t, s, tt.method, tt.path, nil, tt.hdr)
			if rec.Code != tt.wantStatus {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, rec.Code, rec.Body, tt.wantStatus)
			}
			acted := len(f.resyncs)+len(f.retried)+len(f.dropped) > 0
			if tt.method == "POST" && acted != (tt.wantStatus == 200) {
				t.Errorf("daemon acted = %v with status %d", acted, rec.Code)
			}
			if tt.wantStatus == 200 && strings.HasSuffix(tt.path, "/backup") && rec.Body.String() != f.backup {
				t.Errorf("backup body differs (%d bytes)", rec.Body.Len())
			}
		})
	}
}

func TestReadEndpoints(t *testing.T) {
	f := newFake()
	s := &Server{Daemon: f, Log: quietLog()}

	rec := serve(t, s, "GET", "/healthz", nil, nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"ok"`) {
		t.Errorf("healthz = %d %s", rec.Code, rec.Body)
	}

	var st Status
	rec = serve(t, s, "GET", "/status", nil, nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || rec.Code != 200 {
		t.Fatalf("status = %d %s: %v", rec.Code, rec.Body, err)
	}
	if len(st.Connectors) != 2 || st.Connectors[0].Links != 4995 || st.Connectors[0].LastRun.ID != 7 || st.Connectors[0].LastRun.Created != 12 {
		t.Errorf("status round trip lost data: %+v", st.Connectors)
	}
	for _, field := range []string{`"lastRun":{"id":7`, `"checkpoints":{"":"cursor-1"}`, `"schedule":"@every 5m"`, `"running":true`} {
		if !strings.Contains(rec.Body.String(), field) {
			t.Errorf("status JSON lacks %s: %s", field, rec.Body)
		}
	}

	var dls []DeadLetter
	rec = serve(t, s, "GET", "/deadletters?connector=crm", nil, nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &dls); err != nil || len(dls) != 2 || dls[0].ID != 4 || dls[0].Key != "row-17" {
		t.Errorf("deadletters = %s (%v)", rec.Body, err)
	}
	rec = serve(t, s, "GET", "/deadletters?connector=none", nil, nil)
	if strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("deadletters of a connector without any = %s, want []", rec.Body)
	}

	var cs []Conflict
	rec = serve(t, s, "GET", "/conflicts?limit=5", nil, nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &cs); err != nil || len(cs) != 1 || cs[0].ID != 2 || cs[0].Winner != "workspace" {
		t.Errorf("conflicts = %s (%v)", rec.Body, err)
	}
	if rec = serve(t, s, "GET", "/conflicts?limit=-1", nil, nil); rec.Code != 400 {
		t.Errorf("conflicts?limit=-1 = %d, want 400", rec.Code)
	}

	if rec = serve(t, s, "GET", "/metrics", nil, nil); rec.Code != 404 {
		t.Errorf("metrics without a handler = %d, want 404", rec.Code)
	}
	s.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "syncd_up 1\n") })
	if rec = serve(t, s, "GET", "/metrics", nil, nil); rec.Body.String() != "syncd_up 1\n" {
		t.Errorf("metrics = %q", rec.Body)
	}
	if rec = serve(t, s, "POST", "/status", nil, nil); rec.Code != 405 {
		t.Errorf("POST /status = %d, want 405", rec.Code)
	}
}

func TestReadyz(t *testing.T) {
	tests := []struct {
		name   string
		checks []Check
		want   int
	}{
		{"all pass", []Check{{Name: "state", OK: true}, {Name: "workspace", OK: true}}, 200},
		{"workspace unreachable", []Check{{Name: "state", OK: true}, {Name: "workspace", OK: false, Detail: "timeout"}}, 503},
		{"receiver down", []Check{{Name: "state", OK: true}, {Name: "webhooks", OK: false}}, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.checks = tt.checks
			rec := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/readyz", nil, nil)
			var r Readiness
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tt.want || r.Ready != (tt.want == 200) || len(r.Checks) != len(tt.checks) {
				t.Errorf("readyz = %d %+v, want %d", rec.Code, r, tt.want)
			}
		})
	}
}

func TestResyncAndRetryAnswers(t *testing.T) {
	f := newFake()
	s := &Server{Daemon: f, Log: quietLog()}
	rec := serve(t, s, "POST", "/resync", strings.NewReader(`{"connector":"crm","dryRun":true}`), nil)
	var rr ResyncResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &rr); err != nil || rec.Code != 200 || len(rr.Plan) != 1 || rr.Summaries[0].Connector != "crm" {
		t.Errorf("resync = %d %s", rec.Code, rec.Body)
	}
	if rec = serve(t, s, "POST", "/resync", strings.NewReader(`{"connector":"missing"}`), nil); rec.Code != 404 {
		t.Errorf("resync of an unknown connector = %d, want 404", rec.Code)
	}
	if rec = serve(t, s, "POST", "/resync", strings.NewReader(`{bad`), nil); rec.Code != 400 {
		t.Errorf("resync with bad JSON = %d, want 400", rec.Code)
	}
	for path, want := range map[string]int{
		"/deadletters/4/retry": 200, "/deadletters/5/retry": 409, "/deadletters/77/retry": 404,
		"/deadletters/abc/retry": 400, "/deadletters/0/retry": 400, "/deadletters/77/drop": 404, "/deadletters/5/drop": 200,
	} {
		if rec := serve(t, s, "POST", path, nil, nil); rec.Code != want {
			t.Errorf("POST %s = %d %s, want %d", path, rec.Code, rec.Body, want)
		}
	}
	if !slices.Equal(f.dropped, []uint64{5}) {
		t.Errorf("dropped = %v, want [5]", f.dropped)
	}
}

func TestClient(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer((&Server{Daemon: f, Token: testToken, Log: quietLog()}).Handler())
	defer srv.Close()
	ctx := context.Background()
	c := NewClient(strings.TrimPrefix(srv.URL, "http://"), testToken)

	st, err := c.Status(ctx)
	if err != nil || st.Version != "v9.9.9" || len(st.Connectors) != 2 {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if r, err := c.Ready(ctx); err != nil || !r.Ready {
		t.Errorf("Ready = %+v, %v", r, err)
	}
	f.checks = []Check{{Name: "workspace", OK: false}}
	if r, err := c.Ready(ctx); err != nil || r.Ready {
		t.Errorf("Ready with a failing check = %+v, %v; want not ready and no error", r, err)
	}
	dls, err := c.DeadLetters(ctx, "crm")
	if err != nil || len(dls) != 2 {
		t.Errorf("DeadLetters = %v, %v", dls, err)
	}
	if res, err := c.RetryDeadLetter(ctx, 4); err != nil || !res.Resolved || res.Summary.Created != 1 {
		t.Errorf("RetryDeadLetter(4) = %+v, %v", res, err)
	}
	if _, err := c.RetryDeadLetter(ctx, 5); err == nil || !strings.Contains(err.Error(), "cannot be retried") {
		t.Errorf("RetryDeadLetter(5) err = %v, want not retryable", err)
	}
	var se *StatusError
	if err := c.DropDeadLetter(ctx, 77); !errors.As(err, &se) || se.Status != 404 {
		t.Errorf("DropDeadLetter(77) = %v, want a 404 StatusError", err)
	}
	if err := c.DropDeadLetter(ctx, 4); err != nil {
		t.Errorf("DropDeadLetter(4) = %v", err)
	}
	if cs, err := c.Conflicts(ctx, "", 0); err != nil || len(cs) != 1 {
		t.Errorf("Conflicts = %v, %v", cs, err)
	}
	if rr, err := c.Resync(ctx, ResyncRequest{Connector: "crm"}); err != nil || len(rr.Summaries) != 1 {
		t.Errorf("Resync = %+v, %v", rr, err)
	}
	if _, err := c.Resync(ctx, ResyncRequest{Connector: "missing"}); err == nil || !strings.Contains(err.Error(), "unknown connector") {
		t.Errorf("Resync(missing) err = %v", err)
	}

	var buf bytes.Buffer
	if n, err := c.Backup(ctx, &buf); err != nil || n != int64(len(f.backup)) || buf.String() != f.backup {
		t.Errorf("Backup = %d, %v", n, err)
	}
	f.backup = strings.Repeat("x", 1<<20)
	f.backupErr = errors.New("disk on fire")
	buf.Reset()
	if _, err := c.Backup(ctx, &buf); err == nil {
		t.Errorf("Backup cut short by the daemon returned no error (%d bytes)", buf.Len())
	}

	wrong := NewClient(srv.URL, "wrong")
	if _, err := wrong.Resync(ctx, ResyncRequest{}); !errors.Is(err, ErrRefused) {
		t.Errorf("Resync with a wrong token = %v, want ErrRefused", err)
	}
	if _, err := wrong.Backup(ctx, io.Discard); !errors.Is(err, ErrRefused) {
		t.Errorf("Backup with a wrong token = %v, want ErrRefused", err)
	}
}
