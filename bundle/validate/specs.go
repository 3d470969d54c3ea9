package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/schemacycle"
)

// checkSpec checks that data parses as the interface type claims. An
// OpenAPI or AsyncAPI document that passes is returned decoded, for the
// checks that read it next (nil for gRPC, or when the check failed).
func checkSpec(ctx context.Context, typ, name string, data []byte) (doc map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("the %s parser failed on this file: %v", typ, p)
		}
	}()
	switch typ {
	case "openapi":
		doc, err = decodeSpec(data)
		if err == nil {
			err = checkOpenAPI(ctx, doc)
		}
	case "asyncapi":
		doc, err = decodeSpec(data)
		if err == nil {
			err = checkAsyncAPI(doc)
		}
	case "grpc":
		return nil, checkGRPC(name, data)
	default:
		return nil, fmt.Errorf("unknown interface type %q", typ)
	}
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// decodeSpec parses a YAML or JSON spec with the same hostile-input bounds
// as pacto.yaml (aliases, depth); its size was bounded when it was read.
// A document that starts with "{" is read as JSON, not as YAML.
func decodeSpec(data []byte) (map[string]any, error) {
	tree, err := contract.DecodeDocument("", data, len(data))
	if err != nil {
		return nil, fmt.Errorf("not parseable as YAML or JSON: %w", err)
	}
	m, _ := tree.(map[string]any)
	return m, nil
}

// checkOpenAPI checks a decoded OpenAPI (or Swagger 2.0) document; it
// does not change doc.
func checkOpenAPI(ctx context.Context, doc map[string]any) error {
	if v, ok := doc["openapi"]; ok {
		s, _ := v.(string)
		if !strings.HasPrefix(s, "3.") {
			return fmt.Errorf("openapi version %s is not supported; expected 3.0.x or 3.1.x", display(v))
		}
		if err := checkSpecRefs(doc); err != nil {
			return err
		}
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = false
		loader.Context = ctx
		// The loader would decode the YAML again, with a decoder that
		// compares every key of a mapping with every other key (a schema
		// of 20k properties took 37 s). The tree decoded above, in one
		// pass, is handed to it as JSON instead.
		// raw is json.Marshal's bytes (AppendJSON writes them without
		// reflection), so valid JSON: T's own UnmarshalJSON is what
		// json.Unmarshal would call, without first scanning the whole
		// document twice more (a check and a skip).
		t := &openapi3.T{}
		raw, err := contract.AppendJSON(nil, doc)
		if err == nil {
			err = t.UnmarshalJSON(raw)
		}
		if err == nil {
			err = loader.ResolveRefsIn(t, nil)
		}
		if err != nil {
			return fmt.Errorf("OpenAPI document does not load (external $refs are not allowed): %w", err)
		}
		if err := t.Validate(ctx,
			openapi3.DisableExamplesValidation(),
			openapi3.DisableSchemaDefaultsValidation(),
			openapi3.DisableSchemaPatternValidation(),
		); err != nil {
			return fmt.Errorf("OpenAPI document is invalid: %w", err)
		}
		return schemacycle.Check(doc)
	}
	if v, ok := doc["swagger"]; ok {
		if v != "2.0" {
			return fmt.Errorf("swagger version %s is not supported; expected \"2.0\"", display(v))
		}
		raw, err := contract.AppendJSON(nil, doc)
		if err != nil {
			return err
		}
		var t openapi2.T
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("the Swagger 2.0 document does not decode: %w", err)
		}
		if t.Info.Title == "" || t.Info.Version == "" {
			return errors.New("a Swagger 2.0 document needs info.title and info.version")
		}
		if err := checkSpecRefs(doc); err != nil {
			return err
		}
		return schemacycle.Check(doc)
	}
	return errors.New(`not an OpenAPI document: expected a top-level "openapi: 3.x.y" (or "swagger: \"2.0\"") field`)
}

var asyncAPIVersionRe = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)

func checkAsyncAPI(doc map[string]any) error {
	v, ok := doc["asyncapi"]
	if !ok {
		return errors.New(`not an AsyncAPI document: expected a top-level "asyncapi" version field such as "2.6.0" or "3.0.0"`)
	}
	s, _ := v.(string)
	if !asyncAPIVersionRe.MatchString(s) {
		return fmt.Errorf("asyncapi version %s is not a version like \"3.0.0\"", display(v))
	}
	if info, ok := doc["info"]; ok {
		if _, isMap := info.(map[string]any); !isMap {
			return errors.New("info must be a mapping")
		}
	}
	return nil
}

// checkGRPC accepts a .proto file that is syntactically plausible, or (as
// Pacto does) a YAML or JSON service descriptor.
func checkGRPC(name string, data []byte) error {
	if strings.EqualFold(path.Ext(name), ".proto") {
		return checkProto(string(data))
	}
	if _, err := decodeSpec(data); err != nil {
		return fmt.Errorf("expected a .proto file or a YAML/JSON service descriptor: %w", err)
	}
	return nil
}

var (
	protoSyntaxRe = regexp.MustCompile(`^\s*(syntax|edition)\s*=\s*"([^"]*)"\s*;`)
	protoDeclRe   = regexp.MustCompile(`\b(service|message|enum)\s+[A-Za-z_][A-Za-z0-9_]*\s*\{`)
	// protoLateSyntaxRe finds a syntax line that is not the first statement.
	protoLateSyntaxRe = regexp.MustCompile(`(?m)^\s*syntax\s*=`)
	braceBlanker      = strings.NewReplacer("{", " ", "}", " ")
)

// checkProto is a syntactic plausibility check, not a protobuf compiler:
// comments and strings are skipped, braces must balance, a syntax or
// edition line (if any) must be recognised, and at least one service,
// message or enum must be declared.
func checkProto(src string) error {
	code, err := stripProto(src)
	if err != nil {
		return err
	}
	depth, line := 0, 1
	for _, r := range code {
		switch r {
		case '\n':
			line++
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return fmt.Errorf("line %d: unbalanced '}'", line)
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("%d '{' never closed", depth)
	}
	if m := protoSyntaxRe.FindStringSubmatch(code); m != nil {
		ok := (m[1] == "syntax" && (m[2] == "proto2" || m[2] == "proto3")) || (m[1] == "edition" && m[2] != "")
		if !ok {
			return fmt.Errorf(`%s %q is not recognised; use syntax = "proto3" or "proto2", or an edition`, m[1], m[2])
		}
	} else if protoLateSyntaxRe.MatchString(code) {
		return errors.New(`the syntax line must come first and read syntax = "proto3";`)
	}
	if !protoDeclRe.MatchString(code) {
		return errors.New("no service, message or enum declaration found")
	}
	return nil
}

// stripProto blanks comments and string contents (keeping newlines and
// quotes) so structure can be checked.
func stripProto(src string) (string, error) {
	var b strings.Builder
	b.Grow(len(src))
	line := 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
			b.WriteByte(c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return "", fmt.Errorf("line %d: comment never closed", line)
			}
			comment := src[i : i+2+end+2]
			n := strings.Count(comment, "\n")
			line += n
			b.WriteString(strings.Repeat("\n", n))
			i += len(comment) - 1
		case c == '"' || c == '\'':
			b.WriteByte(c)
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				switch src[j] {
				case '\\':
					j++
				case '\n':
					return "", fmt.Errorf("line %d: string never closed", line)
				}
			}
			if j >= len(src) {
				return "", fmt.Errorf("line %d: string never closed", line)
			}
			b.WriteString(braceBlanker.Replace(src[i+1 : j]))
			b.WriteByte(c)
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
