package grpctools

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// Defaults applied to zero fields of [Options].
const (
	DefaultTimeout           = 30 * time.Second
	DefaultMaxMessageBytes   = 4 << 20
	DefaultMaxStreamMessages = 100
	DefaultMaxResponseBytes  = 1 << 20
)

// Confirmation policies (Options.ConfirmWrites), the same words as the
// OpenAPI tools' policy.
const (
	ConfirmDelete = "delete" // RPCs named like a delete (Delete…, Remove…, Destroy…, Purge…): the default
	ConfirmAlways = "always" // every RPC that is not NO_SIDE_EFFECTS
	ConfirmNever  = "never"  // none
)

// Options configures projection and invocation of gRPC tools. The zero
// value (and a nil *Options) means: only NO_SIDE_EFFECTS methods, no
// target (tools are listed, calls fail saying a target is needed), 30 s
// per call, 4 MiB per message, 100 messages or 1 MiB of JSON per
// server-streaming call.
type Options struct {
	// Target is the gRPC service as host:port. Without TLS it is reached
	// over plaintext HTTP/2 (h2c), so it must be a loopback address unless
	// AllowPlaintextRemote is set; the sidecar uses 127.0.0.1:<port>.
	Target string
	// UseTLS reaches Target over TLS, verifying its certificate against
	// CAFile (default: the system's roots) for ServerName (default:
	// Target's host). A non-loopback Target needs it.
	UseTLS bool
	// CAFile is a PEM file of the CA certificates Target's certificate
	// must chain to; it needs UseTLS.
	CAFile string
	// ServerName is the name Target's certificate must hold (default:
	// Target's host); it needs UseTLS.
	ServerName string
	// AllowPlaintextRemote lets Target be a non-loopback host reached
	// without TLS (e.g. a Service in a trusted cluster network). Metadata
	// is still sent only to a loopback target or over TLS.
	AllowPlaintextRemote bool
	// AllowWrites exposes every unary and server-streaming RPC, not only
	// those whose idempotency_level is NO_SIDE_EFFECTS.
	AllowWrites bool
	// AllowMethods, when not empty, exposes only the named RPCs: by tool
	// name, as Service/Method or as package.Service/Method.
	AllowMethods []string
	// AllowListSet makes an empty AllowMethods expose nothing: an allow
	// list was given and names only tools of other kinds (OpenAPI).
	AllowListSet bool
	// DenyMethods withholds the named RPCs (named as in AllowMethods); it
	// wins over AllowMethods.
	DenyMethods []string
	// Timeout is each call's deadline (default 30 s).
	Timeout time.Duration
	// MaxMessageBytes bounds one request or response message on the wire
	// (default 4 MiB).
	MaxMessageBytes int
	// MaxStreamMessages bounds the messages a server-streaming call keeps
	// (default 100); more and the result says truncated.
	MaxStreamMessages int
	// MaxResponseBytes bounds the JSON of the messages one call keeps
	// (default 1 MiB); more and the result says truncated.
	MaxResponseBytes int
	// Metadata is sent with every call, as name=value (e.g. from the
	// credentials configuration: authorization=Bearer …).
	Metadata []string
	// MetadataFiles is like Metadata, as name=PATH: the trimmed content of
	// the file (e.g. a mounted Secret) is the value.
	MetadataFiles []string
	// ConfirmWrites says which calls wait for a person's confirmation:
	// ConfirmDelete (the default, ""), ConfirmAlways or ConfirmNever.
	ConfirmWrites string
	// Limits bound the .proto files read.
	Limits Limits
	// Lock is the tools lock the server is held to (nil: none). Under a
	// lock a tool is served only when the lock pins it unchanged (see
	// Tool.Pin); any other is withheld with reason DRIFT.
	Lock *openapitools.Lock
}

