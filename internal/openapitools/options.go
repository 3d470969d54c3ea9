package openapitools

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Defaults applied to zero fields of [Options].
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// Options configures projection and invocation. The zero value (and a nil
// *Options) means: read-only (GET and HEAD), base URL from the spec, no
// credentials, 30 s per call, 1 MiB per response.
type Options struct {
	// BaseURL is the service's base URL. Empty means the first server URL
	// of each spec, with its variables' defaults applied.
	BaseURL string
	// Auth holds credentials as name=value, one per security scheme name.
	Auth []string
	// AuthFiles holds credentials as name=PATH: the trimmed content of the
	// file (e.g. a mounted Secret) is the credential.
	AuthFiles []string
	// AllowWrites exposes every method, not only GET and HEAD.
	AllowWrites bool
	// MaxNameLength caps tool names (default DefaultNameCap, 64; from
	// MinNameCap to MaxNameLength): a longer name is abbreviated and
	// ends in a suffix derived from the full name (see the package doc).
	MaxNameLength int
	// ToolMode is how operations are offered: ToolModeAll (the default,
	// also ""; one tool per operation), ToolModeDiscover (search, describe
	// and call tools) or ToolModeAuto: discover above AutoDiscoverTools
	// tools or AutoDiscoverTokens estimated tokens of tool definitions.
	ToolMode string
	// ToolPins names operations (by tool name) offered as tools of their
	// own beside the discovery tools.
	ToolPins []string
	// AllowOperations, when not empty, exposes only the named tools.
	AllowOperations []string
	// AllowListSet makes an empty AllowOperations expose nothing: an
	// allow list was given and names only tools of other kinds (gRPC).
	AllowListSet bool
	// DenyOperations withholds the named tools; it wins over AllowOperations.
	DenyOperations []string
	// IncludeTags, when not empty, exposes only operations carrying one of
	// these tags (as the spec writes them); ExcludeTags withholds those
	// carrying any of them. Withheld with reason FILTERED.
	IncludeTags, ExcludeTags []string
	// IncludePaths, when not empty, exposes only operations whose path lies
	// under one of these prefixes, compared segment by segment (/repos
	// holds /repos/{owner}, not /repositories); ExcludePaths withholds
	// those under any of them. Exclusions win over inclusions. Withheld
	// with reason FILTERED.
	IncludePaths, ExcludePaths []string
	// DescriptionsFile names a YAML or JSON file mapping operationIds to
	// the descriptions their tools show instead of the spec's summary and
	// description (at most MaxDescriptionsBytes, each description at most
	// MaxDescriptionBytes). An operationId no operation has is an error.
	DescriptionsFile string
	// Timeout bounds one call, response body included (default 30 s).
	Timeout time.Duration
	// MaxResponseBytes caps the response body kept (default 1 MiB); a longer
	// body is cut and the result says truncated.
	MaxResponseBytes int64
	// MaxSpecBytes is the largest OpenAPI document (or file it references)
	// read, in bytes; values under 16 MiB keep 16 MiB. A command that raises
	// a bundle's per-file limit raises this with it.
	MaxSpecBytes int64
	// Transport sends the requests; nil means a default transport. Redirects
	// are never followed whatever the transport.
	Transport http.RoundTripper
	// Lock, when set, holds the projection to this tools lock (see Lock):
	// an exposed tool that differs from it, or that it does not name, is
	// withheld with reason DRIFT. It wins over the lock a bundle carries.
	Lock *Lock
	// IgnoreBundleLock leaves the bundle's own tools.lock.json unread
	// (writing a new lock reads the bundle as it is).
	IgnoreBundleLock bool
	// AllowCredentialsInQuery lets a credential go where its security
	// scheme puts it in the URL query (apiKey, in: query). Without it such
	// a scheme is never used: a URL is logged by proxies and services and
	// shown in messages, so an operation with no other way to send the
	// credentials given is withheld (WithheldCredentialInQuery).
	AllowCredentialsInQuery bool
	// ConfirmWrites says which calls need a person's confirmation before
	// they are sent: ConfirmDelete (the default, ""), ConfirmAlways or
	// ConfirmNever. See Tool.NeedsConfirmation.
	ConfirmWrites string

	// lockedNames are the names the tools lock gives operations, by
	// opKey: set by Project from the lock it holds the projection to.
	lockedNames map[string]string
}

