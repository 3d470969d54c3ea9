package openapitools

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTagsWithoutIndex: Tags counts what the search index counts, exposed
// and withheld operations alike, without building the index.
func TestTagsWithoutIndex(t *testing.T) {
	check := func(t *testing.T, c *Capability) {
		t.Helper()
		got := c.Tags()
		want := (&Capability{Tools: c.Tools, Withheld: c.Withheld, texts: c.texts}).Tags() // no lazyIndex: from the index
		if len(want) == 0 {
			t.Fatal("no tags: the check checks nothing")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Tags (-index +counted):\n%s", diff)
		}
	}
	t.Run("tagged", func(t *testing.T) {
		// repos/delete is withheld (no AllowWrites); meta/root has no tag.
		c, err := projectTagged(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Withheld) == 0 {
			t.Fatal("nothing withheld")
		}
		check(t, c)
		if want := []TagCount{{"repos", 3}, {"issues", 1}, {"public", 1}}; !cmp.Equal(c.Tags(), want) {
			t.Errorf("Tags = %v, want %v", c.Tags(), want)
		}
	})
	t.Run("github", func(t *testing.T) { check(t, githubCapability(t)) })
}
