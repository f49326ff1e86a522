// Package soak is syncd's soak: the real binary (`syncd run`) keeps a
// PostgreSQL table (changes: logical or poll) or a MariaDB table (changes:
// binlog) and the workspace emulator in two-way sync
// (`conflict: newest-wins`) while both sides are edited at a steady rate
// (row edits, app edits, creates and deletes on both sides), 20% of the
// workspace API calls fail (429s, 500s, latency, lost answers) and syncd
// is SIGKILLed and started again every few minutes. Every acknowledged
// edit is logged with its time. Once the edits stop and syncd has drained,
// the check (Check) wants: both sides agree field by field, no duplicate
// contact, no write in a quiet window after the drain (a write loop or a
// late echo), and no lost edit: the last acknowledged edit of every field
// survived on both sides, unless an edit on the other side came within
// the race window (3 s) or the conflict journal records why it lost; an
// edit made after a delete on the other side is applied or journaled.
//
// The soak needs PostgreSQL with wal_level=logical (scripts/test
// --prepare-only) and runs only with the soak build tag:
//
//	go test -tags soak -run TestSoak -timeout 30m ./test/soak -soak.duration=3m
//	go test -tags soak -run TestSoak/logical -timeout 3h ./test/soak -soak.duration=60m
//
// See the flags in soak_test.go (rate, faults, kill interval, seed) and
// BENCHMARKS.md. Each run writes its report, its edit log and syncd's
// output under -soak.out.
package soak
