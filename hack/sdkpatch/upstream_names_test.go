package main

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk names extractname_test.go (the replacement of the go-sdk's
// extractName) uses, as the go-sdk's mcp package has them, so that it
// compiles and is tested here. internaljson.Unmarshal is the patched one
// (replacement.go), as in the patched build.
type (
	CallToolParams     = sdk.CallToolParams
	GetPromptParams    = sdk.GetPromptParams
	ReadResourceParams = sdk.ReadResourceParams
	InputResponseMap   = sdk.InputResponseMap
	Meta               = sdk.Meta
)

const MetaKeyProtocolVersion = sdk.MetaKeyProtocolVersion

var internaljson = struct{ Unmarshal func([]byte, any) error }{Unmarshal}

// upstreamExtractRequestMeta and upstreamProtocolVersionFromMessage are
// the go-sdk's extractRequestMeta and protocolVersionFromMessage, the
// oracles of protoversion_test.go's differential test (TestOracleIsUpstream).
func upstreamExtractRequestMeta(rawParams json.RawMessage) Meta {
	if len(rawParams) == 0 {
		return nil
	}
	var meta struct {
		Meta Meta `json:"_meta"`
	}
	if err := internaljson.Unmarshal(rawParams, &meta); err != nil {
		return nil
	}
	return meta.Meta
}

func upstreamProtocolVersionFromMessage(msg jsonrpc.Message) string {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req == nil {
		return ""
	}
	meta := upstreamExtractRequestMeta(req.Params)
	if meta == nil {
		return ""
	}
	v, _ := meta[MetaKeyProtocolVersion].(string)
	return v
}

// upstreamExtractName is the go-sdk's extractName, the oracle of the
// differential test; TestOracleIsUpstream holds it to upstream's text.
func upstreamExtractName(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "tools/call":
		var p CallToolParams
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.Name, true
		}
	case "prompts/get":
		var p GetPromptParams
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.Name, true
		}
	case "resources/read":
		var p ReadResourceParams
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.URI, true
		}
	}

	return "", false
}

// headerSchemaProperty and paramHeaderBinding are copies of the go-sdk's
// types (mcp/streamable_headers.go), which the patched build uses; Tool is
// its Tool.
type (
	Tool                 = sdk.Tool
	headerSchemaProperty struct {
		Type       string                          `json:"type"`
		XMCPHeader json.RawMessage                 `json:"x-mcp-header,omitempty"`
		Properties map[string]headerSchemaProperty `json:"properties,omitempty"`
	}
	paramHeaderBinding struct {
		Path   []string
		Header string
	}
)

// collectParamHeaderAnnotations is the go-sdk's, which the replacement
// calls as upstream's extractParamHeaderAnnotations does; TestOracleIsUpstream
// holds it to upstream's text.
func collectParamHeaderAnnotations(props map[string]headerSchemaProperty, prefix []string, out []paramHeaderBinding) []paramHeaderBinding {
	for propName, prop := range props {
		path := make([]string, len(prefix)+1)
		copy(path, prefix)
		path[len(prefix)] = propName

		var headerName string
		if err := json.Unmarshal(prop.XMCPHeader, &headerName); err == nil && headerName != "" {
			out = append(out, paramHeaderBinding{Path: path, Header: headerName})
		}
		if len(prop.Properties) > 0 {
			out = collectParamHeaderAnnotations(prop.Properties, path, out)
		}
	}
	return out
}

// upstreamExtractParamHeaderAnnotations, upstreamUnmarshalSchemaProperties
// and upstreamRemarshal are the go-sdk's extractParamHeaderAnnotations,
// unmarshalSchemaProperties and remarshal, the oracles of
// paramheaders_test.go's differential test (TestOracleIsUpstream).
func upstreamExtractParamHeaderAnnotations(tool *Tool) []paramHeaderBinding {
	props := upstreamUnmarshalSchemaProperties(tool.InputSchema)
	if len(props) == 0 {
		return nil
	}
	var result []paramHeaderBinding
	result = collectParamHeaderAnnotations(props, nil, result)
	if len(result) == 0 {
		return nil
	}
	return result
}

func upstreamUnmarshalSchemaProperties(schema any) map[string]headerSchemaProperty {
	var s headerSchemaProperty
	if err := upstreamRemarshal(schema, &s); err != nil {
		return nil
	}
	return s.Properties
}

func upstreamRemarshal(from, to any) error {
	data, err := json.Marshal(from)
	if err != nil {
		return err
	}
	if err := internaljson.Unmarshal(data, to); err != nil {
		return err
	}
	return nil
}
