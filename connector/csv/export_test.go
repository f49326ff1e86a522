package csv

import "github.com/syncd-io/syncd/connector"

// SetExactScanMax makes Count estimate files larger than n bytes.
func SetExactScanMax(src connector.Source, n int64) { src.(*Source).exactScanMax = n }
