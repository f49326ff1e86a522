package workspace

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// query is the listing's query: phoneNumberId, participants (exactly
// one), createdAfter, maxResults, pageToken.
func (p ActivityPageParams) query() (url.Values, error) {
	if p.PhoneNumberID == "" || p.Participant == "" {
		return nil, fmt.Errorf("a listing needs a workspace number and one participant")
	}
	q := url.Values{"phoneNumberId": {p.PhoneNumberID}, "participants": {p.Participant}}
	if !p.CreatedAfter.IsZero() {
		q.Set("createdAfter", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	n := p.MaxResults
	if n <= 0 || n > MaxActivityPageSize {
		n = MaxActivityPageSize
	}
	q.Set("maxResults", strconv.Itoa(n))
	if p.PageToken != "" {
		q.Set("pageToken", p.PageToken)
	}
	return q, nil
}

// ListCalls returns one page of the calls between a workspace number and
// one participant (GET /v1/calls).
func (c *Client) ListCalls(ctx context.Context, p ActivityPageParams) (CallPage, error) {
	q, err := p.query()
	if err != nil {
		return CallPage{}, fmt.Errorf("list calls: %w", err)
	}
	var page CallPage
	if err := c.do(ctx, request{route: RouteListCalls, query: q}, &page); err != nil {
		return CallPage{}, fmt.Errorf("list calls: %w", err)
	}
	return page, nil
}

// ListMessages returns one page of the texts between a workspace number
// and one participant (GET /v1/messages).
func (c *Client) ListMessages(ctx context.Context, p ActivityPageParams) (MessagePage, error) {
	q, err := p.query()
	if err != nil {
		return MessagePage{}, fmt.Errorf("list messages: %w", err)
	}
	var page MessagePage
	if err := c.do(ctx, request{route: RouteListMessages, query: q}, &page); err != nil {
		return MessagePage{}, fmt.Errorf("list messages: %w", err)
	}
	return page, nil
}

// CallSummary returns a call's summary (GET /v1/call-summaries/{callId}).
func (c *Client) CallSummary(ctx context.Context, callID string) (CallSummary, error) {
	s, err := get[CallSummary](ctx, c, request{route: RouteCallSummary, args: []string{callID}})
	if err != nil {
		return CallSummary{}, fmt.Errorf("get summary of call %s: %w", callID, err)
	}
	return s, nil
}

// CallTranscript returns a call's transcript (GET /v1/call-transcripts/{id}).
func (c *Client) CallTranscript(ctx context.Context, callID string) (CallTranscript, error) {
	t, err := get[CallTranscript](ctx, c, request{route: RouteCallTranscript, args: []string{callID}})
	if err != nil {
		return CallTranscript{}, fmt.Errorf("get transcript of call %s: %w", callID, err)
	}
	return t, nil
}

// CallRecordings returns a call's recordings, oldest segment first (GET
// /v1/call-recordings/{callId}).
func (c *Client) CallRecordings(ctx context.Context, callID string) ([]CallRecording, error) {
	r, err := get[[]CallRecording](ctx, c, request{route: RouteCallRecordings, args: []string{callID}})
	if err != nil {
		return nil, fmt.Errorf("get recordings of call %s: %w", callID, err)
	}
	return r, nil
}

// User returns the workspace user with id (GET /v1/users/{userId}).
func (c *Client) User(ctx context.Context, id string) (User, error) {
	u, err := get[User](ctx, c, request{route: RouteGetUser, args: []string{id}})
	if err != nil {
		return User{}, fmt.Errorf("get user %s: %w", id, err)
	}
	return u, nil
}
