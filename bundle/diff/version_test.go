package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A version bump is judged against what the revision really changes: a
// number that announces compatibility is never called compatible when a
// change breaks consumers.
func TestJudgeBump(t *testing.T) {
	removal := []Change{{Path: "interfaces.http.operations.POST /x", Kind: "removed", Classification: Breaking}}
	maybe := []Change{{Path: "interfaces.http.spec", Kind: "changed", Classification: PotentiallyBreaking}}
	added := []Change{{Path: "interfaces.http.operations.GET /y", Kind: "added", Classification: NonBreaking}}
	tests := []struct {
		name      string
		o, n      string
		changes   []Change
		want      Bump
		says      string // a phrase of Message
		entry     string // the service.version entry's classification, "" for none
		entryKind string
	}{
		{"minor with a removal", "3.0.2", "3.1.0", removal,
			Bump{Kind: BumpMinor, BreakingWithoutMajor: true, SuggestedVersion: "4.0.0"}, "breaking change without a major version bump", Breaking, "changed"},
		{"patch with a removal", "3.0.2", "3.0.3", removal,
			Bump{Kind: BumpPatch, BreakingWithoutMajor: true, SuggestedVersion: "4.0.0"}, "release it as 4.0.0", Breaking, "changed"},
		{"unchanged version with a removal", "3.0.2", "3.0.2", removal,
			Bump{Kind: BumpNone, BreakingWithoutMajor: true, SuggestedVersion: "4.0.0"}, "the version stays 3.0.2", Breaking, "unchanged"},
		{"major with a removal", "3.0.2", "4.0.0", removal,
			Bump{Kind: BumpMajor, AnnouncesBreaking: true}, "will not pick it up until they widen their range", PotentiallyBreaking, "changed"},
		{"major with nothing breaking", "3.0.2", "4.0.0", added,
			Bump{Kind: BumpMajor, AnnouncesBreaking: true}, "although none is found", PotentiallyBreaking, "changed"},
		{"minor below 1.0.0 is major", "0.3.1", "0.4.0", removal,
			Bump{Kind: BumpMajor, AnnouncesBreaking: true}, "below 1.0.0", PotentiallyBreaking, "changed"},
		{"patch below 1.0.0 with a removal", "0.3.1", "0.3.2", removal,
			Bump{Kind: BumpPatch, BreakingWithoutMajor: true, SuggestedVersion: "0.4.0"}, "release it as 0.4.0", Breaking, "changed"},
		{"out of a prerelease", "4.0.0-rc.1", "4.0.0", removal,
			Bump{Kind: BumpPrerelease, AnnouncesBreaking: true}, "prerelease", PotentiallyBreaking, "changed"},
		{"compatible minor", "3.0.2", "3.1.0", added,
			Bump{Kind: BumpMinor}, "compatible, as it announces", NonBreaking, "changed"},
		{"minor with a change that may break", "3.0.2", "3.1.0", maybe,
			Bump{Kind: BumpMinor}, "may break consumers", PotentiallyBreaking, "changed"},
		{"downgrade with a removal", "3.1.0", "3.0.5", removal,
			Bump{Kind: BumpDowngrade, BreakingWithoutMajor: true, SuggestedVersion: "4.0.0"}, "goes backwards", Breaking, "changed"},
		{"not semver with a removal", "three", "four", removal,
			Bump{Kind: BumpNotSemver, BreakingWithoutMajor: true}, "not semantic versioning", Breaking, "changed"},
		{"not semver", "three", "four", added,
			Bump{Kind: BumpNotSemver}, "not semantic versioning", PotentiallyBreaking, "changed"},
		{"nothing", "3.0.2", "3.0.2", added, Bump{Kind: BumpNone}, "no change is breaking", "", ""},
		{"the version's own entry is not counted", "3.0.2", "3.1.0", []Change{{Path: "service.version", Classification: Breaking}},
			Bump{Kind: BumpMinor}, "compatible, as it announces", NonBreaking, "changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JudgeBump(tt.o, tt.n, tt.changes)
			if !strings.Contains(got.Message, tt.says) {
				t.Errorf("message %q lacks %q", got.Message, tt.says)
			}
			got.Message = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("JudgeBump(%s, %s) (-want +got):\n%s", tt.o, tt.n, diff)
			}
			if got.BreakingWithoutMajor == false && strings.Contains(JudgeBump(tt.o, tt.n, tt.changes).Message, "breaking change without") {
				t.Error("the message flags what the bump does not")
			}
			c, ok := versionChange(tt.o, tt.n, tt.changes)
			switch {
			case tt.entry == "" && ok:
				t.Errorf("a service.version entry %+v, want none", c)
			case tt.entry != "" && (!ok || c.Classification != tt.entry || c.Kind != tt.entryKind):
				t.Errorf("service.version entry %+v (listed %v), want %s %s", c, ok, tt.entryKind, tt.entry)
			}
			var others []Change
			for _, ch := range tt.changes {
				if ch.Path != versionPath {
					others = append(others, ch)
				}
			}
			if ok && c.Classification == NonBreaking && Classification(others) == Breaking {
				t.Errorf("the bump is called compatible while a change is breaking: %+v", c)
			}
		})
	}
}
