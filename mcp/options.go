package mcp

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/netx"
)

// Transport names accepted by [Options.Transport].
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Family names a group of tools that is switched on or off as a whole.
type Family string

// The tool families kubepact knows. Later issues add the generated
// capability tools and the fleet tools here.
const (
	// FamilyAuthoring is pacto_create, pacto_edit, pacto_check and
	// pacto_schema: the only family that writes (contract files below the
	// workspace).
	FamilyAuthoring Family = "authoring"
	// FamilyCapability is one generated tool per OpenAPI operation of a
	// bundle (calling the live service), pacto_skill and pacto_withheld.
	// It needs [Options.Capability].
	FamilyCapability Family = "capability"
)

// ListPageSize is the number of tools (resources, prompts) in one page of
// a list: with each tool's input schema bounded by the projection
// (openapitools.MaxInputSchemaBytes), a page of a large API stays a few
// megabytes at most.
const ListPageSize = 50

// Defaults applied by [NewServer] to zero fields of [Options].
const (
	DefaultPort            = 8585
	DefaultListen          = "127.0.0.1"
	DefaultSessionTimeout  = 30 * time.Minute
	DefaultMaxRequestBytes = 4 << 20
	DefaultDrainTimeout    = 10 * time.Second
	// DefaultMaxSessions bounds the open HTTP sessions; at about 13 KiB
	// each, the default costs at most ~13 MiB.
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerIdentity bounds the HTTP sessions one caller
	// holds (capped at MaxSessions), so that no one caller holds them all.
	DefaultMaxSessionsPerIdentity = 100
	// DefaultMaxConnections bounds the open HTTP connections; at about
	// 20 KiB each (buffers and a goroutine), the default costs at most
	// ~20 MiB.
	DefaultMaxConnections    = 1024
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// DefaultFamilies are the families a server registers when
// [Options.Families] is nil.
var DefaultFamilies = []Family{FamilyAuthoring, FamilyPayload}

// Options configures a [Server]. The zero value of every field means its
// documented default, and a nil *Options means all defaults.
type Options struct {
	// Transport is TransportStdio (default) or TransportHTTP.
	Transport string
	// HTTPOptions configure the HTTP transport (ignored on stdio, but for
	// MaxRequestBytes, which bounds a stdio line too).
	HTTPOptions
	// Workspace is the directory below which the authoring tools may read and
	// write (default: the current directory).
	Workspace string
	// ReadOnly registers no tool that can write anything.
	ReadOnly bool
	// Families selects the tool families; nil means DefaultFamilies.
	Families []Family
	// Capability is the bundle the capability family serves.
	Capability *CapabilityBundle
	// Fleet is the fleet family's sources (see fleet.go); --fleet turns
	// the family on.
	Fleet FleetOptions
	// Catalog is the catalog family's roots (see catalog.go); roots turn
	// the family on.
	Catalog CatalogOptions
	// Extensions are families a program adds beside kubepact's own (a
	// test server's fixtures); Families switches them on by name.
	Extensions []*Extension

	// Scoper restricts every fleet answer to what the caller may see
	// (the operator's asks SubjectAccessReview which namespaces it may
	// list ServiceContracts in). It needs an Authenticator; a call without
	// an identity (stdio) is refused. Nil: every caller sees the fleet.
	Scoper Scoper
	// FleetRefsOnly makes every tool argument that names a bundle accept
	// only a revision of the fleet that the caller may see: a service name
	// (its newest revision), name@version, or the revision's sha256 digest
	// (also SERVICE@sha256:…). A registry reference, a URL or a local path
	// is refused with what is accepted, before anything is read or
	// dialled; the bundle read is the one the revision's source recorded.
	// The operator sets it: the bundles it reads are those its
	// ServiceContracts resolved, never one a caller names. It needs the
	// fleet family, and neither catalog roots nor the authoring family.
	FleetRefsOnly bool
	// TraceIntake, when set, serves an OTLP/HTTP trace receiver at
	// /v1/traces behind the same checks as /mcp (intake.go); the HTTP
	// transport only.
	TraceIntake *TraceIntake
	// Budget bounds the expensive calls: how many at once, overall and
	// per caller, how long each, and the bundle memory they hold.
	Budget BudgetOptions

	// Registry pulls the oci:// bundles that contracts reference (policy
	// and configuration refs) when the tools validate. Nil resolves only
	// local references, confined to the workspace.
	Registry *oci.Client

	// Version is reported in serverInfo and pacto_server_info.
	Version string
	// Logger receives the audit line of every tool call and the server's own
	// log lines. The zero Logger discards.
	Logger logr.Logger
	// Registerer receives the per-tool metrics. Nil registers nothing (the
	// metrics are still counted).
	Registerer prometheus.Registerer
	// Metrics, when set, is served at MetricsEndpoint on the HTTP
	// transport, behind the same checks and authentication as the MCP
	// endpoint (`kubepact mcp -t http` serves its own registry there,
	// which is also its Registerer). The operator leaves it nil: its
	// manager serves /metrics on a listener of its own.
	Metrics prometheus.Gatherer
	// Stdin and Stdout are the stdio transport's streams (default os.Stdin
	// and os.Stdout).
	Stdin  io.Reader
	Stdout io.Writer
}

// HTTPOptions are the Streamable HTTP transport's settings: where it
// listens, who may call it and how much it holds. Every shape serving MCP
// over HTTP shares them (`kubepact mcp -t http`, `kubepact sidecar`, the
// operator's /mcp); [Options] embeds them. The zero value of every field
// means its documented default.
type HTTPOptions struct {
	// Listen is the address the HTTP transport binds to (default 127.0.0.1).
	Listen string
	// Port is the HTTP port (default 8585). To serve on a listener of your
	// own (a free port, a manager), use [Server.Serve].
	Port int
	// AuthTokenFile names a file whose trimmed content is the bearer token
	// every HTTP request must carry. Empty means no authentication, unless
	// Authenticator is set.
	AuthTokenFile string
	// Authenticator checks the bearer token every HTTP request must carry
	// and names the caller (the operator's checks Kubernetes tokens with
	// TokenReview). Set it or AuthTokenFile, not both.
	Authenticator Authenticator
	// ProtectedResource makes the endpoint an OAuth 2.1 resource server
	// (RFC 9728 metadata, challenges naming it, scopes for reads and
	// writes); it needs an Authenticator that fills Identity.Scopes
	// (package mcp/oauth builds both).
	ProtectedResource *ProtectedResource
	// AllowUnauthenticatedRemote permits listening beyond loopback without a
	// bearer token. It is logged as a warning.
	AllowUnauthenticatedRemote bool
	// AllowedHosts are the Host header names (without port) accepted besides
	// the loopback names: the DNS-rebinding allow-list for a server reached
	// through a Service or a proxy.
	AllowedHosts []string
	// AllowedOrigins are full browser origins (scheme://host[:port]) accepted
	// besides loopback ones and those of AllowedHosts.
	AllowedOrigins []string
	// SessionTimeout closes HTTP sessions idle this long (default 30m).
	SessionTimeout time.Duration
	// MaxSessions bounds the open HTTP sessions (default 1000). At the
	// limit a new session evicts the one idle longest; when every session
	// has a call in progress, the new one is refused (503). A session
	// whose only open request is its GET stream is idle.
	MaxSessions int
	// MaxSessionsPerIdentity bounds the HTTP sessions one caller holds:
	// one identity, or without authentication one client IP address
	// (default 100; a quota above MaxSessions is MaxSessions). At its quota a caller's new
	// session evicts its own session idle longest, or is refused (429)
	// when all of its sessions have a call in progress.
	MaxSessionsPerIdentity int
	// MaxConnections bounds the open HTTP connections (default 1024). At
	// the limit a new connection takes the slot of the one waiting longest
	// (idle, or still sending its request); when every connection is
	// serving a request, the new one is refused (503).
	MaxConnections int
	// MaxRequestBytes bounds a request: an HTTP body, a stdio line
	// (default 4 MiB).
	MaxRequestBytes int64
	// MaxRequestBytesInFlight bounds the HTTP request bodies held at once
	// (the Content-Length of every request being read or answered), one
	// caller holding at most an eighth of it (but always room for one
	// largest request): past it a request is refused at once, 503 (429
	// for the caller's share), and its body is not read. Default: 1/256
	// of the process's memory limit (GOMEMLIMIT) when it has one, else 16
	// times MaxRequestBytes; never less than MaxRequestBytes (see
	// requestBytes for why).
	MaxRequestBytesInFlight int64
	// ReadHeaderTimeout bounds reading a request's headers (default 10s),
	// ReadTimeout reading the whole request, body included (default 30s),
	// and IdleTimeout how long a keep-alive connection may wait for its
	// next request (default 2m).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// DrainTimeout bounds the HTTP shutdown, however many sessions are
	// open (default 10s): calls in progress finish within it.
	DrainTimeout time.Duration
	// DrainDelay is how long the HTTP transport keeps serving after ctx is
	// done and before it drains (default 0: none). Every answer in it
	// closes its connection, so a client on a kept-alive connection opens
	// a new one for its next request, which a Service sends to a replica
	// that is not terminating, while the endpoints drop this one.
	DrainDelay time.Duration
	// RateLimit bounds how often one caller may send requests and call
	// each tool (see ratelimit.go); on by default, never on stdio.
	RateLimit RateLimitOptions
}

// BindFlags binds the options that `kubepact mcp` exposes to fs, with the
// current field values as defaults. Call it on an Options holding defaults,
// e.g. one from [DefaultOptions].
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Transport, "transport", "t", o.Transport, "transport: stdio or http")
	fs.StringVar(&o.Workspace, "workspace", o.Workspace, "directory below which the authoring tools read and write")
	fs.BoolVar(&o.ReadOnly, "read-only", o.ReadOnly, "register no tool that can write anything")
	fs.Var((*familiesValue)(&o.Families), "families", "comma-separated tool families to serve: "+strings.Join(familyNames(knownFamilies()), ", "))
	o.BindHTTPFlags(fs)
	fs.BoolVar(&o.AllowUnauthenticatedRemote, "allow-unauthenticated-remote", o.AllowUnauthenticatedRemote, "allow listening beyond loopback without --auth-token-file (logged as a warning)")
	o.Budget.BindFlags(fs)
	o.Fleet.BindFlags(fs)
	o.Catalog.BindFlags(fs)
}

