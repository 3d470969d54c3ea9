package fleetgraph

import (
	"fmt"
	"slices"
)

// checkInvariants walks the whole snapshot and reports the first place an
// index disagrees with the records. A half-applied batch would break one.
func (s *Snapshot) checkInvariants() error {
	if s.services.len() != s.order.len() {
		return fmt.Errorf("%d services but %d ordered keys", s.services.len(), s.order.len())
	}
	prev := ""
	n := 0
	for k, lower := range s.order.all() {
		if k <= prev && n > 0 {
			return fmt.Errorf("order not sorted at %q", k)
		}
		prev = k
		n++
		if sv := s.service(k); sv == nil {
			return fmt.Errorf("ordered key %q has no service", k)
		} else if sv.lower != lower {
			return fmt.Errorf("ordered key %q has text %q, its service %q", k, lower, sv.lower)
		}
	}
	var acc [32]byte
	revs, tgts := 0, 0
	for k, sv := range s.services.all() {
		if len(sv.revisions)+len(sv.targets) == 0 {
			return fmt.Errorf("service %q is empty", k)
		}
		if keys, _ := s.byName.get(sv.name); !slices.Contains(keys, k) {
			return fmt.Errorf("service %q missing from the name index", k)
		}
		if len(sv.revs) != len(sv.revisions) || len(sv.tgts) != len(sv.targets) {
			return fmt.Errorf("service %q record references are out of step with its keys", k)
		}
		for i, rk := range sv.revisions {
			r := s.revision(rk)
			if r != sv.revs[i] {
				return fmt.Errorf("service %q holds a stale reference to revision %q", k, rk)
			}
			if r == nil || r.ServiceKey() != k {
				return fmt.Errorf("service %q lists revision %q it does not own", k, rk)
			}
		}
		for i, tk := range sv.targets {
			t := s.target(tk)
			if t != sv.tgts[i] {
				return fmt.Errorf("service %q holds a stale reference to target %q", k, tk)
			}
			if t == nil || t.ServiceKey() != k {
				return fmt.Errorf("service %q lists target %q it does not own", k, tk)
			}
		}
		revs += len(sv.revisions)
		tgts += len(sv.targets)
	}
	if revs != s.revisions.len() || tgts != s.targets.len() {
		return fmt.Errorf("services list %d revisions and %d targets, the snapshot holds %d and %d", revs, tgts, s.revisions.len(), s.targets.len())
	}
	for k, e := range s.revisions.all() {
		if e.Key() != k {
			return fmt.Errorf("revision stored under %q has key %q", k, e.Key())
		}
		if keys, _ := s.byDigest.get(e.Digest); !slices.Contains(keys, k) {
			return fmt.Errorf("revision %q missing from the digest index", k)
		}
		xor(&acc, e.hash)
	}
	for k, e := range s.targets.all() {
		if e.Key() != k {
			return fmt.Errorf("target stored under %q has key %q", k, e.Key())
		}
		xor(&acc, e.hash)
	}
	if acc != s.acc {
		return fmt.Errorf("record hashes do not add up to the snapshot's")
	}
	if id := snapshotID(acc, s.sources, s.limitations, s.freshness); id != s.id {
		return fmt.Errorf("snapshot id %s does not match its content (%s)", s.id, id)
	}
	return nil
}
