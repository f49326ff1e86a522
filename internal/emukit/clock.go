package emukit

import "time"

// Clock is a test server's clock: the wall clock moved by an offset, or
// frozen at a time, in UTC and truncated to Precision (0: none). Its zero
// value runs with the wall clock. It is not safe for concurrent use: the
// server's lock guards it.
type Clock struct {
	Precision time.Duration
	frozen    *time.Time
	offset    time.Duration
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	if c.frozen != nil {
		return *c.frozen
	}
	return time.Now().Add(c.offset).UTC().Truncate(c.Precision)
}

// Freeze stops the clock at t, until Advance or Freeze.
func (c *Clock) Freeze(t time.Time) {
	t = t.UTC().Truncate(c.Precision)
	c.frozen = &t
}

// Advance moves the clock forward by d, frozen or not.
func (c *Clock) Advance(d time.Duration) {
	if c.frozen != nil {
		t := c.frozen.Add(d).Truncate(c.Precision)
		c.frozen = &t
		return
	}
	c.offset += d
}