// BindHTTPFlags binds the HTTP option group that every shape serving MCP
// over HTTP shares (`kubepact mcp -t http`, `kubepact sidecar`): address,
// authentication, allow-lists, limits, timeouts and the drain. Defaults
// are the current field values.
func (o *HTTPOptions) BindHTTPFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", o.Listen, "address the HTTP transport binds to; anything but loopback needs --auth-token-file")
	fs.IntVar(&o.Port, "port", o.Port, "HTTP port (the endpoint is /mcp)")
	fs.StringVar(&o.AuthTokenFile, "auth-token-file", o.AuthTokenFile, "file holding the bearer token every HTTP request must carry")
	fs.StringSliceVar(&o.AllowedHosts, "allowed-host", o.AllowedHosts, "Host header name accepted besides loopback (repeatable; DNS-rebinding allow-list)")
	fs.StringSliceVar(&o.AllowedOrigins, "allowed-origin", o.AllowedOrigins, "browser Origin accepted besides loopback and --allowed-host ones (repeatable)")
	fs.DurationVar(&o.SessionTimeout, "session-timeout", o.SessionTimeout, "close HTTP sessions idle this long")
	fs.IntVar(&o.MaxSessions, "max-sessions", o.MaxSessions, "most HTTP sessions open at once; a new one evicts the session idle longest, or is refused when all are busy (a session holding only its GET stream is idle)")
	fs.IntVar(&o.MaxSessionsPerIdentity, "max-sessions-per-identity", o.MaxSessionsPerIdentity, "most HTTP sessions one caller (identity, or client IP without authentication) holds; its new one evicts its own session idle longest, or is refused when all of its are busy (at most --max-sessions)")
	fs.IntVar(&o.MaxConnections, "max-connections", o.MaxConnections, "most HTTP connections open at once; a new one takes the slot of the connection waiting longest, or is refused when all are serving")
	fs.Int64Var(&o.MaxRequestBytes, "max-request-bytes", o.MaxRequestBytes, "largest request accepted: an HTTP request body, or a line on stdio")
	fs.Int64Var(&o.MaxRequestBytesInFlight, "max-request-bytes-in-flight", o.MaxRequestBytesInFlight, "HTTP request bytes held at once, one caller at most an eighth (at least --max-request-bytes); past it a request is refused (503, 429) unread (0: 1/256 of GOMEMLIMIT, else 16 times --max-request-bytes; at least --max-request-bytes)")
	fs.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", o.ReadHeaderTimeout, "how long a client may take to send a request's headers")
	fs.DurationVar(&o.ReadTimeout, "read-timeout", o.ReadTimeout, "how long a client may take to send a whole request, body included")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", o.IdleTimeout, "how long a keep-alive connection may wait for its next request")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", o.DrainTimeout, "on shutdown (SIGTERM), how long calls in progress may take to finish, however many sessions are open")
	fs.DurationVar(&o.DrainDelay, "drain-delay", o.DrainDelay, "on shutdown (SIGTERM), how long to keep serving before the drain, every answer closing its connection, so kept-alive clients reconnect to another replica while a Service drops this one (0: none)")
	o.RateLimit.BindFlags(fs)
}

