package hubspot

import (
	"fmt"
	"strconv"

	"github.com/syncd-io/syncd/connector"
)

// checkpoint is the position of Changes: one cursor for the search of
// changed contacts, one for the scan of archived ones. It is stored as
// compact JSON.
type checkpoint struct {
	Search   searchCursor   `json:"search"`
	Archived archivedCursor `json:"archived"`
}

// searchCursor is a position in the windows of lastmodifieddate.
type searchCursor struct {
	// Since is the window's inclusive lower bound, in epoch ms.
	Since int64 `json:"since"`
	// Until is the exclusive upper bound of the window being read; 0
	// when no window is open (the next read opens one at the clock).
	Until int64 `json:"until,omitempty"`
	// After is the last hs_object_id read in the open window.
	After string `json:"after,omitempty"`
	// Tail, when set, is the look-back span before Since and what was
	// read in it: the next window starts at Since when a count shows
	// nothing else there, else at Tail.From. Without it (checkpoints of
	// older versions, a lookback of 0) the window starts at Since.
	Tail *tail `json:"tail,omitempty"`
}

// archivedCursor is what the archived scans have emitted.
type archivedCursor struct {
	// At is the newest archivedAt emitted, in epoch ms.
	At int64 `json:"at,omitempty"`
	// Recent are the contacts emitted with an archivedAt at or after
	// At - lookback: id to archivedAt. An archival seen again is not
	// emitted again; one re-archived after a restore is.
	Recent map[string]int64 `json:"recent,omitempty"`
	// Scanned is when the last scan ended (epoch ms, syncd's clock),
	// for archivedInterval.
	Scanned int64 `json:"scanned,omitempty"`
}

func parseCheckpoint(s string) (checkpoint, error) {
	cp, err := connector.DecodeCheckpoint[checkpoint](TypeName, s)
	if err != nil {
		return cp, err
	}
	if cp.Search.Since < 0 || cp.Search.Until < 0 || (cp.Search.Until != 0 && cp.Search.Until <= cp.Search.Since) {
		return cp, fmt.Errorf("parse hubspot checkpoint: bad window [%d, %d)", cp.Search.Since, cp.Search.Until)
	}
	// The look-back span ends where the next window starts, or, while a
	// window is read, where it ends.
	end := cp.Search.Since
	if cp.Search.Until != 0 {
		end = cp.Search.Until
	}
	if t := cp.Search.Tail; t != nil && (t.From < 0 || t.From > end) {
		return cp, fmt.Errorf("parse hubspot checkpoint: look-back span starts at %d, after its end %d", t.From, end)
	}
	if cp.Search.After != "" {
		if _, ok := parseInt(cp.Search.After); !ok {
			return cp, fmt.Errorf("parse hubspot checkpoint: bad id %q", cp.Search.After)
		}
	}
	return cp, nil
}

func (cp checkpoint) String() string { return connector.EncodeCheckpoint(cp) }

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
