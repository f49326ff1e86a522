package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reconcile"
)

// MatchResolver is implemented by a Daemon whose connectors hold records
// that match more than one contact (reconcile.Held) for an operator to
// settle. Without it the routes answer 404.
type MatchResolver interface {
	// HeldMatches lists a connector's held records ("" for every
	// connector); ErrUnknownConnector for a name it does not know.
	HeldMatches(connector string) ([]HeldMatch, error)
	// ResolveHeldMatch settles one: the record adopts (or links, per
	// onMatch) contactID, or, when contactID is "", creates a contact.
	ResolveHeldMatch(ctx context.Context, connector, externalID, contactID string) (reconcile.Summary, error)
}

// HeldMatch is a record held for an ambiguous match, as GET /matches
// lists it: without the record's values.
type HeldMatch struct {
	Connector  string   `json:"connector"`
	ExternalID string   `json:"externalId"`
	Candidates []string `json:"candidates"`
	Reason     string   `json:"reason"`
}

// ResolveRequest is the body of POST /matches/{connector}/resolve.
type ResolveRequest struct {
	ExternalID string `json:"externalId"`
	// ContactID is the contact to adopt; "" creates a new one.
	ContactID string `json:"contactId,omitempty"`
}

// ResolveResponse is its answer.
type ResolveResponse struct {
	Summary reconcile.Summary `json:"summary"`
	Error   string            `json:"error,omitempty"`
}

// matchRoutes adds the held matches' routes: GET /matches shows records
// (the token's read rule), the POST changes state.
func (s *Server) matchRoutes(mux *http.ServeMux) {
	mux.Handle("GET /matches", s.records(s.heldMatches))
	mux.Handle("POST /matches/{connector}/resolve", s.authorized(http.HandlerFunc(s.resolveHeldMatch)))
}

func (s *Server) matchResolver(w http.ResponseWriter) (MatchResolver, bool) {
	mr, ok := s.Daemon.(MatchResolver)
	if !ok {
		writeError(w, http.StatusNotFound, "this daemon holds no matches")
	}
	return mr, ok
}

func (s *Server) heldMatches(w http.ResponseWriter, r *http.Request) {
	mr, ok := s.matchResolver(w)
	if !ok {
		return
	}
	hs, err := mr.HeldMatches(r.URL.Query().Get("connector"))
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if hs == nil {
		hs = []HeldMatch{}
	}
	writeJSON(w, http.StatusOK, hs)
}

func (s *Server) resolveHeldMatch(w http.ResponseWriter, r *http.Request) {
	mr, ok := s.matchResolver(w)
	if !ok {
		return
	}
	var req ResolveRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if req.ExternalID == "" {
		writeError(w, http.StatusBadRequest, "externalId is required")
		return
	}
	conn := r.PathValue("connector")
	log := s.log().WithFields(logrus.Fields{logfield.Connector: conn, logfield.ExternalID: req.ExternalID, logfield.Remote: r.RemoteAddr})
	var out ResolveResponse
	sum, err := mr.ResolveHeldMatch(r.Context(), conn, req.ExternalID, req.ContactID)
	out.Summary = sum
	if err != nil {
		log.WithError(err).Warn("held match could not be resolved")
		out.Error = err.Error()
		writeJSON(w, errorStatus(err), out)
		return
	}
	log.Info("held match resolved through the admin API")
	writeJSON(w, http.StatusOK, out)
}

// HeldMatches lists a connector's records held for an ambiguous match
// ("" for all).
func (c *Client) HeldMatches(ctx context.Context, connector string) ([]HeldMatch, error) {
	var out []HeldMatch
	err := c.do(ctx, http.MethodGet, "/matches?"+url.Values{"connector": {connector}}.Encode(), nil, &out, false)
	return out, err
}

// ResolveHeldMatch asks the daemon to settle a held record: adopt
// contactID, or create a contact when it is "".
func (c *Client) ResolveHeldMatch(ctx context.Context, connector, externalID, contactID string) (reconcile.Summary, error) {
	var out ResolveResponse
	err := c.do(ctx, http.MethodPost, "/matches/"+url.PathEscape(connector)+"/resolve", ResolveRequest{ExternalID: externalID, ContactID: contactID}, &out, true)
	if err == nil && out.Error != "" {
		err = fmt.Errorf("daemon: %s", out.Error)
	}
	return out.Summary, err
}