// FlagNames maps the option fields that an [OptionError] names to the flags
// BindFlags binds, so a command can print its own flag names
// ([OptionError.Named]; the library's errors name fields: an operator fills
// them from a resource, not from flags).
var FlagNames = map[string]string{
	"Transport": "--transport", "Listen": "--listen", "Port": "--port", "Workspace": "--workspace",
	"ReadOnly": "--read-only", "Families": "--families", "AuthTokenFile": "--auth-token-file",
	"AllowUnauthenticatedRemote": "--allow-unauthenticated-remote", "AllowedHosts": "--allowed-host",
	"AllowedOrigins": "--allowed-origin", "SessionTimeout": "--session-timeout",
	"MaxRequestBytes": "--max-request-bytes", "MaxRequestBytesInFlight": "--max-request-bytes-in-flight", "DrainTimeout": "--drain-timeout", "DrainDelay": "--drain-delay",
	"MaxSessions": "--max-sessions", "MaxSessionsPerIdentity": "--max-sessions-per-identity", "MaxConnections": "--max-connections",
	"ReadHeaderTimeout": "--read-header-timeout", "ReadTimeout": "--read-timeout", "IdleTimeout": "--idle-timeout",
	"Fleet.Enabled": "--fleet", "Fleet.Local": "--local", "Fleet.OCI": "--oci",
	"Fleet.TargetState": "--target-state", "Fleet.Freshness": "--freshness", "Fleet.Retention": "--snapshot-retention", "Fleet.Traces": "--traces",
	"Catalog.Roots": "--root", "Catalog.Refresh": "--catalog-refresh",
	"Catalog.Bounds.MaxDepth": "--catalog-max-depth", "Catalog.Bounds.MaxRevisions": "--catalog-max-revisions",
	"Budget.MaxCalls": "--max-expensive-calls", "Budget.MaxCallsPerCaller": "--max-expensive-calls-per-caller",
	"Budget.CallTimeout": "--expensive-call-timeout", "Budget.BundleMemory": "--max-bundle-memory",
	"Budget.CallBundleMemory": "--max-call-bundle-memory",
	"RateLimit.RequestRate":   "--rate-limit-requests", "RateLimit.RequestBurst": "--rate-limit-requests-burst",
	"RateLimit.ToolCallRate": "--rate-limit-tool-calls", "RateLimit.ToolCallBurst": "--rate-limit-tool-calls-burst",
	"RateLimit.MaxCallers": "--rate-limit-callers",
}

