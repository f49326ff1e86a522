package admin

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// HeldDeleter is implemented by a Daemon whose write-back holds record
// deletions over a connector's massDeleteThreshold as a plan for an
// operator (reverse/massdelete.go). Without it the routes answer 404.
type HeldDeleter interface {
	// HeldDeletes lists a connector's held deletions ("" for every
	// connector); ErrUnknownConnector for a name it does not know.
	HeldDeletes(connector string) ([]state.HeldDelete, error)
	// ApproveHeldDeletes deletes the held records and drops their links;
	// it returns how many were deleted.
	ApproveHeldDeletes(ctx context.Context, connector string) (int, error)
	// DropHeldDeletes forgets them: the records stay. It returns how many.
	DropHeldDeletes(connector string) (int, error)
}

// HeldDeletesResponse is the answer of POST /deletes/{connector}/approve
// and /drop: how many held deletions were carried out or dropped.
type HeldDeletesResponse struct {
	Connector string `json:"connector"`
	Approved  int    `json:"approved,omitempty"`
	Dropped   int    `json:"dropped,omitempty"`
	Error     string `json:"error,omitempty"`
}

// heldDeleteRoutes adds the held deletions' routes: GET /deletes shows
// records (the token's read rule), the POSTs change state.
func (s *Server) heldDeleteRoutes(mux *http.ServeMux) {
	mux.Handle("GET /deletes", s.records(s.heldDeletes))
	mux.Handle("POST /deletes/{connector}/{action}", s.authorized(http.HandlerFunc(s.settleHeldDeletes)))
	mux.HandleFunc("POST /ui/deletes/{connector}/{action}", s.uiHeldDeletes)
}

func (s *Server) heldDeleter(w http.ResponseWriter) (HeldDeleter, bool) {
	hd, ok := s.Daemon.(HeldDeleter)
	if !ok {
		writeError(w, http.StatusNotFound, "this daemon holds no deletions")
	}
	return hd, ok
}

func (s *Server) heldDeletes(w http.ResponseWriter, r *http.Request) {
	hd, ok := s.heldDeleter(w)
	if !ok {
		return
	}
	hs, err := hd.HeldDeletes(r.URL.Query().Get("connector"))
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if hs == nil {
		hs = []state.HeldDelete{}
	}
	writeJSON(w, http.StatusOK, hs)
}

// settle approves or drops a connector's held deletions.
func (s *Server) settle(ctx context.Context, hd HeldDeleter, conn, action string) (HeldDeletesResponse, error) {
	out := HeldDeletesResponse{Connector: conn}
	var err error
	switch action {
	case "approve":
		out.Approved, err = hd.ApproveHeldDeletes(ctx, conn)
	default:
		out.Dropped, err = hd.DropHeldDeletes(conn)
	}
	return out, err
}

func (s *Server) settleHeldDeletes(w http.ResponseWriter, r *http.Request) {
	hd, ok := s.heldDeleter(w)
	if !ok {
		return
	}
	conn, action := r.PathValue("connector"), r.PathValue("action")
	if action != "approve" && action != "drop" {
		writeError(w, http.StatusNotFound, "unknown action "+action+": approve or drop")
		return
	}
	log := s.log().WithFields(logrus.Fields{logfield.Connector: conn, logfield.Action: action, logfield.Remote: r.RemoteAddr})
	out, err := s.settle(r.Context(), hd, conn, action)
	if err != nil {
		log.WithError(err).Warn("held deletes could not be settled")
		out.Error = err.Error()
		writeJSON(w, errorStatus(err), out)
		return
	}
	log.Info("held deletes settled through the admin API")
	writeJSON(w, http.StatusOK, out)
}

// uiHeldDeletes is the health page's Approve and Drop buttons.
func (s *Server) uiHeldDeletes(w http.ResponseWriter, r *http.Request) {
	if !s.formAllowed(w, r) {
		return
	}
	hd, ok := s.heldDeleter(w)
	if !ok {
		return
	}
	conn, action := r.PathValue("connector"), r.PathValue("action")
	if action != "approve" && action != "drop" {
		http.Error(w, "unknown action "+action, http.StatusNotFound)
		return
	}
	log := s.log().WithFields(logrus.Fields{logfield.Connector: conn, logfield.Action: action, logfield.Remote: r.RemoteAddr})
	if _, err := s.settle(r.Context(), hd, conn, action); err != nil {
		log.WithError(err).Warn("held deletes from the health page could not be settled")
		http.Error(w, err.Error(), errorStatus(err))
		return
	}
	log.Info("held deletes settled from the health page")
	redirect(w, "deletes-"+action, url.Values{"connector": {conn}})
}

// HeldDeletes lists a connector's held deletions ("" for all).
func (c *Client) HeldDeletes(ctx context.Context, connector string) ([]state.HeldDelete, error) {
	var out []state.HeldDelete
	err := c.do(ctx, http.MethodGet, "/deletes?"+url.Values{"connector": {connector}}.Encode(), nil, &out, false)
	return out, err
}

// SettleHeldDeletes approves ("approve") or drops ("drop") a connector's
// held deletions.
func (c *Client) SettleHeldDeletes(ctx context.Context, connector, action string) (HeldDeletesResponse, error) {
	var out HeldDeletesResponse
	err := c.do(ctx, http.MethodPost, "/deletes/"+url.PathEscape(connector)+"/"+action, nil, &out, false)
	return out, err
}

// heldGroup is one connector's held deletions as the health page shows
// them.
type heldGroup struct {
	Connector string
	Count     int
	Since     time.Time
	Records   []string // the first few externalIds
}

// heldGroups groups held deletions by connector, in the order met.
func heldGroups(hs []state.HeldDelete) []heldGroup {
	var out []heldGroup
	at := map[string]int{}
	for _, h := range hs {
		i, ok := at[h.Connector]
		if !ok {
			i = len(out)
			at[h.Connector] = i
			out = append(out, heldGroup{Connector: h.Connector, Since: h.HeldAt})
		}
		g := &out[i]
		g.Count++
		if h.HeldAt.Before(g.Since) {
			g.Since = h.HeldAt
		}
		if len(g.Records) < 5 {
			g.Records = append(g.Records, h.ExternalID)
		}
	}
	return out
}
