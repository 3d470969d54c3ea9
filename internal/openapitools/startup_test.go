package openapitools

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func TestStartupRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{name: "credentials without a base URL", opts: Options{Auth: []string{"bearer=x"}}, want: "need an explicit base URL"},
		{name: "unknown scheme", opts: Options{BaseURL: "http://127.0.0.1:1", Auth: []string{"nope=x"}}, want: `no interface declares a security scheme of that name`},
		{name: "malformed auth", opts: Options{BaseURL: "http://127.0.0.1:1", Auth: []string{"bearer"}}, want: "want name=value"},
		{name: "deny list typo", opts: Options{DenyOperations: []string{"serch"}}, want: `no operation is named "serch"`},
		{name: "relative base URL", opts: Options{BaseURL: "/v1"}, want: "absolute http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := project(t.Context(), stylesFS(t), []spec{{name: "styles", file: "styles.yaml"}}, &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("no server URL", func(t *testing.T) {
		fsys := fstest.MapFS{"a.yaml": {Data: []byte("openapi: 3.0.0\ninfo: {title: a, version: '1'}\npaths: {}\n")}}
		_, err := project(t.Context(), fsys, []spec{{name: "a", file: "a.yaml"}}, nil)
		if err == nil || !strings.Contains(err.Error(), "no base URL") {
			t.Errorf("error = %v, want no base URL", err)
		}
	})
	t.Run("server variables defaults", func(t *testing.T) {
		c := projectStyles(t, nil)
		if got, want := c.Interfaces[0].BaseURL, "http://127.0.0.1:1/base"; got != want {
			t.Errorf("base URL = %q, want %q", got, want)
		}
	})
}

func stylesFS(t *testing.T) fstest.MapFS {
	t.Helper()
	data, err := os.ReadFile("testdata/styles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{"styles.yaml": {Data: data}}
}

func projectStyles(t *testing.T, opts *Options) *Capability {
	t.Helper()
	c, err := project(t.Context(), stylesFS(t), []spec{{name: "styles", file: "styles.yaml"}}, opts)
	if err != nil {
		t.Fatalf("project: %v", err)
	}
	return c
}
