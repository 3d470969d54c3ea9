package authoring

import (
	"context"
	"io/fs"

	"github.com/kubepact/kubepact/bundle/validate"
)

// Check validates the contract at req.Path (inside the workspace) and, when
// it is valid, suggests improvements. A suggestion's ToolCall params are
// pacto_edit arguments: their JSON decodes into an [EditRequest] that
// applies as given.
func (a *Authoring) Check(ctx context.Context, req CheckRequest) (*CheckResult, error) {
	dir, err := a.ws.Rel("path", req.Path)
	if err != nil {
		return nil, err
	}
	root, err := a.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	_, data, err := readManifest(root, dir)
	if err != nil {
		return nil, err
	}
	base, err := fs.Sub(root.FS(), dir)
	if err != nil {
		return nil, internalError("opening "+dir, err)
	}
	r := withLoadability(validate.ValidateBytes(ctx, data, base, a.validateOptions(dir)), base)
	res := &CheckResult{
		Valid:         r.Valid(),
		CouldNotCheck: r.CouldNotCheck(),
		Errors:        nonNil(r.Errors),
		Warnings:      nonNil(r.Warnings),
		Suggestions:   []Suggestion{},
	}
	doc, perr := parseDocument(data)
	if perr == nil {
		s := summarize(doc)
		res.Summary = &s
		if res.Valid {
			res.Suggestions = suggest(req.Path, s)
		}
	}
	return res, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// suggest proposes the sections a valid contract is missing. Params use the
// same wire types pacto_edit accepts, so a client can replay them verbatim.
func suggest(path string, s Summary) []Suggestion {
	params := func(kv ...any) map[string]any {
		m := map[string]any{}
		if path != "" {
			m["path"] = path
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	out := []Suggestion{}
	if s.Sections["interfaces"] == "absent" {
		out = append(out, Suggestion{
			Message: "No interfaces declared. Declare the APIs the service exposes; this call adds an OpenAPI interface and scaffolds its spec.",
			ToolCall: &ToolCall{Tool: "pacto_edit", Params: params(
				"add_interfaces", []any{map[string]any{"name": "http-api", "type": "openapi", "visibility": "public"}},
			)},
		})
	}
	if s.Sections["state"] == "absent" {
		out = append(out, Suggestion{
			Message:  "No state declared. This call declares the service stateless; if it keeps data, call pacto_edit with stores_data: true (and data_survives_restart / data_shared_across_instances) instead.",
			ToolCall: &ToolCall{Tool: "pacto_edit", Params: params("stores_data", false)},
		})
	}
	if s.Sections["configurations"] == "absent" {
		out = append(out, Suggestion{
			Message: "No configuration declared. If the service reads settings, declare them with pacto_edit add_config_properties, e.g. [{\"name\": \"LOG_LEVEL\", \"type\": \"string\"}]; they are written into configuration/schema.json.",
		})
	}
	if s.Sections["dependencies"] == "absent" {
		out = append(out, Suggestion{
			Message: "No dependencies declared. If this service calls others, declare them with pacto_edit add_dependencies (refs to their contracts); they are never inferred.",
		})
	}
	return out
}
