package mcp

import (
	"errors"
	"fmt"

	"os"
	"path/filepath"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/traces"
)

// Observed edges on kubepact mcp: --traces files read once at start, and
// pacto_impact's per-call traces, a file confined to the workspace. The
// operator reads no trace files: its observed edges come from its OTLP
// intake, and it refuses traces with a pointer there.

// refusedTracesMessage is the operator's answer to a traces argument.
const refusedTracesMessage = "traces is not accepted by this server: it serves a cluster's fleet and reads no files from its own filesystem. Observed edges come from the operator's OTLP/HTTP trace intake (/v1/traces, enabled with --trace-intake); pass include_observed to use them"

// loadTraceFiles reads the --traces files into one observed-edge set.
// Each must be a regular file holding one OTLP/JSON export within the
// accumulator's bounds; the first that is not stops the start with an
// error naming it.
func loadTraceFiles(paths []string) (*fleetgraph.Observed, error) {
	a := traces.NewAccumulator(traces.Limits{})
	for _, p := range paths {
		f, err := openRegular(nil, p)
		if err != nil {
			return nil, optionErrorf("Fleet.Traces", "%s: %s", p, err)
		}
		_, err = a.ReadJSON(f)
		f.Close()
		if err != nil {
			return nil, optionErrorf("Fleet.Traces", "%s: %s", p, err)
		}
	}
	return a.Observed(), nil
}

// callTraces reads pacto_impact's traces argument: a path relative to the
// workspace (or absolute, inside it), one OTLP/JSON export.
func (f *fleetState) callTraces(path string) (*fleetgraph.Observed, error) {
	if f.refsOnly || f.workspace == "" {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: "traces", Message: refusedTracesMessage}
	}
	rel, err := bundle.Confine(f.workspace, path)
	if err != nil {
		why := "it cannot be resolved"
		switch {
		case errors.Is(err, bundle.ErrOutsideRoot):
			why = "it leads outside the workspace"
		case errors.Is(err, bundle.ErrLinkLoop):
			why = "its symbolic links loop"
		}
		return nil, &ToolError{Code: CodeInvalidArgument, Field: "traces",
			Message: fmt.Sprintf("traces %q is refused: %s; give the path of an OTLP/JSON export inside the workspace (--workspace), relative to it or absolute", path, why)}
	}
	root, err := os.OpenRoot(f.workspace)
	if err != nil {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: "traces", Message: "the workspace cannot be opened to read traces"}
	}
	defer root.Close()
	file, err := openRegular(root, filepath.FromSlash(rel))
	if err != nil {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: "traces", Message: fmt.Sprintf("traces %q: %s", path, err)}
	}
	defer file.Close()
	a := traces.NewAccumulator(traces.Limits{})
	if _, err := a.ReadJSON(file); err != nil {
		return nil, &ToolError{Code: CodeInvalidArgument, Field: "traces", Message: fmt.Sprintf("traces %q: %s", path, err)}
	}
	return a.Observed(), nil
}

// openRegular opens a regular file (through root when it is not nil)
// without blocking on a FIFO, and refuses anything else, in words.
func openRegular(root *os.Root, p string) (*os.File, error) {
	var f *os.File
	var err error
	if root != nil {
		f, err = root.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	} else {
		f, err = os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errors.New("no such file")
	case errors.Is(err, os.ErrPermission):
		return nil, errors.New("permission denied")
	case err != nil:
		if root != nil && errors.Is(bundle.RootError(err), bundle.ErrOutsideRoot) {
			return nil, errors.New("it leads outside the workspace")
		}
		return nil, errors.New("it cannot be opened")
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file: give an OTLP/JSON export file")
	}
	return f, nil
}
