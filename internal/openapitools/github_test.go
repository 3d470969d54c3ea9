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
// floor of 92% (80% measured when it was written, 94% after the second
// tuning); the rate itself is logged (the aim is 90%).
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
	if float64(top3) < 0.92*float64(n) {
		t.Errorf("top-3 hit rate %d/%d is under the 92%% floor", top3, n)
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
// fails below 92% (76% when written, 96% after the second tuning, which
// looked at its misses: set 3 is the untouched one).
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
	if float64(top3) < 0.92*float64(n) {
		t.Errorf("held-out top-3 hit rate %d/%d is under 92%%", top3, n)
	}
}

// githubHeldOut2 is a second held-out set, written (and committed on its
// own) before the ranker was tuned a second time, and never tuned on.
// Its tasks spread over GitHub's areas in the words an agent would use;
// a task lists more than one operation only when they do the task
// equally well (the comment says why).
var githubHeldOut2 = []struct {
	task string
	want []string
}{
	{"delete a comment someone left on an issue", []string{"issues/delete-comment"}},
	{"lock an issue so no one can comment", []string{"issues/lock"}},
	// pulls/get answers it too: its merged field.
	{"has this pull request been merged", []string{"pulls/check-if-merged", "pulls/get"}},
	{"list the line comments on a pull request's diff", []string{"pulls/list-review-comments"}},
	{"bring a pull request branch up to date with its base", []string{"pulls/update-branch"}},
	{"create a new branch", []string{"git/create-ref"}},
	{"delete a branch", []string{"git/delete-ref"}},
	{"rename a branch", []string{"repos/rename-branch"}},
	{"get the file tree of a commit", []string{"git/get-tree"}},
	{"list the deployment environments of a repository", []string{"repos/get-all-environments"}},
	{"deploy a ref to an environment", []string{"repos/create-deployment"}},
	{"mark a deployment as successful", []string{"repos/create-deployment-status"}},
	{"list the Actions variables of a repository", []string{"actions/list-repo-variables"}},
	{"delete a build artifact", []string{"actions/delete-artifact"}},
	{"list the runs of one workflow", []string{"actions/list-workflow-runs"}},
	{"create a check run for a commit", []string{"checks/create"}},
	{"list secret scanning alerts for a repository", []string{"secret-scanning/list-alerts-for-repo"}},
	{"list the packages published by an organization", []string{"packages/list-packages-for-organization"}},
	{"list the installations of my GitHub App", []string{"apps/list-installations"}},
	{"get an installation access token", []string{"apps/create-installation-access-token"}},
	// The legacy team endpoint does the same by team id.
	{"which repositories can a team access", []string{"teams/list-repos-in-org", "teams/list-repos-legacy"}},
	// Three endpoints add a user to a team: the current one and two legacy ones.
	{"add someone to a team", []string{"teams/add-or-update-membership-for-user-in-org", "teams/add-or-update-membership-for-user-legacy", "teams/add-member-legacy"}},
	{"kick a member out of an organization", []string{"orgs/remove-member", "orgs/remove-membership-for-user"}},
	// Memberships list the same organizations, with the role in each.
	{"which organizations am I in", []string{"orgs/list-for-authenticated-user", "orgs/list-memberships-for-authenticated-user"}},
	{"star a gist", []string{"gists/star"}},
	{"unstar a repository", []string{"activity/unstar-repo-for-authenticated-user"}},
	{"watch a repository for notifications", []string{"activity/set-repo-subscription"}},
	{"recent activity events in a repository", []string{"activity/list-repo-events"}},
	{"who starred a repository", []string{"activity/list-stargazers-for-repo"}},
	{"block a user", []string{"users/block"}},
	{"find users by name or location", []string{"search/users"}},
	{"search commits by message", []string{"search/commits"}},
	{"list the emojis available on GitHub", []string{"emojis/get"}},
	{"get the .gitignore template for Go", []string{"gitignore/get-template"}},
	{"GitHub's IP address ranges", []string{"meta/get"}},
	// Participation stats are the weekly commit counts too.
	{"weekly commit activity of a repository", []string{"repos/get-commit-activity-stats", "repos/get-participation-stats"}},
	{"pending invitations to collaborate on a repository", []string{"repos/list-invitations"}},
	{"accept an invitation to a repository", []string{"repos/accept-invitation-for-authenticated-user"}},
	{"list the deploy keys of a repository", []string{"repos/list-deploy-keys"}},
	{"create a milestone in a repository", []string{"issues/create-milestone"}},
	{"create a new label", []string{"issues/create-label"}},
	{"timeline of everything that happened on an issue", []string{"issues/list-events-for-timeline"}},
	{"list my codespaces", []string{"codespaces/list-for-authenticated-user"}},
	{"dismiss a Dependabot alert", []string{"dependabot/update-alert"}},
	{"limit who can comment in a repository for a while", []string{"interactions/set-restrictions-for-repo"}},
	{"which pull requests contain this commit", []string{"repos/list-pull-requests-associated-with-commit"}},
	{"list the public repositories of a user", []string{"repos/list-for-user"}},
	{"combined CI status of a commit", []string{"repos/get-combined-status-for-ref"}},
	{"generate release notes for a new release", []string{"repos/generate-release-notes"}},
	{"replace the topics of a repository", []string{"repos/replace-all-topics"}},
	{"get a user's public SSH keys", []string{"users/list-public-keys-for-user"}},
	{"create a commit object with the git data API", []string{"git/create-commit"}},
	{"get a code scanning alert", []string{"code-scanning/get-alert"}},
}

