package kubeauth_test

import (
	"strings"
	"testing"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/kubeauth"
)

// TestChooseMode is the operator's --mcp-auth rule, case by case: the
// default follows --auth-token-file, and a token file belongs to token
// mode alone.
func TestChooseMode(t *testing.T) {
	for _, tt := range []struct {
		name, flag, file string
		want             kubeauth.Mode
		err              string
	}{
		{name: "default", want: kubeauth.ModeKubernetes},
		{name: "default with a token file", file: "/t", want: kubeauth.ModeToken},
		{name: "kubernetes", flag: "kubernetes", want: kubeauth.ModeKubernetes},
		{name: "token", flag: "token", file: "/t", want: kubeauth.ModeToken},
		{name: "none", flag: "none", want: kubeauth.ModeNone},
		{name: "oauth", flag: "oauth", want: kubeauth.ModeOAuth},
		{name: "unknown", flag: "oidc", err: `--mcp-auth "oidc" is not accepted; use kubernetes, oauth, token or none`},
		{name: "token without a file", flag: "token", err: "--mcp-auth token needs --auth-token-file"},
		{name: "a file in kubernetes mode", flag: "kubernetes", file: "/t", err: "--auth-token-file is the token of --mcp-auth token, not of --mcp-auth kubernetes"},
		{name: "a file in none mode", flag: "none", file: "/t", err: "not of --mcp-auth none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubeauth.ChooseMode(tt.flag, tt.file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ChooseMode(%q, %q) = %q, %v; want an error containing %q", tt.flag, tt.file, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ChooseMode(%q, %q) = %q, %v; want %q", tt.flag, tt.file, got, err, tt.want)
			}
		})
	}
}

// TestCheck: in kubernetes mode an HTTP listener beyond loopback is
// accepted (the cluster authenticates), in none mode it is refused unless
// allowed, as the server itself refuses it.
func TestCheck(t *testing.T) {
	opts := mcp.DefaultOptions()
	opts.Transport = mcp.TransportHTTP
	opts.Listen = "0.0.0.0"
	if err := kubeauth.Check(t.Context(), opts, kubeauth.ModeKubernetes); err != nil {
		t.Errorf("kubernetes mode beyond loopback: %v", err)
	}
	if opts.Authenticator != nil {
		t.Errorf("Check changed the options: Authenticator %v", opts.Authenticator)
	}
	if err := kubeauth.Check(t.Context(), opts, kubeauth.ModeNone); err == nil {
		t.Error("none mode beyond loopback without AllowUnauthenticatedRemote: accepted, want a refusal")
	}
}
