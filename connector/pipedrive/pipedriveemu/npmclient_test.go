//go:build npmclient

package pipedriveemu

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/testenv"
)

// TestOfficialNodeClient drives the server with Pipedrive's official
// Node.js client (npm "pipedrive", generated from Pipedrive's OpenAPI
// description). Run it with
//
//	npm install --prefix /tmp/pd pipedrive
//	PIPEDRIVE_NPM_DIR=/tmp/pd go test -tags npmclient -run TestOfficialNodeClient ./connector/pipedrive/pipedriveemu/
func TestOfficialNodeClient(t *testing.T) {
	dir := testenv.Require(t, "PIPEDRIVE_NPM_DIR", "run npm install --prefix DIR pipedrive and set PIPEDRIVE_NPM_DIR=DIR")
	srv := NewServer(Options{BurstLimit: 100, CustomFields: []CustomField{
		{Name: "Tier", Type: "enum", Options: []string{"Gold", "Silver"}}, {Name: "Budget", Type: "monetary"},
	}})
	t.Cleanup(srv.Close)
	srv.AddUser("Rep", "rep@example.com", true)
	cmd := exec.Command("node", "testdata/npm-client-check.cjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"),
		"PD_BASE="+srv.URL, "PD_TOKEN="+srv.Token(), "PD_TIER_KEY="+srv.CustomFields()[0].Key, "PD_BUDGET_KEY="+srv.CustomFields()[1].Key)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the official client failed against the test server: %v", err)
	}
}
