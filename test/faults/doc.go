// Package faults is syncd's fault suite: randomised, seeded runs of a
// two-way sync between a PostgreSQL table and the workspace emulator,
// with 500s, 429s, latency and lost answers injected at several rates and
// edits made on both sides between the passes. Once the faults stop and
// one more run is made, both sides must agree, with no duplicate contact
// and no lost edit.
//
// CI runs a few seeds per rate; run many more with
//
//	go test ./test/faults -seeds=200
//
// and replay one failure with -seed=N -seeds=1 -rates=R.
package faults
