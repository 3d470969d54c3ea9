package mcp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName is the implementation name sent in serverInfo.
const ServerName = "kubepact"

// reservedPrefix marks kubepact's own tools. The whole prefix is reserved:
// no generated tool may carry it.
const reservedPrefix = "pacto_"

// FixedListTTL is the ttlMs hint (2026-07-28 caching, SEP-2549) of what
// is fixed for a server's life: server/discover, tools/list, prompts/list,
// resources/list and resources/templates/list (every family registers its
// tools, prompts and resources once, in NewServer), and reads of
// resources that never change. It is not longer because a restarted
// server with other options or another bundle answers on the same URL.
const FixedListTTL = 15 * time.Minute

// Server is one assembled MCP server: its tools, instructions and
// transports. It is safe for concurrent use; every session shares it.
type Server struct {
	opts    Options
	log     logr.Logger
	audit   logr.Logger
	sdk     *sdk.Server
	metrics *metrics
	budget  *budget     // the expensive calls' bounds
	rates   *rateLimits // the HTTP callers' request and tool-call rates

	tools    map[string]*tool // registered tools by name
	families []familyState    // every known family and what it contributed
	withheld []string         // write tools left out because of ReadOnly
	// listed is the tools as NewServer handed them to the SDK, which
	// serves tools/list from those very values; ToolSurfaceDigest reads
	// them, unless listedElsewhere: an extension family could configure
	// the SDK server or register tools of its own, and so could a caller
	// of SDK.
	listed          []*sdk.Tool
	listedElsewhere atomic.Bool

	servedURL   atomic.Pointer[string] // the endpoint Serve listens on, for pacto_server_info
	httpHandler http.Handler           // /mcp behind the Host, Origin and bearer checks; Serve mounts it
	sessions    *sessionTable          // the HTTP sessions of the 2025 era
	reqBytes    *requestBytes          // the HTTP request bodies held at once
	gate        drainGate              // HTTP calls in progress, for shutdown
	delaying    atomic.Bool            // in the drain delay: answers close their connections

	confirms *confirmations // the generated tools' confirmations, with this server's secret

	stop context.CancelFunc // ends the families' background work
	wg   sync.WaitGroup     // that work, for Close to wait on
}

// familyState records what a family contributed, for the instructions and
// pacto_server_info.
type familyState struct {
	*family
	enabled    bool
	parts      *familyParts // nil when the family is off
	registered []*tool      // the tools registered, sorted by name
	tools      []string     // their names
}

// NewServer assembles a server from opts (nil means defaults): it builds
// the selected tool families, leaves out every tool that can write when
// ReadOnly is set, and registers the rest explicitly on one SDK server.
// ctx bounds the start-up I/O (collecting the fleet sources) and the life
// of the server's background work (the fleet's watch on its local
// directories and target-state file), which ends when ctx is done or
// [Server.Close] is called, whichever comes first. Call Close when done
// with the server: it returns once that work has ended.
func NewServer(ctx context.Context, opts *Options) (_ *Server, err error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{opts: *opts, tools: map[string]*tool{}}
	s.opts.Families = slices.Clone(opts.Families)
	s.opts.setDefaults()
	if err := s.opts.validate(); err != nil {
		return nil, err
	}
	s.log = s.opts.Logger
	if s.log.GetSink() == nil {
		s.log = logr.Discard()
	}
	s.audit = s.log.WithName("audit")

	if s.opts.AuthTokenFile != "" {
		tok, err := readToken(s.opts.AuthTokenFile)
		if err != nil {
			return nil, err
		}
		s.opts.Authenticator = staticToken{sum: sha256.Sum256(tok)}
	}
	if s.metrics, err = newMetrics(s.opts.Registerer); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	if s.rates, err = newRateLimits(s.opts.RateLimit, s.opts.Registerer, time.Now); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}

	bg, stop := context.WithCancel(ctx)
	s.stop = stop
	// A server that is not returned has nothing running behind it.
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	s.confirms = newConfirmations(s.log.WithName("confirm"))
	s.budget = newBudget(s.opts.Budget)
	env := &familyEnv{opts: &s.opts, log: s.log, bg: bg, wg: &s.wg, confirms: s.confirms, budget: s.budget}
	var all []*tool
	for _, f := range s.opts.allFamilies() {
		st := familyState{family: f, enabled: env.enabled(f.name)}
		if st.enabled {
			parts, err := f.build(ctx, env)
			if err != nil {
				return nil, fmt.Errorf("family %s: %w", f.name, err)
			}
			st.parts = parts
			for _, t := range parts.tools {
				// An extension's tools are neither (it refuses the prefix itself).
				if t.generated == strings.HasPrefix(strings.ToLower(t.name), reservedPrefix) && !parts.extension {
					return nil, fmt.Errorf("tool %s: kubepact's own tools, and only they, carry the %s prefix", t.name, reservedPrefix)
				}
				if t.writes() && s.opts.ReadOnly {
					s.withheld = append(s.withheld, t.name)
					continue
				}
				st.registered = append(st.registered, t)
				all = append(all, t)
			}
			slices.SortFunc(st.registered, func(a, b *tool) int { return strings.Compare(a.name, b.name) })
			for _, t := range st.registered {
				st.tools = append(st.tools, t.name)
			}
		}
		s.families = append(s.families, st)
	}
	info, err := s.serverInfoTool()
	if err != nil {
		return nil, err
	}
	all = append(all, info)

	for _, t := range all {
		if _, dup := s.tools[t.name]; dup {
			return nil, fmt.Errorf("tool %s registered twice", t.name)
		}
		s.tools[t.name] = t
	}
	// The instructions describe the final tool set, so they are written
	// after s.tools is complete.
	sopts := &sdk.ServerOptions{
		Instructions: s.instructions(),
		Logger:       sdkLogger(s.log.WithName("sdk")),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		// Pages of a bounded number of tools, each of bounded size (see
		// capability's per-tool schema bound): a large API's tools/list
		// stays within what a client reads as one message.
		PageSize:     ListPageSize,
		SetCacheable: s.cacheHints,
	}
	for _, f := range s.families {
		if f.parts != nil && f.parts.configure != nil {
			f.parts.configure(sopts)
		}
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "kubepact", Version: s.opts.Version}, sopts)
	outputs := map[*jsonschema.Schema]any{}
	lean := slices.ContainsFunc(s.families, func(f familyState) bool { return f.parts != nil && f.parts.leanList })
	for _, t := range all {
		st := t.sdkToolShared(outputs)
		if lean {
			st.OutputSchema = nil
		}
		s.sdk.AddTool(st, s.handler(t))
		s.listed = append(s.listed, st)
	}
	if slices.ContainsFunc(s.families, func(f familyState) bool {
		return f.parts != nil && (f.parts.extension || f.parts.configure != nil)
	}) {
		s.listedElsewhere.Store(true)
	}
	for _, f := range s.families {
		if f.parts != nil && f.parts.register != nil {
			f.parts.register(s.sdk)
		}
	}
	// Middleware added later wraps what came before: the audit sees the
	// withheld-tool answer like any other.
	s.sdk.AddReceivingMiddleware(s.answerWithheld())
	s.sdk.AddReceivingMiddleware(s.limitToolCalls())
	s.sdk.AddReceivingMiddleware(s.observe())
	s.sdk.AddReceivingMiddleware(s.traceRequests())
	s.httpHandler = s.newHTTPHandler()
	return s, nil
}

