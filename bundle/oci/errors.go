package oci

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Errors wrapped by Client methods, for errors.Is.
var (
	// ErrAuthFailed: the registry refused the credentials (or their absence).
	ErrAuthFailed = errors.New("authentication failed")
	// ErrNotFound: the registry has no such tag, digest or repository.
	ErrNotFound = errors.New("not found")
	// ErrInvalidArtifact: what the registry holds is not a Pacto bundle in
	// the expected format, or does not match its digest.
	ErrInvalidArtifact = errors.New("not a valid Pacto bundle artifact")
	// ErrNotAllowed: the registry policy refused the registry, a host it
	// sent the request on to, or a redirect; nothing was sent there.
	ErrNotAllowed = errors.New("registry not allowed")
	// ErrUnreachable: the registry could not be asked (a connection, DNS,
	// TLS or timeout failure); this says nothing about the reference.
	ErrUnreachable = errors.New("registry unreachable")
	// ErrTooLarge: a manifest, configuration or layer is larger than the
	// client may read. An error that wraps it wraps ErrInvalidArtifact
	// too: such an artifact is not one this client takes.
	ErrTooLarge = errors.New("over the size limit")
)

// overLimit is the error a size check wraps: it reads as
// ErrInvalidArtifact (as it always has) and matches ErrTooLarge as well,
// so a caller can tell an artifact that is too large from a foreign one.
type overLimit struct{}

func (overLimit) Error() string { return ErrInvalidArtifact.Error() }

// Is makes overLimit match ErrTooLarge and ErrInvalidArtifact.
func (overLimit) Is(target error) bool { return target == ErrTooLarge || target == ErrInvalidArtifact }

// errOverLimit is wrapped by every size refusal of a pull.
var errOverLimit error = overLimit{}

// Problem is what went wrong in a registry operation, as [RegistryError]
// classifies it.
type Problem string

// The problems, each with its own sentence and remedy.
const (
	// ProblemNotAllowed: the allow-list does not name the registry.
	// Nothing was resolved or dialled.
	ProblemNotAllowed Problem = "NOT_ALLOWED"
	// ProblemAddress: a connection would have gone to a non-public
	// address whose host the allow-list does not name; refused before
	// connect.
	ProblemAddress Problem = "ADDRESS_REFUSED"
	// ProblemRedirect: a redirect the client does not follow.
	ProblemRedirect Problem = "REDIRECT_REFUSED"
	// ProblemPlainHTTP: the registry answered TLS with plain HTTP.
	ProblemPlainHTTP Problem = "PLAIN_HTTP"
	// ProblemTLS: the TLS handshake failed (an untrusted or mismatched
	// certificate, a protocol failure).
	ProblemTLS Problem = "TLS"
	// ProblemConnectionRefused: nothing listens at the registry's address.
	ProblemConnectionRefused Problem = "CONNECTION_REFUSED"
	// ProblemNoSuchHost: the registry's name does not resolve.
	ProblemNoSuchHost Problem = "NO_SUCH_HOST"
	// ProblemTimeout: the operation did not finish within the client's
	// timeout.
	ProblemTimeout Problem = "TIMEOUT"
	// ProblemCancelled: the caller cancelled, or its own deadline passed.
	ProblemCancelled Problem = "CANCELLED"
	// ProblemAuth: the registry refused the credentials or their absence.
	ProblemAuth Problem = "AUTH_FAILED"
	// ProblemNotFound: no such repository, tag or digest.
	ProblemNotFound Problem = "NOT_FOUND"
	// ProblemStatus: the registry answered with another HTTP error.
	ProblemStatus Problem = "REGISTRY_ERROR"
	// ProblemUnreachable: any other failure to talk to the registry.
	ProblemUnreachable Problem = "UNREACHABLE"
)

// RegistryError is a failed registry operation, classified. Its Error is
// a sentence of kubepact's own that says what went wrong and what would
// fix it; it never carries a transport's, a TLS library's or a registry's
// own text, which stays in Err for the log.
type RegistryError struct {
	Problem Problem
	// Ref is the reference the operation was for; empty when none.
	Ref string
	// Registry is the registry the reference names.
	Registry string
	// Host is the host:port a refused connection was for, when it is not
	// the registry (a host the registry redirected to).
	Host string
	// AddrClass is the kind of non-public address a ProblemAddress
	// refused (loopback, link-local, private, cloud metadata, …).
	AddrClass string
	// Status is the HTTP status of ProblemAuth, ProblemNotFound and
	// ProblemStatus.
	Status int
	// Err is the failure as the libraries reported it: log it, never show
	// it (it may carry addresses, tokens or text the registry chose).
	Err error

	// detail is what ProblemTLS, ProblemRedirect and a credential
	// failure say beyond their problem; allowed the allow-list, for
	// ProblemNotAllowed; timeout and plainHTTP the client's settings.
	detail     string
	allowed    []string
	anyAllowed bool
	timeout    time.Duration
	plainHTTP  bool
}

