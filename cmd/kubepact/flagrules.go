package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/mcp"
)

// flagRule refuses flags that cannot apply to a command line: set, but
// read by nothing this command line runs, or contradicted by another
// flag. A flag accepted and ignored reads, to the person who typed it, as
// a setting in force.
type flagRule struct {
	// flags are the flags the rule is about, without "--".
	flags []string
	// applies reports whether, with the other options as given, the flags
	// have an effect.
	applies func() bool
	// why says what is wrong and what to do: a format whose %[1]s is the
	// flag as typed (--port).
	why string
}

// refuseInapplicable returns the first flag set on the command line that
// a rule says cannot apply, as an exit-2 error naming why.
func refuseInapplicable(fs *pflag.FlagSet, rules []flagRule) error {
	for _, r := range rules {
		if r.applies() {
			continue
		}
		for _, name := range r.flags {
			if f := fs.Lookup(name); f != nil && f.Changed {
				return &exitError{code: 2, msg: fmt.Sprintf(r.why, "--"+name)}
			}
		}
	}
	return nil
}

// flagsOf lists the names of the flags bind binds, by binding them on a
// scratch set: the rules follow the option groups as they grow.
func flagsOf(bind func(*pflag.FlagSet)) []string {
	fs := pflag.NewFlagSet("scratch", pflag.ContinueOnError)
	bind(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// stdioToo are the flags of mcp.Options' HTTP group that stdio reads as
// well: --max-request-bytes bounds a stdio line as it bounds an HTTP body.
var stdioToo = []string{"max-request-bytes"}

// httpFlags are the flags only the HTTP transport reads (mcp.Options'
// BindHTTPFlags group but stdioToo, and --allow-unauthenticated-remote).
func httpFlags() []string {
	names := slices.DeleteFunc(flagsOf(mcp.DefaultOptions().BindHTTPFlags), func(n string) bool { return slices.Contains(stdioToo, n) })
	return append(names, "allow-unauthenticated-remote")
}

// capabilityFlags are the flags that configure a bundle's generated
// tools, under the base-URL flag's name of the command.
func capabilityFlags(baseURLFlag string) []string {
	return flagsOf(func(fs *pflag.FlagSet) {
		o := &capabilityOptions{}
		o.bindFlags(fs, baseURLFlag, "")
		if baseURLFlag == "base-url" { // kubepact mcp's: it reaches remote gRPC targets too
			o.bindRemoteFlags(fs)
		}
	})
}

// cacheRule refuses --cache-dir beside --no-cache, on every command with
// the registry group (mcp, sidecar, check, lock, push).
func cacheRule(reg *registryOptions) flagRule {
	return flagRule{flags: []string{"cache-dir"}, applies: func() bool { return !reg.NoCache },
		why: "%[1]s names the content cache, and --no-cache turns the cache off: drop one of them"}
}

// capabilityRules are the generated tools' own contradictions: a
// confirmation policy with no write exposed to confirm. A policy that is
// not one at all is the projection's to refuse, with the accepted values.
func capabilityRules(capOpts *capabilityOptions) []flagRule {
	known := []string{openapitools.ConfirmDelete, openapitools.ConfirmAlways, openapitools.ConfirmNever}
	return []flagRule{{flags: []string{"confirm-writes"}, applies: func() bool {
		return capOpts.AllowWrites || !slices.Contains(known, capOpts.ConfirmWrites)
	},
		why: "%[1]s chooses which write operations ask for confirmation, and without --allow-writes only GET and HEAD operations are exposed, which never ask: add --allow-writes, or drop %[1]s"},
		{flags: []string{"tool-pin"}, applies: func() bool { return capOpts.ToolMode != openapitools.ToolModeAll },
			why: "%[1]s offers operations as tools of their own beside the discovery tools, and --tool-mode all offers every operation as a tool already: add --tool-mode discover (or auto), or drop %[1]s"}}
}

// sidecarFlagRules are the rules of `kubepact sidecar`. Its registry
// flags stay accepted with a mounted bundle: the injection webhook writes
// --no-cache and --plain-http into every sidecar whatever its bundle.
func sidecarFlagRules(o *sidecarOptions, capOpts *capabilityOptions, reg *registryOptions) []flagRule {
	rules := []flagRule{
		{flags: []string{"allow-remote-upstream"}, applies: func() bool { return !upstreamIsLoopback(capOpts.BaseURL) },
			why: "%[1]s permits an --upstream beyond the pod, and --upstream is loopback: drop %[1]s"},
		cacheRule(reg),
	}
	return append(rules, capabilityRules(capOpts)...)
}

// upstreamIsLoopback reports whether a sidecar's --upstream is a loopback
// URL; one that does not parse is the sidecar's own validation's to refuse.
func upstreamIsLoopback(upstream string) bool {
	u, err := url.Parse(upstream)
	return err == nil && u.Host != "" && netx.IsLoopbackHost(u.Hostname())
}

// listenFailure says why a listener could not be opened on addr, naming
// the flags that set the address, instead of Go's "listen tcp …: bind: …";
// ok is false for an error of another kind.
func listenFailure(err error, addr, flags string) (msg string, ok bool) {
	var why string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = "is already in use by another process: stop that process, or choose another address with " + flags
	case errors.Is(err, syscall.EACCES):
		why = "may not be opened by this user (a port below 1024 needs privileges): choose a port above 1023 with " + flags
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = "is not an address of this machine: choose one of its addresses (127.0.0.1 for loopback) with " + flags
	default:
		return "", false
	}
	return fmt.Sprintf("cannot listen on %s: it %s", addr, why), true
}
