package main

// Every connector type registers itself from its package's init.
import _ "github.com/syncd-io/syncd/connector/all"
