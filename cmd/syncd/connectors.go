package main

// The connector types syncd knows, registered by their packages' init.
import (
	_ "github.com/syncd-io/syncd/connector/csv"
	_ "github.com/syncd-io/syncd/connector/hubspot"
	_ "github.com/syncd-io/syncd/connector/pipedrive"
	_ "github.com/syncd-io/syncd/connector/postgres"
	_ "github.com/syncd-io/syncd/connector/salesforce"
)
