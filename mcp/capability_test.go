package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
	"github.com/kubepact/kubepact/test/demoservice"
)

// capabilityServer serves a bundle directory's generated tools against
// baseURL.
func capabilityServer(t testing.TB, dir string, copts *openapitools.Options, opts *Options) *Server {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	c, err := openapitools.Project(t.Context(), b, copts)
	if err != nil {
		t.Fatalf("Project: %v", err)
	}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Families == nil {
		opts.Families = []Family{FamilyCapability}
	}
	opts.Capability = &CapabilityBundle{Bundle: b, Capability: c}
	return newTestServer(t, opts)
}

func demoService(t testing.TB, opts *demoservice.Options) string {
	t.Helper()
	srv := httptest.NewServer(demoservice.New(opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

func callTool(t testing.TB, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res
}

func TestCapabilityFamilyInMemory(t *testing.T) {
	base := demoService(t, &demoservice.Options{Token: "s3cret"})
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base, Auth: []string{"bearerAuth=s3cret"}}, nil)
	cs := connect(t.Context(), t, s)

	tools := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tl.Name] = tl
	}
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if diff := cmp.Diff(names, []string{"getHealth", "getProduct", "listProducts", "pacto_server_info", "pacto_skill", "pacto_withheld"}); diff != "" {
		t.Errorf("tools (-got +want):\n%s", diff)
	}
	ann := tools["listProducts"].Annotations
	if !ann.ReadOnlyHint || *ann.DestructiveHint || !ann.IdempotentHint || *ann.OpenWorldHint {
		t.Errorf("listProducts annotations on loopback: %+v", ann)
	}

	instr := cs.InitializeResult().Instructions
	for _, want := range []string{"call the LIVE service", "OFF — only GET and HEAD", "4 operation(s) are withheld", "pacto_skill"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions lack %q:\n%s", want, instr)
		}
	}

	res := callTool(t, cs, "listProducts", map[string]any{"tag": []string{"camping", "light"}, "limit": 5})
	got := structured(t, res)
	if res.IsError || got["status"] != float64(200) {
		t.Fatalf("listProducts: %s", text(res))
	}
	items := got["body"].(map[string]any)["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["sku"] != "LMP-3" {
		t.Errorf("listProducts tag filter: %v", items)
	}

	res = callTool(t, cs, "getProduct", map[string]any{"productId": "p-9999"})
	got = structured(t, res)
	if !res.IsError || got["status"] != float64(404) || got["body"].(map[string]any)["error"] != "no such product" {
		t.Errorf("getProduct 404: isError=%v %s", res.IsError, text(res))
	}

	res = callTool(t, cs, "getProduct", map[string]any{"productId": "nope", "extra": 1})
	got = structured(t, res)
	if !res.IsError || got["error"].(map[string]any)["code"] != CodeInvalidArgument {
		t.Fatalf("bad arguments: %s", text(res))
	}
	var diags []invoke.Diagnostic
	raw, _ := json.Marshal(got["diagnostics"])
	_ = json.Unmarshal(raw, &diags)
	var fields []string
	for _, d := range diags {
		fields = append(fields, d.Field+" "+d.Code)
	}
	if diff := cmp.Diff(fields, []string{"extra UNKNOWN_ARGUMENT", "productId INVALID_VALUE"}); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}

	res = callTool(t, cs, "pacto_withheld", map[string]any{})
	got = structured(t, res)
	if n := len(got["withheld"].([]any)); n != 4 {
		t.Errorf("pacto_withheld lists %d operations, want 4", n)
	}
	rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: withheldURI})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "WRITES_NOT_ALLOWED") {
		t.Errorf("withheld resource: %v %v", rr, err)
	}
}

func TestCapabilityWritesAndReadOnlyServer(t *testing.T) {
	base := demoService(t, nil)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base, AllowWrites: true}, nil)
	cs := connect(t.Context(), t, s)
	res := callTool(t, cs, "createProduct", map[string]any{"body": map[string]any{"sku": "NEW-1", "name": "Kettle", "price": map[string]any{"currency": "EUR", "amountMinor": 2500}}})
	got := structured(t, res)
	if res.IsError || got["status"] != float64(201) {
		t.Fatalf("createProduct: %s", text(res))
	}
	id := got["body"].(map[string]any)["id"].(string)
	res = callTool(t, cs, "adjustStock", map[string]any{"productId": id, "body": map[string]any{"delta": 3}})
	if got := structured(t, res); got["body"].(map[string]any)["stock"] != float64(3) {
		t.Errorf("adjustStock: %s", text(res))
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "ON — ") {
		t.Errorf("instructions do not say writes are on:\n%s", cs.InitializeResult().Instructions)
	}

	// A read-only server leaves the generated write tools out too.
	ro := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base, AllowWrites: true}, &Options{ReadOnly: true})
	if slices.Contains(ro.ToolNames(), "createProduct") {
		t.Errorf("read-only server registers createProduct: %v", ro.ToolNames())
	}
}

