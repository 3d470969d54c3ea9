package fleetgraph

// CheckInvariants verifies the snapshot's internal consistency: every index
// agrees with the records. It is O(fleet), and only this package's tests
// (internal and external) can call it.
func (s *Snapshot) CheckInvariants() error {
	return s.checkInvariants()
}
