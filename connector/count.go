package connector

import "context"

// Total is how many records a read will deliver, as a Counter knows it.
type Total struct {
	// N is the number of records; meaningless when Known is false.
	N int64
	// Known is false when the source cannot tell: the total is shown as
	// unknown, never as a made-up number.
	Known bool
	// Estimate is set when N is a projection (from a file's size, say)
	// rather than a count: the read may deliver somewhat more or fewer.
	Estimate bool
}

// Counter is implemented by sources that can say, cheaply, how many
// records a read will deliver, so that a long pass can show its progress
// against a total and a time left.
//
// The contract:
//   - Count(ctx, checkpoint, false) counts what Changes(ctx, checkpoint, fn)
//     would deliver now, deletions included; Count(ctx, "", true) what
//     Snapshot would.
//   - It is cheap next to the read itself: one query, one API call or a
//     scan of a file at disk speed, never a read of every record through
//     the API. A source that cannot be that cheap returns an Estimate
//     or an unknown Total rather than spending the read's time or quota.
//   - The figure may be off by what changes between the count and the
//     read (and by overlap a source is allowed to repeat): callers treat
//     it as a guide for progress, never as a limit on what they accept.
//   - An unknown total ({Known: false}, nil) is a valid answer; an error
//     means the count failed, and callers go on without a total.
type Counter interface {
	Count(ctx context.Context, checkpoint string, snapshot bool) (Total, error)
}

// Reestimator is implemented by Counters whose estimated totals get
// better as a read goes on (a CSV file: its size over the bytes per row
// read so far). Reestimate is called from within the read's BatchFunc
// with the records delivered so far, and returns the total as it now
// projects it, or false when it has nothing better than Count's.
type Reestimator interface {
	Reestimate(done int64) (Total, bool)
}
