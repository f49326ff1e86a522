package mysql

// SetReturning switches INSERT ... RETURNING off or on, so that the
// MySQL path (LAST_INSERT_ID) is tested on MariaDB.
func SetReturning(s *Source, on bool) { s.returning = on }
