//go:build !unix

package state

import (
	"os"
	"time"
)

// lockShared does nothing where bbolt's lock is not flock(2): checkFile
// reads the file unlocked.
func lockShared(*os.File, time.Duration) error { return nil }
