package main

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// protocolVersionFromMessage is spliced over the go-sdk's
// (mcp/streamable.go), which its client runs on every request it sends;
// metaProtocolVersion replaces the extractRequestMeta its server's
// servePOST runs on every request it reads. Both want one string,
// _meta's protocolVersion, and upstream decodes the whole _meta into a map
// for it (with the client's capabilities and info, a dozen objects or
// more).
func protocolVersionFromMessage(msg jsonrpc.Message) string {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req == nil {
		return ""
	}
	return metaProtocolVersion(req.Params)
}

// metaProtocolVersion is what upstream reads as
// extractRequestMeta(params)[MetaKeyProtocolVersion].(string): the params
// decode into a _meta that keeps only that key, and fail where a decode
// of the whole _meta would (a value that is not an object or null, a
// number out of float64's range in it).
func metaProtocolVersion(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var p struct {
		Meta metaVersion `json:"_meta"`
	}
	if err := internaljson.Unmarshal(params, &p); err != nil {
		return ""
	}
	v, _ := p.Meta.version.(string)
	return v
}

// metaVersion is a _meta decoded for its protocolVersion only. A _meta
// given twice merges into the first, as a map does, and null empties it.
type metaVersion struct{ version any }

func (m *metaVersion) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		m.version = nil
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return errors.New("_meta is not an object")
	}
	if err := floatRange(b); err != nil {
		return err
	}
	var keys struct {
		Version json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
	}
	if err := internaljson.Unmarshal(b, &keys); err != nil {
		return err
	}
	if keys.Version == nil {
		return nil // not given here: a map keeps what it had
	}
	m.version = nil
	return internaljson.Unmarshal(keys.Version, &m.version)
}