// TestGitHubRetrievalHeldOut2 reports the second held-out set's hit
// rates; it fails below 82% (75% when written, 85% after tuning).
func TestGitHubRetrievalHeldOut2(t *testing.T) {
	heldOutRates(t, "held-out set 2", githubHeldOut2, 0.82)
}

// githubHeldOut3 is a third held-out set, written (and committed on its
// own) midway through the second tuning, once set 2's misses had been
// seen while tuning: its rate is the one no change was made for. As in
// set 2, a task lists more than one operation only when they do it
// equally well.
var githubHeldOut3 = []struct {
	task string
	want []string
}{
	{"list the comments on a gist", []string{"gists/list-comments"}},
	{"delete a gist", []string{"gists/delete"}},
	{"edit one of my review comments on a pull request", []string{"pulls/update-review-comment"}},
	{"reply to a review comment on a pull request", []string{"pulls/create-reply-for-review-comment"}},
	{"see all reviews left on a pull request", []string{"pulls/list-reviews"}},
	{"reopen a closed issue", []string{"issues/update"}},
	// Both list what happened to one issue; the timeline holds more kinds.
	{"history of events on an issue", []string{"issues/list-events", "issues/list-events-for-timeline"}},
	{"remove all labels from an issue", []string{"issues/remove-all-labels"}},
	{"unlock an issue", []string{"issues/unlock"}},
	// Two endpoints list the issues assigned to the signed-in user.
	{"issues assigned to me", []string{"issues/list", "issues/list-for-authenticated-user"}},
	{"delete a workflow run", []string{"actions/delete-workflow-run"}},
	{"download a build artifact as a zip", []string{"actions/download-artifact"}},
	{"turn a disabled workflow back on", []string{"actions/enable-workflow"}},
	{"list the secrets a repository's actions can use", []string{"actions/list-repo-secrets"}},
	{"public key to encrypt an actions secret for a repository", []string{"actions/get-repo-public-key"}},
	{"approve a pending deployment of a workflow run", []string{"actions/review-pending-deployments-for-run"}},
	{"get a single check run", []string{"checks/get"}},
	{"rerun a check suite", []string{"checks/rerequest-suite"}},
	{"list code scanning analyses of a repository", []string{"code-scanning/list-recent-analyses"}},
	{"upload SARIF results of a scan", []string{"code-scanning/upload-sarif"}},
	{"list the webhooks of a repository", []string{"repos/list-webhooks"}},
	{"send a ping to a repository webhook", []string{"repos/ping-webhook"}},
	{"delete a release", []string{"repos/delete-release"}},
	{"find a release by its tag", []string{"repos/get-release-by-tag"}},
	{"list the forks of a repository", []string{"repos/list-forks"}},
	{"create a repository from a template", []string{"repos/create-using-template"}},
	{"how many times a repository was cloned", []string{"repos/get-clones"}},
	{"list the outside collaborators of an organization", []string{"orgs/list-outside-collaborators"}},
	{"list the webhooks of an organization", []string{"orgs/list-webhooks"}},
	{"make a user an admin of an organization", []string{"orgs/set-membership-for-user"}},
	{"create a team in an organization", []string{"teams/create"}},
	// The legacy endpoint deletes a team by id.
	{"delete a team", []string{"teams/delete-in-org", "teams/delete-legacy"}},
	{"who is on a team", []string{"teams/list-members-in-org", "teams/list-members-legacy"}},
	{"unfollow a user", []string{"users/unfollow"}},
	{"the people a user follows", []string{"users/list-following-for-user"}},
	{"update my profile bio", []string{"users/update-authenticated"}},
	{"list a user's gists", []string{"gists/list-for-user"}},
	{"repositories an app installation can access", []string{"apps/list-repos-accessible-to-installation"}},
	{"get the text of the MIT license", []string{"licenses/get"}},
	{"a user's public activity events", []string{"activity/list-public-events-for-user"}},
	{"repositories a user watches", []string{"activity/list-repos-watched-by-user"}},
	{"create an annotated tag object", []string{"git/create-tag"}},
	// A reference or the branch itself both give the commit a branch points to.
	{"the commit SHA a branch points to", []string{"git/get-ref", "repos/get-branch"}},
	{"search topics", []string{"search/topics"}},
	{"delete one of my codespaces", []string{"codespaces/delete-for-authenticated-user"}},
	{"list Dependabot secrets of a repository", []string{"dependabot/list-repo-secrets"}},
	{"export the software bill of materials of a repository", []string{"dependency-graph/export-sbom"}},
	{"what dependencies changed between two commits", []string{"dependency-graph/diff-range"}},
}