// writeBundle writes a minimal bundle with one OpenAPI interface.
func writeBundle(t *testing.T, openapi string, skills map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"pacto.yaml":   "pactoVersion: \"2.0\"\nservice: {name: probe, version: 1.0.0}\ninterfaces:\n  - {name: http, type: openapi, ref: openapi.yaml}\n",
		"openapi.yaml": openapi,
	}
	for name, md := range skills {
		files["skills/"+name+".md"] = md
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReservedNamesNeverReplaceOwnTools(t *testing.T) {
	dir := writeBundle(t, "openapi: 3.0.3\ninfo: {title: x, version: '1'}\nservers: [{url: 'http://127.0.0.1:1'}]\npaths:\n  /c: {get: {operationId: pacto_check}}\n  /s: {get: {operationId: pacto_server_info}}\n", nil)
	s := capabilityServer(t, dir, nil, &Options{Families: []Family{FamilyAuthoring, FamilyCapability}})
	for _, name := range []string{"pacto_check", "pacto_server_info"} {
		if s.tools[name] == nil || s.tools[name].generated {
			t.Errorf("%s is not kubepact's own tool", name)
		}
	}
}

func TestSkillsToolResourcesPrompts(t *testing.T) {
	dir := writeBundle(t, "openapi: 3.1.0\ninfo: {title: x, version: '1'}\nservers: [{url: 'http://127.0.0.1:1'}]\npaths: {}\n",
		map[string]string{"refund": "# Refund\nSteps.", "onboard": "# Onboard\n"})
	s := capabilityServer(t, dir, nil, nil)
	cs := connect(t.Context(), t, s)

	got := structured(t, callTool(t, cs, "pacto_skill", map[string]any{}))
	if diff := cmp.Diff(got["skills"], []any{"onboard", "refund"}); diff != "" {
		t.Errorf("skills (-got +want):\n%s", diff)
	}
	res := callTool(t, cs, "pacto_skill", map[string]any{"name": "refund"})
	if got := structured(t, res); got["markdown"] != "# Refund\nSteps." || text(res) != "# Refund\nSteps." {
		t.Errorf("refund skill: %s", text(res))
	}
	for name, code := range map[string]string{"../pacto": CodeInvalidArgument, "missing": "NOT_FOUND"} {
		res := callTool(t, cs, "pacto_skill", map[string]any{"name": name})
		if got := structured(t, res); !res.IsError || got["error"].(map[string]any)["code"] != code {
			t.Errorf("pacto_skill %q: %s", name, text(res))
		}
	}

	// Local bundles are read at call time: edits and new skills show.
	if err := os.WriteFile(filepath.Join(dir, "skills", "late.md"), []byte("# Late"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "refund.md"), []byte("# Refund v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = structured(t, callTool(t, cs, "pacto_skill", map[string]any{}))
	if diff := cmp.Diff(got["skills"], []any{"late", "onboard", "refund"}); diff != "" {
		t.Errorf("skills after adding one (-got +want):\n%s", diff)
	}
	rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://skills/refund"})
	if err != nil || rr.Contents[0].Text != "# Refund v2" {
		t.Errorf("skill resource: %v %v", rr, err)
	}
	rr, err = cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://skills/late"})
	if err != nil || rr.Contents[0].Text != "# Late" {
		t.Errorf("skill added after start, through the template: %v %v", rr, err)
	}
	pr, err := cs.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "onboard"})
	if err != nil || pr.Messages[0].Content.(*sdk.TextContent).Text != "# Onboard\n" {
		t.Errorf("skill prompt: %v %v", pr, err)
	}
	var prompts []string
	for p, err := range cs.Prompts(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
	}
	if diff := cmp.Diff(prompts, []string{"onboard", "refund"}); diff != "" {
		t.Errorf("prompts (-got +want):\n%s", diff)
	}
}

func TestCapabilityOverHTTP(t *testing.T) {
	base := demoService(t, nil)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base}, nil)
	srv := httptest.NewServer(s.httpHandler)
	t.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res := callTool(t, cs, "getHealth", map[string]any{})
	if got := structured(t, res); res.IsError || got["status"] != float64(200) {
		t.Errorf("getHealth over HTTP: %s", text(res))
	}
}

// Skills are read at call time from the bundle directory, which may have
// changed since it was loaded (and .pactoignore'd files were never
// checked): a skill that links out of the bundle is not served, whether
// by pacto_skill, the resource template or a prompt.
func TestSkillsNeverLeaveTheBundle(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := writeBundle(t, "openapi: 3.1.0\ninfo: {title: x, version: '1'}\nservers: [{url: 'http://127.0.0.1:1'}]\npaths: {}\n",
		map[string]string{"inside": "# Inside"})
	if err := os.WriteFile(filepath.Join(dir, ".pactoignore"), []byte("skills/hidden.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "skills", "hidden.md")); err != nil {
		t.Fatal(err)
	}
	s := capabilityServer(t, dir, nil, nil)
	cs := connect(t.Context(), t, s)
	if err := os.Symlink(secret, filepath.Join(dir, "skills", "late.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.md", filepath.Join(dir, "skills", "alias.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hidden", "late"} {
		res := callTool(t, cs, "pacto_skill", map[string]any{"name": name})
		if !res.IsError || strings.Contains(text(res), "TOP SECRET") {
			t.Errorf("pacto_skill %q served a file outside the bundle: %s", name, text(res))
		}
		rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://skills/" + name})
		if err == nil {
			t.Errorf("resource pacto://skills/%s served a file outside the bundle: %v", name, rr.Contents[0].Text)
		}
	}
	if res := callTool(t, cs, "pacto_skill", map[string]any{"name": "alias"}); res.IsError || text(res) != "# Inside" {
		t.Errorf("a skill linking inside the bundle: %s", text(res))
	}
}