// cacheHints sets the caching hints of list and read results (ttlMs,
// cacheScope): lists are fixed for the server's life; a read lasts as
// long as the family owning the resource says (by readTTL, or, when what
// it served decides, by the ttlMs its handler set on the result, which c
// holds on entry), else it is not cached.
// Behind a bearer token the scope is private, so that no intermediary
// hands what a token holder read to anyone else. The SDK calls it with
// its own lock held: it reads only what NewServer settled.
func (s *Server) cacheHints(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	ttl := FixedListTTL
	if r, ok := req.(*sdk.ReadResourceRequest); ok {
		ttl = time.Duration(max(c.TTLMs, 0)) * time.Millisecond
		for _, f := range s.families {
			if f.parts == nil || f.parts.readTTL == nil || r.Params == nil {
				continue
			}
			if d, ok := f.parts.readTTL(r.Params.URI); ok {
				ttl = d
				break
			}
		}
	}
	c.TTLMs = int(ttl.Milliseconds())
	c.CacheScope = "public"
	if s.opts.Authenticator != nil {
		c.CacheScope = "private"
	}
}

// Close stops the server's background work (the fleet's watch on its
// local sources) and returns once it has ended. It does not stop Run or
// Serve, whose ctx does that. Calling it again does nothing.
func (s *Server) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
	return nil
}

// ToolNames returns the names of the registered tools, sorted.
func (s *Server) ToolNames() []string {
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SDK returns the underlying go-sdk server, to connect further transports
// (e.g. in-memory ones in tests). ToolSurfaceDigest then lists the tools
// as a client does, in case tools were added to it.
func (s *Server) SDK() *sdk.Server {
	s.listedElsewhere.Store(true)
	return s.sdk
}

// Run serves the transport Options chose until ctx is done or, on stdio,
// the client goes away. A cancelled ctx is a clean stop, not an error.
func (s *Server) Run(ctx context.Context) error {
	switch s.opts.Transport {
	case TransportHTTP:
		addr := net.JoinHostPort(s.opts.Listen, strconv.Itoa(s.opts.Port))
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("listening for MCP over HTTP: %w", err)
		}
		return s.Serve(ctx, ln)
	default:
		s.log.Info("Serving MCP on stdio", "tools", s.ToolNames(), "readOnly", s.opts.ReadOnly, "workspace", s.opts.Workspace)
		err := s.serveStdio(ctx, s.opts.Stdin, s.opts.Stdout)
		if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("serving MCP on stdio: %w", err)
	}
}

// readToken reads the bearer token file: one non-empty line.
func readToken(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("AuthTokenFile: %w", err)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return nil, fmt.Errorf("AuthTokenFile %s: want one non-empty token without whitespace", path)
	}
	return []byte(tok), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// sdkLogger bridges the SDK's slog output to l, one verbosity level down
// for everything below a warning: the SDK narrates every connection at
// Info, which would drown the audit lines.
func sdkLogger(l logr.Logger) *slog.Logger {
	return slog.New(quieter{logr.ToSlogHandler(l)})
}

type quieter struct{ slog.Handler }

func demote(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return l - 1
	}
	return l
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.Handler.Enabled(ctx, demote(l))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler { return quieter{q.Handler.WithAttrs(as)} }
func (q quieter) WithGroup(name string) slog.Handler    { return quieter{q.Handler.WithGroup(name)} }
