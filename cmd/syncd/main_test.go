package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	err = m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

func TestMainDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantOut    string
		wantErr    error
		wantStderr string
	}{
		{name: "version", args: []string{"version"}, wantOut: "syncd dev go"},
		{name: "no arguments prints usage", args: nil, wantErr: ErrUsage, wantStderr: "Commands:"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: ErrUsage, wantStderr: "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, serr, err := runMain(t, tt.args...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out, tt.wantOut)
			}
			if !strings.Contains(serr, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", serr, tt.wantStderr)
			}
		})
	}
}