// TestGitHubRetrievalHeldOut3 reports the third held-out set's hit
// rates; it fails below 90% (83% with the ranker before the second
// tuning, 94% after it).
func TestGitHubRetrievalHeldOut3(t *testing.T) {
	heldOutRates(t, "held-out set 3", githubHeldOut3, 0.9)
}

// heldOutRates runs a held-out set through Search and logs its top-1 and
// top-3 hit rates and misses; it fails below floor, and when a task
// expects an operation the spec does not have (a typo would count as a
// miss otherwise).
func heldOutRates(t *testing.T, name string, tasks []struct {
	task string
	want []string
}, floor float64) {
	t.Helper()
	c := githubCapability(t)
	ids := map[string]bool{}
	for _, e := range c.Index() {
		ids[e.OperationID] = true
	}
	top1, top3 := 0, 0
	for _, task := range tasks {
		for _, w := range task.want {
			if !ids[w] {
				t.Errorf("%q expects %s, which GitHub's spec does not have", task.task, w)
			}
		}
		res := c.Search(Query{Text: task.task, Limit: 3})
		rank := slices.IndexFunc(res.Hits, func(h Hit) bool { return slices.Contains(task.want, h.OperationID) })
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
			t.Logf("miss: %q: want %s, got %s", task.task, strings.Join(task.want, " or "), strings.Join(got, ", "))
		}
	}
	n := len(tasks)
	t.Logf("%s on GitHub's spec: %d tasks, top-1 %d (%.0f%%), top-3 %d (%.0f%%)", name, n, top1, 100*float64(top1)/float64(n), top3, 100*float64(top3)/float64(n))
	if float64(top3) < floor*float64(n) {
		t.Errorf("%s top-3 hit rate %d/%d is under %.0f%%", name, top3, n, 100*floor)
	}
}
