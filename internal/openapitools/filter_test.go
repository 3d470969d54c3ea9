package openapitools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const taggedSpec = `openapi: 3.0.3
info: {title: tagged, version: '1'}
servers: [{url: 'http://127.0.0.1:9'}]
paths:
  /repos/{owner}:
    get:
      operationId: repos/get
      tags: [repos]
      summary: Get a repository
      parameters: [{name: owner, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
    delete:
      operationId: repos/delete
      tags: [repos]
      parameters: [{name: owner, in: path, required: true, schema: {type: string}}]
      responses: {'204': {description: gone}}
  /repositories:
    get:
      operationId: repos/list-public
      tags: [repos, public]
      responses: {'200': {description: ok}}
  /issues:
    get:
      operationId: issues/list
      tags: [issues]
      responses: {'200': {description: ok}}
  /meta:
    get:
      operationId: meta/root
      responses: {'200': {description: ok}}
`

func projectTagged(t *testing.T, opts *Options) (*Capability, error) {
	t.Helper()
	fsys := fstest.MapFS{"api.yaml": {Data: []byte(taggedSpec)}}
	return project(t.Context(), fsys, []spec{{name: "api", file: "api.yaml"}}, opts)
}

// exposure is, by operationId, "" for an exposed tool, else the withheld
// code and reason.
func exposure(c *Capability) map[string]string {
	out := map[string]string{}
	for _, tl := range c.Tools {
		out[tl.OperationID] = ""
	}
	for _, w := range c.Withheld {
		out[w.OperationID] = w.Code + ": " + w.Reason
	}
	return out
}

// TestFilters: tag and path filters withhold what they exclude with reason
// FILTERED and a reason naming the option and the tag or prefix, exclusions
// win, paths compare segment by segment, and the other policies still
// apply to what the filters let through.
func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want map[string]string
	}{
		{"include tag", Options{IncludeTags: []string{"repos"}}, map[string]string{
			"repos/get": "", "repos/list-public": "",
			"repos/delete": "WRITES_NOT_ALLOWED: DELETE is not a read-only method; AllowWrites exposes it",
			"issues/list":  "FILTERED: filtered by IncludeTags: its tags (issues) are not included",
			"meta/root":    "FILTERED: filtered by IncludeTags: the operation has no tag",
		}},
		{"exclude tag wins", Options{IncludeTags: []string{"repos"}, ExcludeTags: []string{"public"}, AllowWrites: true}, map[string]string{
			"repos/get": "", "repos/delete": "",
			"repos/list-public": `FILTERED: filtered by ExcludeTags: tagged "public"`,
			"issues/list":       "FILTERED: filtered by IncludeTags: its tags (issues) are not included",
			"meta/root":         "FILTERED: filtered by IncludeTags: the operation has no tag",
		}},
		{"include path by segment", Options{IncludePaths: []string{"/repos"}}, map[string]string{
			"repos/get":         "",
			"repos/delete":      "WRITES_NOT_ALLOWED: DELETE is not a read-only method; AllowWrites exposes it",
			"repos/list-public": "FILTERED: filtered by IncludePaths: its path is under none of the included prefixes",
			"issues/list":       "FILTERED: filtered by IncludePaths: its path is under none of the included prefixes",
			"meta/root":         "FILTERED: filtered by IncludePaths: its path is under none of the included prefixes",
		}},
		{"exclude path", Options{ExcludePaths: []string{"/repos/"}, DenyOperations: []string{"meta_root"}}, map[string]string{
			"repos/get":         "FILTERED: filtered by ExcludePaths: its path is under /repos/",
			"repos/delete":      "FILTERED: filtered by ExcludePaths: its path is under /repos/",
			"repos/list-public": "", "issues/list": "",
			"meta/root": "DENIED: named in DenyOperations",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := projectTagged(t, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(exposure(c), tc.want); diff != "" {
				t.Errorf("exposure (-got +want):\n%s", diff)
			}
			filtered := 0
			for _, w := range c.Withheld {
				if w.Code == WithheldFiltered {
					filtered++
				}
			}
			if filtered > 0 && !slices.ContainsFunc(c.Warnings, func(w string) bool {
				return strings.Contains(w, "by IncludeTags, ExcludeTags, IncludePaths or ExcludePaths")
			}) {
				t.Errorf("no warning counts the %d filtered operation(s): %q", filtered, c.Warnings)
			}
		})
	}
}