// Error is the sentence with its remedy, naming the registry.
func (e *RegistryError) Error() string { return e.sentence(true) }

// Summary is the same sentence without any host name: for an answer that
// shows the reference beside it and must not repeat a host the registry
// chose (the target of a redirect).
func (e *RegistryError) Summary() string { return e.sentence(false) }

// sentence writes the problem and its remedy; with hosts false it names
// neither the registry nor a host it sent the request on to.
func (e *RegistryError) sentence(hosts bool) string {
	reg, it, other := "registry "+e.Registry, e.Registry, e.Host
	if !hosts {
		reg, it, other = "the registry", "it", "that host"
	}
	switch e.Problem {
	case ProblemNotAllowed:
		allowed := ""
		if hosts {
			allowed = " (" + allowedText(e.allowed) + ")"
		}
		return fmt.Sprintf("%s is not allowed here%s: add it to --allowed-registries (registry.allowedRegistries in the chart) if you trust it", reg, allowed)
	case ProblemAddress:
		named := "named in --allowed-registries (registry.allowedRegistries in the chart)"
		if e.anyAllowed {
			named += fmt.Sprintf(" itself, not through %q", AnyRegistry)
		}
		if e.Host != "" {
			return fmt.Sprintf("%s sent the request on to %s, which is at a %s address; kubepact connects to such an address only for a host %s: name %s there if you trust it", reg, cmp.Or(other, "another host"), e.AddrClass, named, other)
		}
		return fmt.Sprintf("%s was not contacted: it is at a %s address, which kubepact connects to only for a registry %s: name %s there if you trust it", reg, e.AddrClass, named, it)
	case ProblemRedirect:
		return fmt.Sprintf("%s sent a redirect that is not followed: %s", reg, e.detail)
	case ProblemPlainHTTP:
		return reg + " answered over plain HTTP: pass --plain-http (registry.plainHTTP in the chart) if that registry is trusted"
	case ProblemTLS:
		return fmt.Sprintf("the TLS connection to %s failed: %s; check that %s is the registry you mean and that the system trusts its certificate", reg, e.detail, it)
	case ProblemConnectionRefused:
		return fmt.Sprintf("nothing accepts connections at %s: check its host and port, and that it is running", reg)
	case ProblemNoSuchHost:
		return fmt.Sprintf("the name of %s does not resolve: check the registry host in the reference", reg)
	case ProblemTimeout:
		return fmt.Sprintf("%s did not answer within %s (--registry-timeout): it may be down, slow or filtered; retry, or raise --registry-timeout", reg, e.timeout)
	case ProblemCancelled:
		return fmt.Sprintf("the request to %s was cancelled before it finished", reg)
	case ProblemAuth:
		if e.detail != "" && hosts {
			return e.detail
		}
		msg := "authentication failed for " + reg
		if e.Status == http.StatusForbidden {
			msg += " (access denied)"
		}
		return msg + ": it refused the credentials, or their absence; give credentials that may read the repository (--registry-config or --registry-secret-file; in the cluster, the ServiceContract's spec.pullSecretRef)"
	case ProblemNotFound:
		what := e.Ref
		if what == "" || !hosts {
			what = "the reference"
		}
		return what + " not found: the registry has no such repository, tag or digest"
	case ProblemStatus:
		text := http.StatusText(e.Status)
		switch {
		case e.Status == http.StatusBadRequest && e.plainHTTP:
			return fmt.Sprintf("%s answered HTTP 400 (%s) to plain HTTP: if it serves HTTPS, drop --plain-http (registry.plainHTTP in the chart)", reg, text)
		case e.Status == http.StatusTooManyRequests:
			return fmt.Sprintf("%s is limiting requests (HTTP 429 %s): retry later", reg, text)
		case e.Status >= 500:
			return fmt.Sprintf("%s failed to answer (HTTP %d %s): retry later", reg, e.Status, text)
		}
		return fmt.Sprintf("%s refused the request (HTTP %d %s)", reg, e.Status, text)
	}
	return fmt.Sprintf("%s could not be reached (the connection failed or was cut): check the network and the registry, then retry", reg)
}

