// Package remote is the HTTP plumbing every client of a remote JSON API
// shares (the workspace API, HubSpot, Salesforce, Pipedrive): one request
// loop with the credential's shared rate limiter and pause gate, capped
// exponential backoff, Retry-After, the outcome-unknown rule, credentials
// that renew, and hooks for each service's own rules. A client keeps only
// what is its own: its routes, its error type, and its Judge.
//
// # The loop
//
// Client.Do runs one call. Each attempt first waits for the pause gate,
// then for the client's limiter and the request's own limiter (if any),
// then sends the request (with Options.Header, the Auth's credentials,
// Accept and Content-Type: application/json), reads at most MaxBody of
// the answer within AttemptTimeout, and calls OnAnswer and Observer.
//
//   - A 2xx answer ends the call; its JSON is decoded into out (nothing
//     for 204, or for an empty body with AllowEmpty). An undecodable
//     answer to a call that is not idempotent ends with an error wrapping
//     ErrOutcomeUnknown.
//   - A transport failure (no full answer) is a Retry. A failed dial sent
//     nothing (DialFailed), so it is retried even for a create.
//   - A non-2xx answer goes to the Judge, which returns a Verdict: Fail,
//     Retry (5xx: backoff; for a call that is not idempotent it ends with
//     ErrOutcomeUnknown instead, since the service may have applied it),
//     Wait (refused before being applied, so safe to repeat for every
//     method: wait After, optionally pausing every caller of the
//     credential and draining the limiter's burst), or Renew (the
//     session expired: the Auth renews once, the call is repeated at once;
//     a renewal that fails ends the call).
//   - Retries and waits are bounded by Options.Budget; when it runs out
//     the call ends with the Verdict's Err.
//   - When the caller's context ends the call ends with its error, which
//     wraps ErrOutcomeUnknown when a request that is not idempotent may
//     have been sent.
//
// Without a Judge, a 429 is Throttled (Retry-After pauses every caller
// until then, capped at MaxRetryAfter; without it every caller pauses
// briefly, the burst is drained, and this caller backs off), a 5xx is a
// Retry (after its Retry-After, if longer than the backoff, for this
// caller only), and anything else fails with a *StatusError.
//
// # Writing a client
//
// Build one Client per connector from Options:
//
//	limiter := remote.SharedLimiter(baseURL, token, "", rate.Limit(25), 5)
//	c := remote.New(remote.Options{
//		Name:     "pipedrive",          // starts every error
//		BaseURL:  baseURL,
//		HTTP:     &http.Client{Transport: ...},
//		Auth:     remote.Header("x-api-token", token), // or &remote.Token{Fetch: ...}
//		Limiter:  limiter,              // shared by every connector of the token
//		Judge:    judge,                // the service's rules, below
//		OnAnswer: quota.record,         // rate-limit headers
//		Budget:   remote.Budget{Retries: 5, Waits: 10},
//	})
//	status, err := c.Do(ctx, remote.Request{Method: "GET", Path: "/v1/persons", Query: q,
//		Idempotent: true}, &page)
//
// The hooks, all optional:
//
//   - Auth sets the credentials. Header(name, value) is a fixed key or
//     token. *Token holds a token its Fetch obtains (OAuth client
//     credentials, a JWT bearer grant, a session login): fetched on first
//     use, and again when a Judge answers Renew (Salesforce's 401
//     INVALID_SESSION_ID); callers that meet the expiry together cause
//     one fetch.
//   - OnAnswer sees every answer's status and headers, 2xx included:
//     Salesforce's Sforce-Limit-Info (api-usage=N/M), Pipedrive's
//     x-ratelimit-remaining/-limit/-reset, HubSpot's
//     X-HubSpot-RateLimit-*. Record the quota there (a connector.Quota
//     for QuotaReporter); a client may also slow its limiter down
//     (rate.Limiter.SetLimit) when it runs low.
//   - Judge turns a non-2xx Answer (status, headers, body, and the call's
//     counts so far) into a Verdict and builds the service's own error.
//     For example: REQUEST_LIMIT_EXCEEDED → Verdict{Action: Fail, Err:
//     the typed daily-limit error}; UNABLE_TO_LOCK_ROW → Verdict{Action:
//     Wait, After: 2 * time.Second}; a 429 → Throttled(header, max,
//     BriefPause(limiter, base), err); a 5xx → Verdict{Action: Retry}. A
//     Judge may log its own entries (e.g. which limit was hit).
//   - Observer sees each attempt (Info), for metrics.
//   - Transport wraps transport failures in the client's own type.
//   - Sleep replaces the waits between attempts (tests record them).
//
// SharedLimiter keeps one *rate.Limiter per (base URL, secret, scope) in
// the process, so every connector of one token or key spends one quota;
// GateFor gives each limiter its one pause gate, which every Client of
// that limiter waits on.
package remote