// TestFilterRefusals: a tag or a prefix no operation has is refused with
// what is accepted, so a typo never exposes what it meant to hide.
func TestFilterRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"unknown tag", Options{ExcludeTags: []string{"issue"}}, `ExcludeTags: no operation is tagged "issue" (did you mean "issues"?) (tags: issues, public, repos)`},
		{"unknown include tag", Options{IncludeTags: []string{"zzz"}}, `IncludeTags: no operation is tagged "zzz" (tags: issues, public, repos)`},
		{"not a prefix", Options{IncludePaths: []string{"repos"}}, `IncludePaths: "repos" is not a path prefix; want one starting with /`},
		{"no path under it", Options{ExcludePaths: []string{"/repo"}}, `ExcludePaths: no operation's path is under "/repo" (paths are compared segment by segment`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := projectTagged(t, &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "descriptions.yaml")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDescriptionOverrides: a description file replaces the named tools'
// descriptions (the method and path kept as the last line), leaves the
// others, and the tools lock pins the text shown: a server held to a lock
// written without the override withholds the changed tool (DRIFT).
func TestDescriptionOverrides(t *testing.T) {
	file := writeFile(t, "repos/get: |\n  Read one repository of an owner. Use repos/list-public to find names.\n")
	c, err := projectTagged(t, &Options{DescriptionsFile: file})
	if err != nil {
		t.Fatal(err)
	}
	get := c.Tools[slices.IndexFunc(c.Tools, func(tl *Tool) bool { return tl.OperationID == "repos/get" })]
	if want := "Read one repository of an owner. Use repos/list-public to find names.\n\nGET /repos/{owner}"; get.Description != want {
		t.Errorf("description = %q, want %q", get.Description, want)
	}
	if get.Title != "Get a repository" {
		t.Errorf("title = %q: an override changes the description only", get.Title)
	}
	plain, err := projectTagged(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	overridden, err := projectTagged(t, &Options{DescriptionsFile: file})
	if err != nil {
		t.Fatal(err)
	}
	holdToLock(overridden, NewLock(plain), false, false)
	if got := exposure(overridden)["repos/get"]; !strings.HasPrefix(got, WithheldDrift) {
		t.Errorf("repos/get with an override the lock does not pin: %q, want DRIFT", got)
	}
	if got := exposure(overridden)["issues/list"]; got != "" {
		t.Errorf("issues/list, not overridden: %q, want exposed", got)
	}
	if LockDigestOf(c) == LockDigestOf(plain) {
		t.Error("the lock digest does not change with the description shown")
	}
}

func TestDescriptionOverrideRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"unknown operationId", "repos/gett: x\n", `no operation has the operationId "repos/gett" (did you mean "repos/get"?); keys are operationIds as the spec writes them`},
		{"tool name, not operationId", "meta_root: x\n", `no operation has the operationId "meta_root"`},
		{"not a mapping", "- a\n- b\n", "the document root must be a mapping (key: value pairs), got a list); want one mapping from operationId"},
		{"not a string", "repos/get: {a: 1}\n", `"repos/get": the description is not a string`},
		{"empty description", "repos/get: ''\n", `"repos/get": the description is empty; remove the entry`},
		{"too long", "repos/get: " + strings.Repeat("x", MaxDescriptionBytes+1) + "\n", "more than the 4096 a tool description may take"},
		{"empty file", "\n", "the file is empty"},
		{"too large", strings.Repeat("#", MaxDescriptionsBytes+1), "more than 1048576 bytes"},
		{"not YAML", "repos/get: [unclosed\n", "not YAML or JSON"},
		{"alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", "aliases expand to more than 10000 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := projectTagged(t, &Options{DescriptionsFile: writeFile(t, tc.data)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
	_, err := projectTagged(t, &Options{DescriptionsFile: filepath.Join(t.TempDir(), "absent.yaml")})
	if err == nil || !strings.Contains(err.Error(), "DescriptionsFile") {
		t.Errorf("missing file: %v", err)
	}
}

// TestIndex: the index lists every operation in document order, exposed
// or withheld, with its tags, arguments, annotations and withheld reason,
// and names the tool Capability.Tool returns for an exposed one.
func TestIndex(t *testing.T) {
	c, err := projectTagged(t, &Options{ExcludeTags: []string{"issues"}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Method, Path, Code string
		Tags, Args               []string
		ReadOnly                 bool
	}
	var got []row
	for _, e := range c.Index() {
		r := row{Name: e.Name, Method: e.Method, Path: e.Path, Tags: e.Tags, Args: e.Args, ReadOnly: e.Hints.ReadOnly}
		if e.Withheld != nil {
			r.Code = e.Withheld.Code
		} else if tl := c.Tool(e.Name); tl == nil || tl.Description != e.Description {
			t.Errorf("%s: exposed in the index, but Capability.Tool gives %+v", e.Name, tl)
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "repos_get", Method: "GET", Path: "/repos/{owner}", Tags: []string{"repos"}, Args: []string{"owner"}, ReadOnly: true},
		{Name: "repos_delete", Method: "DELETE", Path: "/repos/{owner}", Code: WithheldWritesNotAllowed, Tags: []string{"repos"}, Args: []string{"owner"}},
		{Name: "repos_list-public", Method: "GET", Path: "/repositories", Tags: []string{"repos", "public"}, ReadOnly: true},
		{Name: "issues_list", Method: "GET", Path: "/issues", Code: WithheldFiltered, Tags: []string{"issues"}, ReadOnly: true},
		{Name: "meta_root", Method: "GET", Path: "/meta", ReadOnly: true},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("index (-got +want):\n%s", diff)
	}
}
