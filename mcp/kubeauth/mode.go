package kubeauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubepact/kubepact/mcp"
)

// Mode is how the operator's /mcp authenticates its callers (the
// operator's --mcp-auth).
type Mode string

// The /mcp authentication modes.
const (
	// ModeKubernetes: a Kubernetes bearer token checked with TokenReview;
	// answers show only the namespaces where the caller may list
	// ServiceContracts (KubeIdentity).
	ModeKubernetes Mode = "kubernetes"
	// ModeToken: the one token of --auth-token-file; its caller sees
	// everything.
	ModeToken Mode = "token"
	// ModeNone: no authentication; everyone sees everything.
	ModeNone Mode = "none"
	// ModeOAuth: a JWT access token of an OpenID provider (mcp/oauth);
	// answers show only the namespaces where the user and groups its
	// claims name may list ServiceContracts (the SubjectAccessReviews of
	// ModeKubernetes, through KubeIdentity.Visibility).
	ModeOAuth Mode = "oauth"
)

// ChooseMode is the mode the operator's flags ask for: name is
// --mcp-auth ("" picks token when tokenFile, --auth-token-file, is set,
// else kubernetes). A token file belongs to token mode alone, and token
// mode needs one.
func ChooseMode(name, tokenFile string) (Mode, error) {
	m := Mode(name)
	if m == "" {
		m = ModeKubernetes
		if tokenFile != "" {
			m = ModeToken
		}
	}
	switch {
	case m != ModeKubernetes && m != ModeToken && m != ModeNone && m != ModeOAuth:
		return "", fmt.Errorf("--mcp-auth %q is not accepted; use %s, %s, %s or %s", name, ModeKubernetes, ModeOAuth, ModeToken, ModeNone)
	case m == ModeToken && tokenFile == "":
		return "", errors.New("--mcp-auth token needs --auth-token-file")
	case m != ModeToken && tokenFile != "":
		return "", fmt.Errorf("--auth-token-file is the token of --mcp-auth token, not of --mcp-auth %s: pass one or the other", m)
	}
	return m, nil
}

// Check validates /mcp's options in mode m as the server will, before
// anything connects to a cluster: in kubernetes mode the authenticator
// needs the cluster, so a stand-in that refuses every token takes its
// place for the check only. opts is not changed; its errors are mcp's
// (option fields, for the caller to name as flags).
func Check(ctx context.Context, opts *mcp.Options, m Mode) error {
	o := *opts
	if m == ModeKubernetes {
		o.Authenticator = refuseAll{}
	}
	s, err := mcp.NewServer(ctx, &o)
	if err != nil {
		return err
	}
	_ = s.Close() // a server on an empty Builder starts nothing to stop
	return nil
}

// refuseAll stands in for the Kubernetes authenticator while the options
// are checked, before there is a cluster to ask; it never serves.
type refuseAll struct{}

func (refuseAll) Authenticate(context.Context, string) (mcp.Identity, error) {
	return mcp.Identity{}, errors.New("not serving")
}
