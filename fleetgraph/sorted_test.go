package fleetgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortedFollowsAMap edits a sorted map in batches big enough to split
// and empty chunks, and checks each committed version, and the versions
// before it, against a plain map: an edit must never change a version it
// was made from.
func TestSortedFollowsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var versions []sorted[int]
	var mirrors []map[string]int
	cur, mirror := sorted[int]{}, map[string]int{}
	for round := range 60 {
		tx := cur.edit()
		next := map[string]int{}
		for k, v := range mirror {
			next[k] = v
		}
		for range rng.IntN(600) {
			k := fmt.Sprintf("k%04d", rng.IntN(2000))
			switch rng.IntN(10) {
			case 0:
				p := k[:3]
				tx.delPrefix(p)
				for mk := range next {
					if strings.HasPrefix(mk, p) {
						delete(next, mk)
					}
				}
			case 1, 2, 3, 4:
				tx.del(k)
				delete(next, k)
			default:
				tx.set(k, round)
				next[k] = round
			}
		}
		cur, mirror = tx.commit(), next
		versions, mirrors = append(versions, cur), append(mirrors, mirror)
		for i, v := range versions {
			checkSorted(t, fmt.Sprintf("round %d version %d", round, i), v, mirrors[i])
		}
	}
}

func checkSorted(t *testing.T, name string, s sorted[int], want map[string]int) {
	t.Helper()
	keys := slices.Sorted(mapKeys(want))
	var got []string
	for k, v := range s.all() {
		got = append(got, k)
		if want[k] != v {
			t.Fatalf("%s: %s = %d, want %d", name, k, v, want[k])
		}
	}
	if diff := cmp.Diff(got, keys); diff != "" || s.len() != len(keys) {
		t.Fatalf("%s: len %d, keys (-got +want):\n%s", name, s.len(), diff)
	}
	for _, c := range s.chunks {
		if len(c.keys) == 0 || len(c.keys) > 2*chunkSize || len(c.keys) != len(c.vals) {
			t.Fatalf("%s: chunk of %d keys, %d values", name, len(c.keys), len(c.vals))
		}
	}
	// seek lands on the first key >= k from any earlier position.
	sc := s.scan()
	for _, probe := range []string{"", "k0100", "k0100x", "k0999", "k1500", "k1999", "k2"} {
		sc.seek(probe)
		i, _ := slices.BinarySearch(keys, probe)
		if i == len(keys) {
			if sc.valid() {
				t.Fatalf("%s: seek %q found %q past the end", name, probe, sc.key())
			}
			continue
		}
		if !sc.valid() || sc.key() != keys[i] {
			t.Fatalf("%s: seek %q: valid %v, want %q", name, probe, sc.valid(), keys[i])
		}
	}
}