func (o *Options) withDefaults() *Options {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxStreamMessages <= 0 {
		c.MaxStreamMessages = DefaultMaxStreamMessages
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &c
}

// reservedMetadata are header names gRPC or HTTP/2 own: metadata from the
// configuration may not set them.
var reservedMetadata = []string{"content-type", "te", "user-agent", "host", "connection", "transfer-encoding", "upgrade"}

// MetadataPair is one configured metadata entry.
type MetadataPair struct{ Name, Value string }

// check validates the options, reads MetadataFiles and CAFile; it
// returns the metadata to send and, with UseTLS, the TLS configuration.
func (o *Options) check() ([]MetadataPair, *tls.Config, error) {
	md, err := o.checkMetadata()
	if err != nil {
		return nil, nil, err
	}
	tc, err := o.tlsConfig()
	return md, tc, err
}

// tlsConfig is the client's TLS configuration; nil without UseTLS.
func (o *Options) tlsConfig() (*tls.Config, error) {
	if !o.UseTLS {
		if o.CAFile != "" || o.ServerName != "" {
			return nil, errors.New("CAFile and ServerName verify a TLS connection: give UseTLS as well, or drop them")
		}
		return nil, nil
	}
	if o.Target == "" {
		return nil, errors.New("UseTLS needs an explicit Target: the host:port of the service to reach over TLS")
	}
	host, _, _ := net.SplitHostPort(o.Target)
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cmp.Or(o.ServerName, host), NextProtos: []string{"h2"}}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CAFile: the file %s cannot be read: %w", o.CAFile, errors.Unwrap(err))
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CAFile: %s holds no PEM certificate (want one or more -----BEGIN CERTIFICATE----- blocks)", o.CAFile)
		}
	}
	return tc, nil
}

// checkMetadata validates the options but the TLS ones and reads MetadataFiles;
// it returns the metadata to send.
func (o *Options) checkMetadata() ([]MetadataPair, error) {
	switch o.ConfirmWrites {
	case "", ConfirmDelete, ConfirmAlways, ConfirmNever:
	default:
		return nil, fmt.Errorf("ConfirmWrites %q is not accepted; use %s, %s or %s", o.ConfirmWrites, ConfirmDelete, ConfirmAlways, ConfirmNever)
	}
	loopback := false
	if o.Target != "" {
		host, port, err := net.SplitHostPort(o.Target)
		if err != nil || port == "" || host == "" {
			return nil, fmt.Errorf("the target %q (Target) is not host:port (e.g. 127.0.0.1:9090)", o.Target)
		}
		loopback = netx.IsLoopbackHost(host)
		if !loopback && !o.UseTLS && !o.AllowPlaintextRemote {
			return nil, fmt.Errorf("the target %q (Target) is not a loopback address, and without TLS gRPC calls go over plaintext HTTP/2, readable and changeable on the way: "+
				"a remote target is accepted over TLS (UseTLS, with CAFile and ServerName to verify it); without TLS only 127.0.0.1, ::1 or localhost are", o.Target)
		}
	}
	var md []MetadataPair
	add := func(field, entry string, file bool) error {
		name, val, ok := strings.Cut(entry, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return fmt.Errorf("%s entry %q is not name=%s", field, redact(entry), map[bool]string{false: "value", true: "PATH"}[file])
		}
		if !validMetadataName(name) {
			return fmt.Errorf("%s: metadata name %q is not accepted: lower-case letters, digits, -, _ and . only, not starting with grpc- or a colon", field, name)
		}
		if slices.Contains(reservedMetadata, name) {
			return fmt.Errorf("%s: metadata name %q belongs to HTTP/2 and gRPC; it cannot be configured", field, name)
		}
		if file {
			data, err := os.ReadFile(val)
			if err != nil {
				return fmt.Errorf("%s %s: the file %s cannot be read", field, name, val)
			}
			val = strings.TrimSpace(string(data))
		}
		md = append(md, MetadataPair{Name: name, Value: val})
		return nil
	}
	for _, e := range o.Metadata {
		if err := add("Metadata", e, false); err != nil {
			return nil, err
		}
	}
	for _, e := range o.MetadataFiles {
		if err := add("MetadataFiles", e, true); err != nil {
			return nil, err
		}
	}
	if len(md) > 0 && o.Target != "" && !loopback && !o.UseTLS {
		return nil, fmt.Errorf("Metadata would travel unencrypted to %s: metadata (credentials) is sent only to a loopback target or over TLS", o.Target)
	}
	if len(md) > 0 && o.Target == "" {
		return nil, fmt.Errorf("Metadata needs an explicit Target: credentials go only to a configured service")
	}
	return md, nil
}

func validMetadataName(n string) bool {
	if strings.HasPrefix(n, "grpc-") || strings.HasPrefix(n, ":") {
		return false
	}
	for _, r := range n {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

// redact keeps the name of a name=value entry, never its value.
func redact(entry string) string {
	if name, _, ok := strings.Cut(entry, "="); ok {
		return name + "=…"
	}
	if len(entry) > 8 {
		return entry[:4] + "…"
	}
	return entry
}
