package mysql

// SetReturning switches INSERT ... RETURNING off or on, so that the
// MySQL path (LAST_INSERT_ID) is tested on MariaDB.
func SetReturning(s *Source, on bool) { s.returning = on }

// ReplicationConn returns the server's id of the replication connection
// of the pass in progress (0 between passes) and how many the source
// opened so far.
func ReplicationConn(s *Source) (id uint32, opened int) {
	s.binlog.mu.Lock()
	defer s.binlog.mu.Unlock()
	return s.binlog.connID, s.binlog.opened
}
