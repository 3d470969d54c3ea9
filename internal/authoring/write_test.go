package authoring

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// snapshot maps every path below ws (directories with a trailing slash) to
// its content, so a test can say a call left the workspace as it was.
func snapshot(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cancellingWriter cancels its context on the first write, as a client that
// goes away while the call is writing.
type cancellingWriter struct {
	w      io.Writer
	cancel context.CancelFunc
}

func (c *cancellingWriter) Write(p []byte) (int, error) {
	c.cancel()
	return c.w.Write(p)
}

// TestInterruptedWritesLeaveNoTrace: a create or an edit that fails part-way
// (an injected write error on the last file) or is cancelled while writing
// leaves the workspace exactly as it was: no new files, no temporary
// files, no empty directories, and updated files with their old content.
func TestInterruptedWritesLeaveNoTrace(t *testing.T) {
	existing := map[string]string{
		"tiny/pacto.yaml":                minimalContract + "configurations:\n  - name: default\n    schema: configuration/schema.json\n    required: true\n",
		"tiny/configuration/schema.json": `{"type": "object", "properties": {"A": {"type": "string"}}}` + "\n",
	}
	create := func(ctx context.Context, a *Authoring) error {
		_, err := a.Create(ctx, CreateRequest{Name: "svc", Path: "deep/er/svc",
			Interfaces:       []InterfaceSpec{{Name: "api", Type: "openapi"}, {Name: "events", Type: "asyncapi"}},
			ConfigProperties: []ConfigProperty{{Name: "LOG_LEVEL"}}})
		return err
	}
	edit := func(ctx context.Context, a *Authoring) error {
		_, err := a.Edit(ctx, EditRequest{Path: "tiny",
			AddInterfaces:       []InterfaceSpec{{Name: "api", Type: "openapi"}},
			AddConfigProperties: []ConfigProperty{{Name: "LOG_LEVEL"}}})
		return err
	}
	for _, tt := range []struct {
		name   string
		call   func(context.Context, *Authoring) error
		cancel bool
	}{
		{"create fails", create, false},
		{"create cancelled", create, true},
		{"edit fails", edit, false},
		{"edit cancelled", edit, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, ws := newTestAuthoring(t, existing)
			before := snapshot(t, ws)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			a.wrapWriter = func(rel string, w io.Writer) io.Writer {
				if !strings.HasSuffix(rel, "pacto.yaml") {
					return w // the specs and the schema are written first
				}
				if tt.cancel {
					return &cancellingWriter{w: w, cancel: cancel}
				}
				return &failingWriter{w: w, n: 20}
			}
			err := tt.call(ctx, a)
			var ae *Error
			if !errors.As(err, &ae) || ae.Code != CodeInternal {
				t.Fatalf("interrupted call = %v, want an INTERNAL error", err)
			}
			if tt.cancel && !strings.Contains(ae.Message, "cancelled") {
				t.Errorf("cancelled call: %q does not say it was cancelled", ae.Message)
			}
			if diff := cmp.Diff(before, snapshot(t, ws)); diff != "" {
				t.Errorf("workspace after the interrupted call (-before +after):\n%s", diff)
			}
		})
	}
}
