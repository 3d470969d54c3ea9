package mcp

import (
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

	"github.com/kubepact/kubepact/bundle/capability"
	"github.com/kubepact/kubepact/bundle/oci"
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

// Defaults applied by [New] to zero fields of [Options].
const (
	DefaultPort            = 8585
	DefaultListen          = "127.0.0.1"
	DefaultSessionTimeout  = 30 * time.Minute
	DefaultMaxRequestBytes = 4 << 20
	DefaultShutdownTimeout = 10 * time.Second
	defaultReadHeaderWait  = 10 * time.Second
	defaultIdleConnTimeout = 2 * time.Minute
)

// DefaultFamilies are the families a server registers when
// [Options.Families] is nil.
var DefaultFamilies = []Family{FamilyAuthoring}

// Options configures a [Server]. The zero value of every field means its
// documented default, and a nil *Options means all defaults.
type Options struct {
	// Transport is TransportStdio (default) or TransportHTTP.
	Transport string
	// Listen is the address the HTTP transport binds to (default 127.0.0.1).
	Listen string
	// Port is the HTTP port (default 8585). To serve on a listener of your
	// own (a free port, a manager), use [Server.Serve] or [Server.Handler].
	Port int
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

	// AuthTokenFile names a file whose trimmed content is the bearer token
	// every HTTP request must carry. Empty means no authentication.
	AuthTokenFile string
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
	// MaxRequestBytes bounds an HTTP request body (default 4 MiB).
	MaxRequestBytes int64
	// ShutdownTimeout bounds the graceful HTTP shutdown (default 10s).
	ShutdownTimeout time.Duration

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
	// Stdin and Stdout are the stdio transport's streams (default os.Stdin
	// and os.Stdout).
	Stdin  io.Reader
	Stdout io.Writer
}

// BindFlags binds the options that `kubepact mcp` exposes to fs, with the
// current field values as defaults. Call it on an Options holding defaults,
// e.g. one from [DefaultOptions].
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Transport, "transport", "t", o.Transport, "transport: stdio or http")
	fs.StringVar(&o.Listen, "listen", o.Listen, "address the HTTP transport binds to; anything but loopback needs --auth-token-file or --allow-unauthenticated-remote")
	fs.IntVar(&o.Port, "port", o.Port, "HTTP port")
	fs.StringVar(&o.Workspace, "workspace", o.Workspace, "directory below which the authoring tools read and write")
	fs.BoolVar(&o.ReadOnly, "read-only", o.ReadOnly, "register no tool that can write anything")
	fs.Var((*familiesValue)(&o.Families), "families", "comma-separated tool families to serve: "+strings.Join(familyNames(knownFamilies), ", "))
	fs.StringVar(&o.AuthTokenFile, "auth-token-file", o.AuthTokenFile, "file holding the bearer token every HTTP request must carry")
	fs.BoolVar(&o.AllowUnauthenticatedRemote, "allow-unauthenticated-remote", o.AllowUnauthenticatedRemote, "allow listening beyond loopback without --auth-token-file (logged as a warning)")
	fs.StringSliceVar(&o.AllowedHosts, "allowed-host", o.AllowedHosts, "Host header name accepted besides loopback (repeatable; DNS-rebinding allow-list)")
	fs.StringSliceVar(&o.AllowedOrigins, "allowed-origin", o.AllowedOrigins, "browser Origin accepted besides loopback and --allowed-host ones (repeatable)")
	fs.DurationVar(&o.SessionTimeout, "session-timeout", o.SessionTimeout, "close HTTP sessions idle this long")
	fs.Int64Var(&o.MaxRequestBytes, "max-request-bytes", o.MaxRequestBytes, "largest HTTP request body accepted")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "how long a graceful HTTP shutdown may take")
	o.Fleet.BindFlags(fs)
}

// FlagNames maps the option fields that errors from [New] name to the
// flags BindFlags binds, so a command can print its own flag names (the
// library's errors name fields: an operator fills them from a resource,
// not from flags).
var FlagNames = map[string]string{
	"Transport": "--transport", "Listen": "--listen", "Port": "--port", "Workspace": "--workspace",
	"ReadOnly": "--read-only", "Families": "--families", "AuthTokenFile": "--auth-token-file",
	"AllowUnauthenticatedRemote": "--allow-unauthenticated-remote", "AllowedHosts": "--allowed-host",
	"AllowedOrigins": "--allowed-origin", "SessionTimeout": "--session-timeout",
	"MaxRequestBytes": "--max-request-bytes", "ShutdownTimeout": "--shutdown-timeout",
	"Fleet.Enabled": "--fleet", "Fleet.Local": "--local", "Fleet.OCI": "--oci",
	"Fleet.TargetState": "--target-state", "Fleet.Freshness": "--freshness", "Fleet.Retention": "--snapshot-retention",
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
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
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
	if err := o.Fleet.validate(); err != nil {
		return err
	}
	for _, f := range o.Families {
		if !slices.Contains(knownFamilies, f) {
			return optionErrorf("Families", ": unknown family %q (known: %s)", f, strings.Join(familyNames(knownFamilies), ", "))
		}
	}
	if o.SessionTimeout < 0 || o.ShutdownTimeout < 0 || o.MaxRequestBytes < 0 {
		return fmt.Errorf("SessionTimeout, ShutdownTimeout and MaxRequestBytes must not be negative")
	}
	if o.Transport == TransportHTTP && !capability.IsLoopbackHost(o.Listen) && o.AuthTokenFile == "" && !o.AllowUnauthenticatedRemote {
		return optionErrorf("Listen", "%s reaches beyond loopback without authentication: set AuthTokenFile, or AllowUnauthenticatedRemote to accept that risk", o.Listen)
	}
	return nil
}

// OptionError is an option [New] refuses. It names the option field, not
// a flag: the options may come from a resource as well as from flags
// (FlagNames maps them for a command).
type OptionError struct {
	Field   string
	Message string
}

func (e *OptionError) Error() string {
	if strings.HasPrefix(e.Message, ":") {
		return e.Field + e.Message
	}
	return e.Field + " " + e.Message
}

func optionErrorf(field, format string, args ...any) error {
	return &OptionError{Field: field, Message: fmt.Sprintf(format, args...)}
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
