package fleetgraph

// CheckInvariants verifies the snapshot's internal consistency: every index
// agrees with the records. It is O(fleet), and only this package's tests
// (internal and external) can call it.
func (s *Snapshot) CheckInvariants() error {
	return s.checkInvariants()
}

// ServiceNumber is the number the snapshot gives the service key (ids.go),
// -1 when it holds no such service.
func (s *Snapshot) ServiceNumber(key string) int {
	if sv := s.service(key); sv != nil {
		return int(sv.id)
	}
	return -1
}
