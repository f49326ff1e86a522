package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/workspace"
)

func TestEmulatorCommandFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no api key", args: []string{"--listen", "127.0.0.1:0"}, wantErr: "--api-key is required"},
		{name: "fault rate above 1", args: []string{"--api-key", "k", "--fault-rate", "1.5"}, wantErr: "--fault-rate"},
		{name: "custom field without name", args: []string{"--api-key", "k", "--custom-field", "plan:string"}, wantErr: "key:type:name"},
		{name: "custom field of unknown type", args: []string{"--api-key", "k", "--custom-field", "plan:colour:Plan"}, wantErr: "colour"},
		{name: "custom field twice", args: []string{"--api-key", "k", "--custom-field", "a:string:A", "--custom-field", "a:number:B"}, wantErr: "twice"},
		{name: "unknown custom field values form", args: []string{"--api-key", "k", "--custom-field-values", "strings"}, wantErr: "--custom-field-values"},
		{name: "stray argument", args: []string{"--api-key", "k", "extra"}, wantErr: "unexpected arguments"},
		{name: "bad listen address", args: []string{"--api-key", "k", "--listen", "256.0.0.1:99999"}, wantErr: "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runMain(t, append([]string{"emulator"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestEmulatorCommandServes(t *testing.T) {
	var stderr capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"emulator", "--listen", "127.0.0.1:0", "--api-key", "k", "--rate", "100",
			"--custom-field", "plan:string:Plan: tier", "--custom-field", "vip:boolean:VIP", "--custom-field-values", "arrays"})
	}()
	urlRE := regexp.MustCompile(`url="?(http://[0-9.:]+)`)
	var base string
	deadline := time.Now().Add(5 * time.Second)
	for base == "" {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no URL logged: %s", stderr.String())
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	get := func(path, key string) (int, []byte) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, body := get("/v1/contact-custom-fields", "k")
	var defs struct {
		Data []workspace.CustomFieldDefinition
	}
	if err := json.Unmarshal(body, &defs); err != nil || status != 200 {
		t.Fatalf("custom fields: %d %s", status, body)
	}
	want := []workspace.CustomFieldDefinition{{Name: "Plan: tier", Key: "plan", Type: "string"}, {Name: "VIP", Key: "vip", Type: "boolean"}}
	if len(defs.Data) != 2 || defs.Data[0] != want[0] || defs.Data[1] != want[1] {
		t.Errorf("custom fields = %+v, want %+v", defs.Data, want)
	}
	create := func(vip string) int {
		req, _ := http.NewRequest("POST", base+"/v1/contacts", strings.NewReader(`{"defaultFields":{"firstName":"Ada"},"customFields":[{"key":"vip","value":`+vip+`}]}`))
		req.Header.Set("Authorization", "k")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if typed, arrays := create("true"), create(`["true"]`); typed != http.StatusBadRequest || arrays != http.StatusCreated {
		t.Errorf("--custom-field-values arrays: a typed boolean got %d (want 400), an array %d (want 201)", typed, arrays)
	}
	if status, _ := get("/organization", "wrong"); status != http.StatusUnauthorized {
		t.Errorf("wrong key: %d", status)
	}
	if status, _ := get("/_emulator/stats", ""); status != http.StatusOK {
		t.Errorf("back door: %d", status)
	}
	if strings.Contains(stderr.String(), `"k"`) || strings.Contains(stderr.String(), "=k ") {
		t.Errorf("the API key was logged: %s", stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("emulator did not stop")
	}
	if _, err := http.Get(base + "/_emulator/stats"); err == nil {
		t.Error("still serving after the context ended")
	}
	if !strings.Contains(stderr.String(), "emulator stopped") {
		t.Errorf("stderr = %s", stderr.String())
	}
}
