package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

var _ connector.Counter = (*Source)(nil)

// Count says how many records a read will deliver, with one SELECT
// COUNT() query (one API call): for Changes, the records of the window
// the checkpoint is in (or would open) from its key on, deleted and
// merged ones included; for Snapshot, the live records. Records purged
// from the Recycle Bin that getDeleted adds at a window's end are not
// counted.
func (s *Source) Count(ctx context.Context, checkpoint string, snapshot bool) (connector.Total, error) {
	resource, where := "/query", ""
	if !snapshot {
		c, err := parseCheckpoint(checkpoint)
		if err != nil {
			return connector.Total{}, err
		}
		if c.Until.IsZero() {
			c.Until = s.now().UTC().Add(-s.settle).Truncate(time.Second)
			if !c.Since.IsZero() && !c.Since.Before(c.Until) {
				return connector.Total{Known: true}, nil
			}
		}
		resource, where = "/queryAll", " WHERE "+strings.Join(s.windowConds(c), " AND ")
	}
	var ans queryAnswer
	q := url.Values{"q": {"SELECT COUNT() FROM " + s.object + where}}
	err := s.c.do(ctx, call{method: http.MethodGet, path: resource, query: q}, &ans)
	if c, _ := parseCheckpoint(checkpoint); !snapshot && s.refusedMillis(err, c) {
		return s.Count(ctx, checkpoint, snapshot)
	}
	if err != nil {
		return connector.Total{}, fmt.Errorf("count %s records: %w", s.object, err)
	}
	return connector.Total{N: int64(ans.TotalSize), Known: true}, nil
}
