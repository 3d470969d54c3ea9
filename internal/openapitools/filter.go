package openapitools

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/didyoumean"
	"github.com/kubepact/kubepact/internal/openapischema"
)

// WithheldFiltered is the reason of an operation withheld by a tag or path
// filter (IncludeTags, ExcludeTags, IncludePaths, ExcludePaths).
const WithheldFiltered = "FILTERED"

// Bounds on a description overrides file (Options.DescriptionsFile).
const (
	// MaxDescriptionsBytes bounds the file.
	MaxDescriptionsBytes = 1 << 20
	// MaxDescriptionBytes bounds one description, as the projection bounds
	// the ones it writes.
	MaxDescriptionBytes = 4096
)

// filters is the tag and path policy of one projection, normalised.
type filters struct {
	includeTags, excludeTags   map[string]bool
	includePaths, excludePaths []string
}

func newFilters(o *Options) filters {
	return filters{
		includeTags: setOf(o.IncludeTags), excludeTags: setOf(o.ExcludeTags),
		includePaths: cleanPrefixes(o.IncludePaths), excludePaths: cleanPrefixes(o.ExcludePaths),
	}
}

func cleanPrefixes(list []string) []string {
	var out []string
	for _, p := range list {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// underPrefix reports whether pth is prefix or lies under it, segment by
// segment: /repos holds /repos and /repos/{owner}, not /repositories. A
// prefix ending in / holds only what lies under it.
func underPrefix(pth, prefix string) bool {
	if !strings.HasPrefix(pth, prefix) {
		return false
	}
	return len(pth) == len(prefix) || strings.HasSuffix(prefix, "/") || pth[len(prefix)] == '/'
}

// reason says why op is filtered out; empty when it is not. An exclusion
// wins over an inclusion; tags are compared as written.
func (f filters) reason(op *operation) string {
	for _, t := range op.tags {
		if f.excludeTags[t] {
			return fmt.Sprintf("filtered by ExcludeTags: tagged %q", t)
		}
	}
	for _, p := range f.excludePaths {
		if underPrefix(op.path, p) {
			return fmt.Sprintf("filtered by ExcludePaths: its path is under %s", p)
		}
	}
	if len(f.includeTags) > 0 && !slices.ContainsFunc(op.tags, func(t string) bool { return f.includeTags[t] }) {
		if len(op.tags) == 0 {
			return "filtered by IncludeTags: the operation has no tag"
		}
		return fmt.Sprintf("filtered by IncludeTags: its tags (%s) are not included", strings.Join(op.tags, ", "))
	}
	if len(f.includePaths) > 0 && !slices.ContainsFunc(f.includePaths, func(p string) bool { return underPrefix(op.path, p) }) {
		return "filtered by IncludePaths: its path is under none of the included prefixes"
	}
	return ""
}

// checkFilters refuses a tag or path prefix that no operation has: a typo
// in an exclusion must not expose what it meant to hide, nor one in an
// inclusion hide everything.
func (p *projector) checkFilters(all []*operation) error {
	tags := map[string]bool{}
	for _, op := range all {
		for _, t := range op.tags {
			tags[t] = true
		}
	}
	for field, list := range map[string][]string{"IncludeTags": p.opts.IncludeTags, "ExcludeTags": p.opts.ExcludeTags} {
		for _, t := range list {
			if t = strings.TrimSpace(t); t != "" && !tags[t] {
				return fmt.Errorf("%s: no operation is tagged %q%s (tags: %s)", field, t, suggest(t, tags), bounded(openapischema.SortedKeys(tags)))
			}
		}
	}
	for field, list := range map[string][]string{"IncludePaths": p.opts.IncludePaths, "ExcludePaths": p.opts.ExcludePaths} {
		for _, pre := range cleanPrefixes(list) {
			if !strings.HasPrefix(pre, "/") {
				return fmt.Errorf("%s: %q is not a path prefix; want one starting with /, as the spec's paths do (e.g. /repos)", field, pre)
			}
			if !slices.ContainsFunc(all, func(op *operation) bool { return underPrefix(op.path, pre) }) {
				return fmt.Errorf("%s: no operation's path is under %q (paths are compared segment by segment: /repos holds /repos/{owner}, not /repositories)", field, pre)
			}
		}
	}
	return nil
}

// suggest is ` (did you mean "x"?)` for the known name nearest to name.
func suggest(name string, known map[string]bool) string {
	if near := didyoumean.Nearest(name, openapischema.SortedKeys(known)); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// bounded joins names, at most 40 of them: an error names what is
// accepted without repeating a whole API.
func bounded(names []string) string {
	if len(names) > 40 {
		return strings.Join(names[:40], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return orNone(names)
}

// readDescriptions reads a description overrides file: one mapping (YAML
// or JSON) from operationId to the description the tool shows instead of
// the spec's summary and description.
func readDescriptions(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("DescriptionsFile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDescriptionsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("DescriptionsFile %s: %w", file, err)
	}
	if len(data) > MaxDescriptionsBytes {
		return nil, fmt.Errorf("DescriptionsFile %s: more than %d bytes; a description overrides file holds at most that", file, MaxDescriptionsBytes)
	}
	const want = "want one mapping from operationId to a description string, e.g. `repos/get: Get one repository by owner and name.`"
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("DescriptionsFile %s: the file is empty; %s", file, want)
	}
	tree, err := contract.DecodeGenericLimit(data, MaxDescriptionsBytes)
	if err != nil {
		return nil, fmt.Errorf("DescriptionsFile %s: not YAML or JSON (%s); %s", file, firstLine(err.Error()), want)
	}
	m, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("DescriptionsFile %s: the document is not a mapping; %s", file, want)
	}
	out := make(map[string]string, len(m))
	for _, id := range openapischema.SortedKeys(m) {
		s, ok := m[id].(string)
		switch {
		case !ok:
			return nil, fmt.Errorf("DescriptionsFile %s: %q: the description is not a string; %s", file, id, want)
		case strings.TrimSpace(s) == "":
			return nil, fmt.Errorf("DescriptionsFile %s: %q: the description is empty; remove the entry to keep the spec's", file, id)
		case len(s) > MaxDescriptionBytes:
			return nil, fmt.Errorf("DescriptionsFile %s: %q: the description is %d bytes, more than the %d a tool description may take", file, id, len(s), MaxDescriptionBytes)
		case !utf8.ValidString(s):
			return nil, fmt.Errorf("DescriptionsFile %s: %q: the description is not UTF-8 text", file, id)
		}
		out[id] = strings.TrimSpace(s)
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// applyDescriptions replaces the descriptions of the operations the
// overrides name, and refuses an operationId no operation has. The method
// and path stay the description's last line, as projection writes it.
func applyDescriptions(all []*operation, overrides map[string]string, file string) error {
	ids := map[string]bool{}
	for _, op := range all {
		if op.operationID != "" {
			ids[op.operationID] = true
		}
	}
	for _, id := range openapischema.SortedKeys(overrides) {
		if !ids[id] {
			return fmt.Errorf("DescriptionsFile %s: no operation has the operationId %q%s; keys are operationIds as the spec writes them", file, id, suggest(id, ids))
		}
	}
	for _, op := range all {
		if d, ok := overrides[op.operationID]; ok && op.operationID != "" {
			op.description = d + "\n\n" + op.method + " " + op.path
		}
	}
	return nil
}
