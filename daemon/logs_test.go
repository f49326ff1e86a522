package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/webhook"
	"github.com/syncd-io/syncd/workspace/signature"
)

// A daemon's logs, at the most verbose level, through a pass with a
// refused record, admin calls with right and wrong tokens, the health
// page's buttons, a backup and webhook deliveries good and forged, hold
// neither the API key, nor the admin token, nor a webhook secret or
// signature; every line is one JSON object with a static message.
func TestLogsHoldNoSecrets(t *testing.T) {
	const adminToken = "adm-7f3c9e1b-TOKEN-do-not-log"
	log, sink := capture.Logger(logrus.TraceLevel)
	log.SetFormatter(&logrus.JSONFormatter{})

	e := newCSVEnv(t, 5, log, nil)
	e.setRefuse("row-2", true)
	e.failNext(2) // retried: logged at debug
	if _, err := e.d.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	callAdmin(t, e, log, adminToken)
	secret, signatures := deliverWebhooks(t, e, log)

	logs := sink.String()
	secretBody, _ := strings.CutPrefix(secret, signature.SecretPrefix)
	forbidden := map[string]string{"API key": envAPIKey, "admin token": adminToken, "webhook secret": secretBody}
	for i, s := range signatures {
		// Each entry is "v1,<base64>"; the MAC itself must not appear.
		for _, part := range strings.Fields(s) {
			_, mac, _ := strings.Cut(part, ",")
			forbidden["signature "+itoa(int64(i))] = mac
		}
	}
	for what, s := range forbidden {
		if s == "" {
			t.Fatalf("empty %s in the test", what)
		}
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain the %s", what)
		}
	}
	checkLogLines(t, logs)
}

// callAdmin makes admin calls with right and wrong tokens, and presses
// the health page's buttons.
func callAdmin(t *testing.T, e *csvEnv, log *logrus.Logger, adminToken string) {
	t.Helper()
	srv := httptest.NewServer((&admin.Server{Daemon: e.d, Token: adminToken, Metrics: e.d.Metrics().Handler(), Log: logrus.NewEntry(log)}).Handler())
	defer srv.Close()
	call := func(method, path, bearer string, form url.Values) int {
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, srv.URL+path, body)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	dl, _ := e.d.DeadLetters("crm")
	for _, c := range []struct {
		method, path, bearer string
		form                 url.Values
		want                 int
	}{
		{"POST", "/resync", adminToken + "-wrong", nil, 401},
		{"POST", "/resync", adminToken, nil, 200},
		{"GET", "/state/backup", adminToken, nil, 200},
		{"GET", "/state/backup", "", nil, 401},
		{"POST", "/deadletters/" + itoa(int64(dl[0].ID)) + "/retry", adminToken, nil, 200},
		{"GET", "/", "", nil, 401},
		{"GET", "/", adminToken, nil, 200},
		{"GET", "/deadletters", "", nil, 401},
		{"POST", "/", "", url.Values{"token": {"wrong-" + adminToken}}, 401},
		{"POST", "/", "", url.Values{"token": {adminToken}}, 303},
		{"GET", "/metrics", "", nil, 200},
		{"POST", "/ui/resync", "", url.Values{"token": {"wrong-" + adminToken}}, 303},
		{"POST", "/ui/resync", "", url.Values{"token": {adminToken}, "connector": {"crm"}}, 303},
	} {
		if got := call(c.method, c.path, c.bearer, c.form); got != c.want {
			t.Errorf("%s %s = %d, want %d", c.method, c.path, got, c.want)
		}
	}
	if !e.d.WaitIdle(ctxTimeout(t, 10*time.Second)) {
		t.Fatal("the page's resync did not end")
	}
}

// deliverWebhooks sends a good and a forged delivery through a receiver
// on the daemon's state; it returns the secret and the signatures.
func deliverWebhooks(t *testing.T, e *csvEnv, log *logrus.Logger) (string, []string) {
	t.Helper()
	secret, err := signature.NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Store().Webhooks.PutSecret(state.WebhookSecret{WebhookID: "9", Secret: secret}); err != nil {
		t.Fatal(err)
	}
	recv, err := webhook.New(webhook.Options{Store: webhook.StoreOf(e.d.Store()), Log: logrus.NewEntry(log)})
	if err != nil {
		t.Fatal(err)
	}
	contact := e.emu.Contacts()[0]
	var signatures []string
	for i, sec := range []string{secret, "whsec_" + strings.Repeat("B", 32)} {
		h, body := signedEvent(t, sec, "msg-"+itoa(int64(i)), contact)
		signatures = append(signatures, h.Get(signature.HeaderSignature))
		req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(body))
		req.Header = h
		rec := httptest.NewRecorder()
		recv.ServeHTTP(rec, req)
		if want := []int{200, 401}[i]; rec.Code != want {
			t.Fatalf("delivery %d = %d, want %d", i, rec.Code, want)
		}
	}
	return secret, signatures
}

// checkLogLines checks one JSON object per line, a static message, the
// dynamic parts in fields with stable names.
func checkLogLines(t *testing.T, logs string) {
	t.Helper()
	msgs := map[string]logrus.Fields{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	lines := 0
	for sc.Scan() {
		lines++
		var f logrus.Fields
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("log line is not one JSON object: %q", sc.Text())
		}
		msg, _ := f["msg"].(string)
		if msg == "" || f["level"] == nil || f["time"] == nil {
			t.Errorf("log line without msg, level or time: %q", sc.Text())
		}
		for _, dynamic := range []string{"row-", "/v1/", "127.0.0.1", "CT"} {
			if strings.Contains(msg, dynamic) {
				t.Errorf("log message %q holds dynamic data (%q): put it in a field", msg, dynamic)
			}
		}
		msgs[msg] = f
	}
	if lines < 10 {
		t.Fatalf("only %d log lines: the scenario logged less than planned:\n%s", lines, logs)
	}
	for msg, fields := range map[string][]string{
		"sync pass finished":                                {"connector", "kind", "created", "updated", "unchanged", "failed", "api_calls", "duration"},
		"record set aside as a dead letter":                 {"connector", "key", "operation", "reason"},
		"admin call refused: missing or wrong bearer token": {"path", "remote"},
		"webhook delivery refused":                          {"status", "reason", "remote"},
		"dead letter retried":                               {"connector", "dead_letter", "resolved"},
	} {
		f, ok := msgs[msg]
		if !ok {
			t.Errorf("no %q line", msg)
			continue
		}
		for _, k := range fields {
			if _, ok := f[k]; !ok {
				t.Errorf("%q line lacks the field %q: %v", msg, k, f)
			}
		}
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
