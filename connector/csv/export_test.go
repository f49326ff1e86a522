package csv

import "github.com/syncd-io/syncd/connector"

// SetCountLimits makes Count estimate files larger than exact bytes from
// their first sample bytes.
func SetCountLimits(src connector.Source, exact, sample int64) {
	s := src.(*Source)
	s.exactScanMax, s.sampleSize = exact, sample
}
