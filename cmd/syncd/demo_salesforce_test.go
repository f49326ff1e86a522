package main

import (
	"strings"
	"testing"
)

// TestSalesforceDemo checks the counts the Salesforce demo claims.
func TestSalesforceDemo(t *testing.T) {
	out, _, err := runMain(t, "demo", "--dir", t.TempDir(), "--crm", "salesforce", "--rows", "10")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, w := range []string{
		"created=10 updated=0",
		"1 token call",
		"reached Salesforce: true, in 1 sObject Collections update call(s)",
		"recognised as its own, 0 PATCH",
		"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 Salesforce writes",
		"relinked=1",
		"lastName \"Turing-Merged\"",
		"syncd stops a pass at 50% of them",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("demo output lacks %q:\n%s", w, out)
		}
	}
}