// Unwrap returns the sentinel of the problem (ErrNotAllowed, ErrAuthFailed,
// ErrNotFound, ErrUnreachable) and the failure as reported.
func (e *RegistryError) Unwrap() []error {
	var out []error
	switch e.Problem {
	case ProblemNotAllowed, ProblemAddress, ProblemRedirect:
		out = append(out, ErrNotAllowed)
	case ProblemAuth:
		out = append(out, ErrAuthFailed)
	case ProblemNotFound:
		out = append(out, ErrNotFound)
	case ProblemStatus, ProblemCancelled:
	default:
		out = append(out, ErrUnreachable)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// hostPort splits a URL's host[:port] for sameEndpoint.
func hostPort(urlHost string) (string, string) {
	h, p, err := net.SplitHostPort(urlHost)
	if err != nil {
		return urlHost, ""
	}
	return h, p
}

// sameEndpoint reports whether host:port is where registry is reached.
func sameEndpoint(registry, host, port string) bool {
	h, p, _ := splitRegistry(registry)
	isDefault := func(port string) bool { return port == "" || port == "443" || port == "80" }
	return h == canonicalHost(host) && (p == port || isDefault(p) && isDefault(port))
}

func allowedText(entries []string) string {
	switch {
	case len(entries) == 0:
		return "no registry is allowed"
	case len(entries) > 5:
		return "allowed: " + strings.Join(entries[:5], ", ") + fmt.Sprintf(" and %d more", len(entries)-5)
	}
	return "allowed: " + strings.Join(entries, ", ")
}

// credentialError is a credential that cannot be used; its text is ours and
// withholds the credential.
type credentialError struct{ msg string }

func (e *credentialError) Error() string { return e.msg }

// Is makes a credentialError match ErrAuthFailed.
func (e *credentialError) Is(target error) bool { return target == ErrAuthFailed }

// classify is the one classifier of registry failures: it reads err by
// type (errors.As and errors.Is, never its text) and names the problem.
func classify(ref Reference, err error) *RegistryError {
	if re, ok := errors.AsType[*RegistryError](err); ok {
		return re
	}
	e := &RegistryError{Problem: ProblemUnreachable, Ref: ref.String(), Registry: ref.Registry, Err: err}
	var (
		addr    *AddressError
		redir   *redirectError
		plain   *plainHTTPError
		cred    *credentialError
		resp    *errcode.ErrorResponse
		unknown x509.UnknownAuthorityError
		badHost x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		header  tls.RecordHeaderError
		alert   tls.AlertError
		dns     *net.DNSError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &addr):
		e.Problem, e.AddrClass = ProblemAddress, addr.Class
		if !sameEndpoint(ref.Registry, addr.Host, addr.Port) {
			e.Host = net.JoinHostPort(canonicalHost(addr.Host), addr.Port)
		}
	case errors.As(err, &redir):
		e.Problem, e.detail = ProblemRedirect, redir.reason
		if h, p := hostPort(redir.to); !sameEndpoint(ref.Registry, h, p) {
			e.Host = redir.to
		}
	case errors.As(err, &plain):
		e.Problem = ProblemPlainHTTP
	case errors.As(err, &cred):
		e.Problem, e.detail = ProblemAuth, cred.msg
	case errors.As(err, &resp):
		e.Status = resp.StatusCode
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			e.Problem = ProblemAuth
		case http.StatusNotFound:
			e.Problem = ProblemNotFound
		default:
			e.Problem = ProblemStatus
		}
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		e.Problem = ProblemAuth
	case errors.Is(err, errdef.ErrNotFound):
		e.Problem = ProblemNotFound
	case errors.As(err, &unknown):
		e.Problem, e.detail = ProblemTLS, "its certificate is signed by an authority the system does not trust"
	case errors.As(err, &badHost):
		e.Problem, e.detail = ProblemTLS, "its certificate is for another host"
	case errors.As(err, &invalid):
		e.Problem, e.detail = ProblemTLS, "its certificate is not valid (expired, not yet valid, or not for serving)"
	case errors.As(err, &verify):
		e.Problem, e.detail = ProblemTLS, "its certificate could not be verified"
	case errors.As(err, &header), errors.As(err, &alert):
		e.Problem, e.detail = ProblemTLS, "the handshake failed (does it speak TLS on that port?)"
	case errors.Is(err, context.Canceled):
		e.Problem = ProblemCancelled
	case errors.Is(err, context.DeadlineExceeded):
		e.Problem = ProblemTimeout
	case errors.As(err, &dns) && dns.IsNotFound:
		e.Problem = ProblemNoSuchHost
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Problem = ProblemConnectionRefused
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Problem = ProblemTimeout
	}
	return e
}
