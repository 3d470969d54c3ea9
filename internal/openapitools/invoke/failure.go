package invoke

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// transportFailure says, in a sentence an agent or a person acts on, why a
// request to u got no complete response: which service did not answer, how,
// and what to do. It never repeats the transport's own text (dial tcp
// 127.0.0.1:8080: connect: connection refused), which names Go's calls,
// not the problem; Result.Cause keeps that for the log.
func transportFailure(u *url.URL, err error) string {
	service := u.Scheme + "://" + u.Host
	var (
		dnsErr   *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		netErr   net.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("the service at %s is not answering: nothing accepts connections on %s (connection refused); start the service, or point the server's base URL at where it runs", service, u.Host)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("the service at %s cannot be reached: the host name %s does not resolve; check the host of the server's base URL", service, u.Hostname())
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Sprintf("the service at %s cannot be reached: there is no route to %s from this server; check the base URL and the network between them", service, u.Hostname())
	case errors.As(err, &hostname):
		return fmt.Sprintf("the service at %s was not trusted: its TLS certificate is not valid for %s; use the host name its certificate names", service, u.Hostname())
	case errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &verify):
		return fmt.Sprintf("the service at %s was not trusted: its TLS certificate does not verify (an unknown authority, or expired); give it a certificate this server's CA bundle trusts", service)
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf("the service at %s answers plain HTTP, not HTTPS; use an http:// base URL", service)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the service at %s closed the connection before it answered in full; see the service's log", service)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("the service at %s did not answer in time", service)
	}
	return fmt.Sprintf("the exchange with the service at %s failed before a complete HTTP response arrived; the server's log has the transport's error", service)
}
