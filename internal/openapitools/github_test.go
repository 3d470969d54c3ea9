package openapitools

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubepact/kubepact/test/largeapi"
)

// githubFS is a bundle of GitHub's REST spec, or a skip.
func githubFS(tb testing.TB) fstest.MapFS {
	tb.Helper()
	fsys := fstest.MapFS{}
	for name, data := range largeapi.GitHubBundle(tb) {
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

var githubOnce struct {
	sync.Once
	c   *Capability
	err error
}

// githubCapability projects GitHub's spec once per test binary, writes
// allowed.
func githubCapability(tb testing.TB) *Capability {
	tb.Helper()
	fsys := githubFS(tb)
	githubOnce.Do(func() {
		githubOnce.c, githubOnce.err = project(tb.Context(), fsys, []spec{{name: "api", file: "openapi.json"}}, &Options{AllowWrites: true})
	})
	if githubOnce.err != nil {
		tb.Fatal(githubOnce.err)
	}
	return githubOnce.c
}

func namesByOperation(c *Capability) map[string]string {
	out := map[string]string{}
	for _, t := range c.Tools {
		out[t.Method+" "+t.Path] = t.Name
	}
	for _, w := range c.Withheld {
		out[w.Method+" "+w.Path] = w.Name
	}
	return out
}

// TestGitHubNames: on GitHub's spec every name is within the cap (64 by
// default, and 60 when asked), unique, and the same whichever other
// operations the document holds: a document with half GitHub's paths
// names the common operations as the whole one does.
func TestGitHubNames(t *testing.T) {
	c := githubCapability(t)
	whole := namesByOperation(c)
	if len(whole) < 1000 {
		t.Fatalf("%d operations; GitHub's spec has over 1,200", len(whole))
	}
	var shortened []string
	seen := map[string]bool{}
	for _, t2 := range c.Tools {
		if len(t2.Name) > DefaultNameCap {
			t.Errorf("%s is %d characters; the cap is %d", t2.Name, len(t2.Name), DefaultNameCap)
		}
		if seen[t2.Name] {
			t.Errorf("%s is given twice", t2.Name)
		}
		seen[t2.Name] = true
		if id := strings.ReplaceAll(t2.OperationID, "/", "_"); id != t2.Name {
			shortened = append(shortened, id+" → "+t2.Name)
		}
	}
	sort.Strings(shortened)
	t.Logf("%d of %d names abbreviated to fit %d, e.g.:\n%s", len(shortened), len(c.Tools), DefaultNameCap, strings.Join(shortened[:min(5, len(shortened))], "\n"))
	if len(shortened) < 20 {
		t.Errorf("%d names abbreviated; GitHub has 25 operationIds over 64 characters", len(shortened))
	}

	// Half the paths, and a cap of 60.
	var doc map[string]any
	if err := json.Unmarshal(githubFS(t)["openapi.json"].Data, &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range paths {
			if !yield(k) {
				return
			}
		}
	})
	for i, k := range keys {
		if i%2 == 0 {
			delete(paths, k)
		}
	}
	half, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"openapi.json": &fstest.MapFile{Data: half}}
	sub, err := project(t.Context(), fsys, []spec{{name: "api", file: "openapi.json"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	common := 0
	for op, name := range namesByOperation(sub) {
		common++
		if whole[op] != name {
			t.Errorf("%s is %q in the whole document and %q in half of it", op, whole[op], name)
		}
	}
	if common < 400 {
		t.Errorf("only %d operations in half the document", common)
	}
	// A filter does not rename either.
	filtered, err := project(t.Context(), githubFS(t), []spec{{name: "api", file: "openapi.json"}}, &Options{AllowOperations: []string{c.Tools[0].Name, c.Tools[len(c.Tools)-1].Name}})
	if err != nil {
		t.Fatal(err)
	}
	for op, name := range namesByOperation(filtered) {
		if whole[op] != name {
			t.Errorf("%s is %q unfiltered and %q with an allow list", op, whole[op], name)
		}
	}
	capped, err := project(t.Context(), githubFS(t), []spec{{name: "api", file: "openapi.json"}}, &Options{AllowWrites: true, MaxNameLength: 60})
	if err != nil {
		t.Fatal(err)
	}
	over := 0
	for _, t2 := range capped.Tools {
		if len(t2.Name) > 60 {
			t.Errorf("%s is %d characters; the cap is 60", t2.Name, len(t2.Name))
		}
		if len(t2.Name) > 50 {
			over++
		}
	}
	t.Logf("cap 60: %d tools, %d of them over 50 characters", len(capped.Tools), over)
}

// githubTasks are what an agent would be asked to do with GitHub's API,
// in words a person would use (not the operations' summaries), each with
// the operationId that does it.
var githubTasks = []struct{ task, want string }{
	{"list the open pull requests of a repository", "pulls/list"},
	{"open a new issue in a repo", "issues/create"},
	{"get details about a repository", "repos/get"},
	{"list the issues of a repository", "issues/list-for-repo"},
	{"which repositories do I have", "repos/list-for-authenticated-user"},
	{"open a pull request from my branch", "pulls/create"},
	{"merge a pull request", "pulls/merge"},
	{"comment on an issue", "issues/create-comment"},
	{"create a new repository for me", "repos/create-for-authenticated-user"},
	{"delete a repository", "repos/delete"},
	{"who am I: the signed-in user's profile", "users/get-authenticated"},
	{"look up a user by their username", "users/get-by-username"},
	{"list branches of a repo", "repos/list-branches"},
	{"get one branch of a repository", "repos/get-branch"},
	{"read a file from a repository", "repos/get-content"},
	{"create or update a file in a repository", "repos/create-or-update-file-contents"},
	{"list the commits of a repository", "repos/list-commits"},
	{"get a single commit", "repos/get-commit"},
	{"list workflow runs of a repository", "actions/list-workflow-runs-for-repo"},
	{"re-run a workflow run", "actions/re-run-workflow"},
	{"list the workflows of a repository", "actions/list-repo-workflows"},
	{"trigger a workflow dispatch event", "actions/create-workflow-dispatch"},
	{"set a repository secret for actions", "actions/create-or-update-repo-secret"},
	{"publish a release", "repos/create-release"},
	{"list releases of a repository", "repos/list-releases"},
	{"get the latest release", "repos/get-latest-release"},
	{"add labels to an issue", "issues/add-labels"},
	{"list the labels of a repository", "issues/list-labels-for-repo"},
	{"close or edit an issue", "issues/update"},
	{"list the files changed in a pull request", "pulls/list-files"},
	{"review a pull request", "pulls/create-review"},
	{"ask someone to review a pull request", "pulls/request-reviewers"},
	{"list collaborators of a repository", "repos/list-collaborators"},
	{"add a collaborator to a repository", "repos/add-collaborator"},
	{"list the members of an organization", "orgs/list-members"},
	{"list the teams of an organization", "teams/list"},
	{"star a repository", "activity/star-repo-for-authenticated-user"},
	{"repositories I starred", "activity/list-repos-starred-by-authenticated-user"},
	{"follow a user", "users/follow"},
	{"create a gist", "gists/create"},
	{"search repositories by keyword", "search/repos"},
	{"search issues and pull requests", "search/issues-and-pull-requests"},
	{"search code", "search/code"},
	{"create a webhook on a repository", "repos/create-webhook"},
	{"fork a repository", "repos/create-fork"},
	{"get the branch protection rules of a branch", "repos/get-branch-protection"},
	{"list check runs for a commit ref", "checks/list-for-ref"},
	{"list deployments of a repository", "repos/list-deployments"},
	{"how much of my rate limit is left", "rate-limit/get"},
	{"get an organization", "orgs/get"},
	{"list the repositories of an organization", "repos/list-for-org"},
	{"list milestones of a repository", "issues/list-milestones"},
	{"list the tags of a repository", "repos/list-tags"},
	{"who contributed to a repository", "repos/list-contributors"},
	{"get the README of a repository", "repos/get-readme"},
	{"compare two commits", "repos/compare-commits"},
	{"list Dependabot alerts of a repository", "dependabot/list-alerts-for-repo"},
	{"list code scanning alerts of a repository", "code-scanning/list-alerts-for-repo"},
	{"which programming languages does a repository use", "repos/list-languages"},
	{"delete a file in a repository", "repos/delete-file"},
	{"list the comments on an issue", "issues/list-comments"},
	{"add a reaction to an issue", "reactions/create-for-issue"},
	{"set a commit status", "repos/create-commit-status"},
	{"render markdown to HTML", "markdown/render"},
	{"get the license of a repository", "licenses/get-for-repo"},
	{"download the logs of a job", "actions/download-job-logs-for-workflow-run"},
}

// TestGitHubRetrieval runs every task through Search and counts how often
// the expected operation is among the first three hits. It fails below a
// floor of 75% (80% measured when it was written); the rate itself is
// logged (the aim is 90%).
func TestGitHubRetrieval(t *testing.T) {
	if len(githubTasks) < 50 {
		t.Fatalf("%d tasks; the retrieval benchmark has at least 50", len(githubTasks))
	}
	c := githubCapability(t)
	top1, top3 := 0, 0
	var misses []string
	for _, task := range githubTasks {
		res := c.Search(Query{Text: task.task, Limit: 3})
		rank := slices.IndexFunc(res.Hits, func(h Hit) bool { return h.OperationID == task.want })
		switch {
		case rank == 0:
			top1++
			top3++
		case rank > 0:
			top3++
		default:
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.OperationID)
			}
			misses = append(misses, fmt.Sprintf("%q: want %s, got %s", task.task, task.want, strings.Join(got, ", ")))
		}
	}
	n := len(githubTasks)
	t.Logf("retrieval on GitHub's spec: %d tasks, top-1 %d (%.0f%%), top-3 %d (%.0f%%)", n, top1, 100*float64(top1)/float64(n), top3, 100*float64(top3)/float64(n))
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	if float64(top3) < 0.75*float64(n) {
		t.Errorf("top-3 hit rate %d/%d is under the 75%% floor", top3, n)
	}
}

// BenchmarkGitHubSearch measures one search over GitHub's 1,223
// operations (the index already built), cycling through the retrieval
// tasks; it reports the median as p50-µs.
func BenchmarkGitHubSearch(b *testing.B) {
	c := githubCapability(b)
	c.Search(Query{Text: "warm up"})
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		c.Search(Query{Text: githubTasks[i%len(githubTasks)].task, Limit: 10})
		took = append(took, time.Since(start))
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
}

// BenchmarkGitHubIndex measures building the search index of GitHub's
// spec, which a server does once per bundle.
func BenchmarkGitHubIndex(b *testing.B) {
	c := githubCapability(b)
	for b.Loop() {
		buildIndex(c)
	}
}

// githubHeldOut are tasks written after the ranking and its synonym list
// were tuned on githubTasks, and never tuned on: their hit rate is the
// honest one.
var githubHeldOut = []struct{ task, want string }{
	{"who can be assigned to issues in a repository", "issues/list-assignees"},
	{"assign people to an issue", "issues/add-assignees"},
	{"rename a repository or change its description", "repos/update"},
	{"cancel a running workflow", "actions/cancel-workflow-run"},
	{"list the jobs of a workflow run", "actions/list-jobs-for-workflow-run"},
	{"list build artifacts of a repository", "actions/list-artifacts-for-repo"},
	{"list self-hosted runners of a repository", "actions/list-self-hosted-runners-for-repo"},
	{"read a git blob", "git/get-blob"},
	{"merge one branch into another", "repos/merge"},
	{"my unread notifications", "activity/list-notifications-for-authenticated-user"},
	{"mark all notifications as read", "activity/mark-notifications-as-read"},
	{"who follows me", "users/list-followers-for-authenticated-user"},
	{"list my email addresses", "users/list-emails-for-authenticated-user"},
	{"add an SSH key to my account", "users/create-public-ssh-key-for-authenticated-user"},
	{"invite someone to an organization", "orgs/create-invitation"},
	{"remove a label from an issue", "issues/remove-label"},
	{"change the title of a pull request", "pulls/update"},
	{"list the commits of a pull request", "pulls/list-commits"},
	{"how many people viewed a repository", "repos/get-views"},
	{"get a gist", "gists/get"},
	{"download a repository as a tarball", "repos/download-tarball-archive"},
	{"list the assets of a release", "repos/list-release-assets"},
	{"dismiss a pull request review", "pulls/dismiss-review"},
	{"transfer a repository to another owner", "repos/transfer"},
	{"get the topics of a repository", "repos/get-all-topics"},
}

// TestGitHubRetrievalHeldOut reports the held-out tasks' hit rates; it
// fails only below 60%, well under what it measured (it is a report
// more than a gate: these tasks must stay untuned).
func TestGitHubRetrievalHeldOut(t *testing.T) {
	c := githubCapability(t)
	top1, top3 := 0, 0
	for _, task := range githubHeldOut {
		res := c.Search(Query{Text: task.task, Limit: 3})
		rank := slices.IndexFunc(res.Hits, func(h Hit) bool { return h.OperationID == task.want })
		if rank == 0 {
			top1++
		}
		if rank >= 0 {
			top3++
		} else {
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.OperationID)
			}
			t.Logf("miss: %q: want %s, got %s", task.task, task.want, strings.Join(got, ", "))
		}
	}
	n := len(githubHeldOut)
	t.Logf("held-out retrieval on GitHub's spec: %d tasks, top-1 %d (%.0f%%), top-3 %d (%.0f%%)", n, top1, 100*float64(top1)/float64(n), top3, 100*float64(top3)/float64(n))
	if float64(top3) < 0.6*float64(n) {
		t.Errorf("held-out top-3 hit rate %d/%d is under 60%%", top3, n)
	}
}
