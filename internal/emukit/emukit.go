// Package emukit holds what the CRM emulators (hubspotemu, pipedriveemu,
// salesforceemu: the tests' servers, which the demos also serve) share:
// the counts of requests and answers by route, the faults queued per route, the answer
// computed under a server's lock and written after it, and a clock that
// runs or stands still. Each vendor's error bodies, auth and rate-limit
// rules stay in its own server.
package emukit

import "net/http"

// Counts counts the requests a server received and its answers, by route.
type Counts[R comparable] struct {
	// Requests counts every request by route, whatever its answer.
	Requests map[R]int
	// Responses counts answers by route and status.
	Responses map[R]map[int]int
}

// NewCounts returns empty counts.
func NewCounts[R comparable]() Counts[R] {
	return Counts[R]{Requests: map[R]int{}, Responses: map[R]map[int]int{}}
}

// Add counts one request of route answered with status.
func (c Counts[R]) Add(route R, status int) {
	c.Requests[route]++
	if c.Responses[route] == nil {
		c.Responses[route] = map[int]int{}
	}
	c.Responses[route][status]++
}

// Clone returns a copy that later counts do not change.
func (c Counts[R]) Clone() Counts[R] {
	out := NewCounts[R]()
	for r, n := range c.Requests {
		out.Requests[r] = n
	}
	for r, m := range c.Responses {
		out.Responses[r] = map[int]int{}
		for st, n := range m {
			out.Responses[r][st] = n
		}
	}
	return out
}

// RateLimited returns the number of 429 answers over every route.
func (c Counts[R]) RateLimited() int {
	n := 0
	for _, m := range c.Responses {
		n += m[http.StatusTooManyRequests]
	}
	return n
}

// Faults are answers queued per route, to be given in order in place of
// (or after) the normal ones.
type Faults[R comparable, F any] map[R][]F

// Push queues faults on route.
func (q Faults[R, F]) Push(route R, faults ...F) { q[route] = append(q[route], faults...) }

// Pop takes the next fault of route, if any.
func (q Faults[R, F]) Pop(route R) (F, bool) {
	var f F
	l := q[route]
	if len(l) == 0 {
		return f, false
	}
	f, q[route] = l[0], l[1:]
	return f, true
}