// BindFlags binds the flags `kubepact mcp` and `kubepact sidecar` share:
// credentials, the exposure policy and the per-call limits. The base URL is
// bound by each command (mcp: --base-url; sidecar: --upstream).
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	fs.StringArrayVar(&o.Auth, "auth", o.Auth, "service credential for an OpenAPI security scheme, as name=value (repeatable; needs an explicit base URL)")
	fs.StringArrayVar(&o.AuthFiles, "auth-file", o.AuthFiles, "service credential read from a file (e.g. a mounted Secret), as name=PATH (repeatable; needs an explicit base URL)")
	fs.BoolVar(&o.AllowWrites, "allow-writes", o.AllowWrites, "expose every operation, not only GET and HEAD")
	o.bindNamingFlags(fs)
	fs.StringSliceVar(&o.AllowOperations, "allow-operations", o.AllowOperations, "expose only these generated tools, by name (a gRPC tool also as Service/Method; comma-separated, repeatable)")
	fs.StringSliceVar(&o.DenyOperations, "deny-operations", o.DenyOperations, "never expose these generated tools, by name (a gRPC tool also as Service/Method; comma-separated, repeatable)")
	fs.StringSliceVar(&o.IncludeTags, "include-tags", o.IncludeTags, "expose only operations carrying one of these OpenAPI tags (comma-separated, repeatable)")
	fs.StringSliceVar(&o.ExcludeTags, "exclude-tags", o.ExcludeTags, "never expose operations carrying one of these OpenAPI tags (comma-separated, repeatable; wins over --include-tags)")
	fs.StringSliceVar(&o.IncludePaths, "include-paths", o.IncludePaths, "expose only operations whose path lies under one of these prefixes, segment by segment: /repos holds /repos/{owner}, not /repositories (comma-separated, repeatable)")
	fs.StringSliceVar(&o.ExcludePaths, "exclude-paths", o.ExcludePaths, "never expose operations whose path lies under one of these prefixes (comma-separated, repeatable; wins over --include-paths)")
	fs.StringVar(&o.DescriptionsFile, "descriptions-file", o.DescriptionsFile, "YAML or JSON file mapping operationIds to the descriptions their tools show instead of the spec's (at most 1 MiB, 4096 bytes per description)")
	fs.BoolVar(&o.AllowCredentialsInQuery, "allow-credentials-in-query", o.AllowCredentialsInQuery, "send a credential in the URL query where its security scheme says so (apiKey in: query); without it such operations are withheld, since URLs end up in logs")
	fs.DurationVar(&o.Timeout, "call-timeout", o.Timeout, "time limit of one call to the service, response included")
	fs.Int64Var(&o.MaxResponseBytes, "max-response-bytes", o.MaxResponseBytes, "response body bytes kept per call; the rest is cut and the result says truncated")
	if o.ConfirmWrites == "" {
		o.ConfirmWrites = ConfirmDelete
	}
	fs.StringVar(&o.ConfirmWrites, "confirm-writes", o.ConfirmWrites, "which generated tools ask the person at the client to confirm the exact request before it is sent (MCP elicitation): delete (DELETE operations), always (every operation but GET and HEAD) or never (unattended use)")
}

// FlagNames maps the option fields that errors, withheld reasons and
// warnings name to the flags BindFlags binds. BaseURL is bound by each
// command under its own name.
var FlagNames = map[string]string{
	"Auth": "--auth", "AuthFiles": "--auth-file", "AllowWrites": "--allow-writes",
	"AllowOperations": "--allow-operations", "DenyOperations": "--deny-operations",
	"Timeout": "--call-timeout", "MaxResponseBytes": "--max-response-bytes",
	"ConfirmWrites": "--confirm-writes", "AllowCredentialsInQuery": "--allow-credentials-in-query",
	"IncludeTags": "--include-tags", "ExcludeTags": "--exclude-tags",
	"IncludePaths": "--include-paths", "ExcludePaths": "--exclude-paths",
	"DescriptionsFile": "--descriptions-file",
	"MaxNameLength":    "--max-tool-name-length", "ToolMode": "--tool-mode", "ToolPins": "--tool-pin",
}

func (o *Options) withDefaults() Options {
	out := Options{}
	if o != nil {
		out = *o
	}
	if out.Timeout <= 0 {
		out.Timeout = DefaultTimeout
	}
	if out.MaxResponseBytes <= 0 {
		out.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if out.MaxNameLength == 0 {
		out.MaxNameLength = DefaultNameCap
	}
	return out
}

// credentials parses Auth and AuthFiles into scheme name → value.
func (o *Options) credentials() (map[string]string, error) {
	if len(o.Auth) == 0 && len(o.AuthFiles) == 0 {
		return nil, nil // none: read on every call, so no empty map each time
	}
	creds := map[string]string{}
	add := func(field, kv string, fromFile bool) error {
		name, val, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || val == "" {
			return fmt.Errorf("%s %q: want name=%s", field, redact(kv), map[bool]string{false: "value", true: "PATH"}[fromFile])
		}
		if fromFile {
			raw, err := os.ReadFile(val)
			if err != nil {
				return fmt.Errorf("%s %s: %w", field, name, err)
			}
			if val = strings.TrimSpace(string(raw)); val == "" {
				return fmt.Errorf("%s %s: the file is empty", field, name)
			}
		}
		if _, dup := creds[name]; dup {
			return fmt.Errorf("%s: security scheme %q is given twice", field, name)
		}
		creds[name] = val
		return nil
	}
	for _, kv := range o.Auth {
		if err := add("Auth", kv, false); err != nil {
			return nil, err
		}
	}
	for _, kv := range o.AuthFiles {
		if err := add("AuthFiles", kv, true); err != nil {
			return nil, err
		}
	}
	return creds, nil
}

// redact keeps the scheme name of a malformed credential flag and hides the
// rest, so an error message never repeats a secret.
func redact(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	if len(name) > 40 {
		name = name[:40]
	}
	return name + "=…"
}