// FlagWords rewrites the option field names in s into the flags names
// maps them to, for text that names fields in free words rather than as an
// [OptionError]: the capability projection's warnings, withheld reasons and
// errors (openapitools.FlagNames) and the registry client's (oci.FlagNames).
// Only whole names are replaced, at the start or after a space, quote,
// parenthesis or comma.
func FlagWords(s string, names ...map[string]string) string {
	for _, m := range names {
		for field, flag := range m {
			s = replaceWord(s, field, flag)
		}
	}
	return s
}

func replaceWord(s, word, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(word)
		before := i == 0 || strings.ContainsRune(" \t(\"'`,", rune(s[i-1]))
		after := end == len(s) || !isIdent(s[end])
		b.WriteString(s[:i])
		if before && after {
			b.WriteString(with)
		} else {
			b.WriteString(word)
		}
		s = s[end:]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// DefaultOptions returns Options holding every default, ready for BindFlags.
func DefaultOptions() *Options {
	o := &Options{}
	o.setDefaults()
	return o
}

// setDefaults fills zero fields. It leaves Workspace empty when the current
// directory cannot be read; validate reports that.
func (o *Options) setDefaults() {
	if o.Transport == "" {
		o.Transport = TransportStdio
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Workspace == "" {
		o.Workspace = "."
	}
	if abs, err := filepath.Abs(o.Workspace); err == nil {
		o.Workspace = abs
	} else {
		o.Workspace = ""
	}
	if o.Families == nil {
		o.Families = slices.Clone(DefaultFamilies)
	}
	o.Families = o.Fleet.families(o.Families)
	o.Families = o.Catalog.families(o.Families)
	o.SessionTimeout = cmp.Or(o.SessionTimeout, DefaultSessionTimeout)
	o.MaxRequestBytes = cmp.Or(o.MaxRequestBytes, DefaultMaxRequestBytes)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, DefaultDrainTimeout)
	o.MaxSessions = cmp.Or(o.MaxSessions, DefaultMaxSessions)
	o.MaxSessionsPerIdentity = cmp.Or(o.MaxSessionsPerIdentity, DefaultMaxSessionsPerIdentity)
	o.MaxConnections = cmp.Or(o.MaxConnections, DefaultMaxConnections)
	o.ReadHeaderTimeout = cmp.Or(o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, DefaultReadTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	o.Budget.setDefaults()
	o.RateLimit.setDefaults()
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
}

// validate reports the first inconsistent option.
func (o *Options) validate() error {
	switch o.Transport {
	case TransportStdio, TransportHTTP:
	default:
		return optionErrorf("Transport", "%q: want %s or %s", o.Transport, TransportStdio, TransportHTTP)
	}
	if o.Port < 1 || o.Port > 65535 {
		return optionErrorf("Port", "%d: want 1..65535", o.Port)
	}
	if net.ParseIP(o.Listen) == nil && o.Listen != "localhost" {
		return optionErrorf("Listen", "%q: want an IP address or localhost", o.Listen)
	}
	if o.Workspace == "" {
		return optionErrorf("Workspace", ": cannot determine the current directory")
	}
	if err := o.Fleet.validate(o.Families); err != nil {
		return err
	}
	if err := o.Catalog.validate(o.Families); err != nil {
		return err
	}
	if err := o.Budget.validate(); err != nil {
		return err
	}
	if err := o.RateLimit.validate(); err != nil {
		return err
	}
	known := knownFamilies(o.allFamilies()...)
	for _, f := range o.Families {
		if !slices.Contains(known, f) {
			return optionErrorf("Families", ": unknown family %q (known: %s)", f, strings.Join(familyNames(known), ", "))
		}
	}
	for _, n := range []struct {
		field string
		value int64
	}{
		{"SessionTimeout", int64(o.SessionTimeout)}, {"DrainTimeout", int64(o.DrainTimeout)}, {"DrainDelay", int64(o.DrainDelay)},
		{"MaxRequestBytes", o.MaxRequestBytes}, {"MaxRequestBytesInFlight", o.MaxRequestBytesInFlight}, {"ReadHeaderTimeout", int64(o.ReadHeaderTimeout)},
		{"ReadTimeout", int64(o.ReadTimeout)}, {"IdleTimeout", int64(o.IdleTimeout)},
	} {
		if n.value < 0 {
			return optionErrorf(n.field, "must not be negative")
		}
	}
	if o.MaxRequestBytesInFlight != 0 && o.MaxRequestBytesInFlight < o.MaxRequestBytes {
		return optionErrorf("MaxRequestBytesInFlight", "%d is less than %s (%d), so a request of the largest size accepted could never be read: raise it, or lower %[2]s", o.MaxRequestBytesInFlight, fieldName("MaxRequestBytes"), o.MaxRequestBytes)
	}
	if o.MaxSessions < 0 {
		return optionErrorf("MaxSessions", "%d: want a positive number (0 means the default, %d)", o.MaxSessions, DefaultMaxSessions)
	}
	if o.MaxSessionsPerIdentity < 0 {
		return optionErrorf("MaxSessionsPerIdentity", "%d: want a positive number (0 means the default, %d; above %s it is %[3]s)", o.MaxSessionsPerIdentity, DefaultMaxSessionsPerIdentity, fieldName("MaxSessions"))
	}
	if o.MaxConnections < 0 {
		return optionErrorf("MaxConnections", "%d: want a positive number (0 means the default, %d)", o.MaxConnections, DefaultMaxConnections)
	}
	if o.AuthTokenFile != "" && o.Authenticator != nil {
		return optionErrorf("AuthTokenFile", "and Authenticator both authenticate requests: set one of them")
	}
	if o.ProtectedResource != nil {
		if o.Authenticator == nil {
			return optionErrorf("ProtectedResource", "needs an Authenticator that checks the resource's tokens")
		}
		if err := o.ProtectedResource.validate(); err != nil {
			return optionErrorf("ProtectedResource", "%s", err.Error())
		}
	}
	if o.Scoper != nil && o.AuthTokenFile == "" && o.Authenticator == nil {
		return optionErrorf("Scoper", "needs an identity to scope by: set Authenticator (or %s)", fieldName("AuthTokenFile"))
	}
	if o.FleetRefsOnly {
		switch {
		case !o.Fleet.Enabled && o.Fleet.Builder == nil:
			return optionErrorf("FleetRefsOnly", "needs the fleet (%s or Fleet.Builder): its revisions are the only bundles it lets tools read", fieldName("Fleet.Enabled"))
		case len(o.Catalog.Roots) > 0:
			return optionErrorf("FleetRefsOnly", "and %s: catalog roots are references the fleet did not resolve; serve the catalog without FleetRefsOnly", fieldName("Catalog.Roots"))
		case slices.Contains(o.Families, FamilyAuthoring):
			return optionErrorf("FleetRefsOnly", "and the authoring family: its tools take paths in the workspace; serve the fleet and payload families only")
		}
	}
	if o.Scoper != nil {
		// Only the fleet family answers through a scoped view; another
		// family that reads the fleet (payload's fleet names, the catalog)
		// would show what the caller may not see.
		for _, f := range o.Families {
			if f != FamilyFleet {
				return optionErrorf("Scoper", "scopes only the fleet family; family %s would answer unscoped: serve it without a Scoper", f)
			}
		}
	}
	if o.Transport == TransportHTTP && !netx.IsLoopbackHost(o.Listen) && o.AuthTokenFile == "" && o.Authenticator == nil && !o.AllowUnauthenticatedRemote {
		return optionErrorf("Listen", "%s reaches beyond loopback without authentication: set %s (or an Authenticator), or %s to accept that risk", o.Listen, fieldName("AuthTokenFile"), fieldName("AllowUnauthenticatedRemote"))
	}
	return nil
}

// OptionError is an option [NewServer] refuses. It names the option field, not
// a flag: the options may come from a resource as well as from flags.
// [OptionError.Named] says it with a command's own names for the fields
// (FlagNames for the flags [Options.BindFlags] binds).
type OptionError struct {
	// Field is the option refused, as a Go selector below Options
	// ("Listen", "Fleet.Local", "Catalog.Roots[2]").
	Field string
	// Message says what is wrong and what to do, naming fields as fields.
	Message string

	// format and args are Message before it was written: the args of type
	// fieldName are the other options it names, which Named renders through a
	// command's names.
	format string
	args   []any
}

// fieldName is an option field named in an [OptionError]'s message.
type fieldName string

func (e *OptionError) Error() string { return joinField(e.Field, e.Message) }

// Named is the error's text with Field and every option field its message
// names given by names (FlagNames, for a command binding [Options.BindFlags];
// a field names lacks keeps its own name): what a command prints. Only the
// fields are named differently; every other word is Error's.
func (e *OptionError) Named(names map[string]string) string {
	msg := e.Message
	if e.format != "" {
		args := slices.Clone(e.args)
		for i, a := range args {
			if f, ok := a.(fieldName); ok {
				args[i] = nameOf(string(f), names)
			}
		}
		msg = fmt.Sprintf(e.format, args...)
	}
	return joinField(nameOf(e.Field, names), msg)
}

// nameOf is field's name in names; an indexed field ("Catalog.Roots[2]")
// is its list's name with the index.
func nameOf(field string, names map[string]string) string {
	if n, ok := names[field]; ok {
		return n
	}
	if list, index, ok := strings.Cut(field, "["); ok {
		if n, ok := names[list]; ok {
			return n + "[" + index
		}
	}
	return field
}

// joinField puts a field before its message: a message that starts with
// punctuation (": …", ", …") follows the field directly.
func joinField(field, msg string) string {
	if strings.HasPrefix(msg, ":") || strings.HasPrefix(msg, ",") {
		return field + msg
	}
	return field + " " + msg
}

func optionErrorf(f, format string, args ...any) error {
	e := &OptionError{Field: f, format: format, args: args}
	e.Message = fmt.Sprintf(format, args...)
	return e
}

// familiesValue adapts []Family to a comma-separated pflag value.
type familiesValue []Family

func (v *familiesValue) String() string { return strings.Join(familyNames(*v), ",") }
func (v *familiesValue) Type() string   { return "families" }

func (v *familiesValue) Set(s string) error {
	out := []Family{}
	for name := range strings.SplitSeq(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, Family(name))
		}
	}
	*v = out
	return nil
}

func familyNames(fs []Family) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}
