package openapitools

import (
	"bytes"
	"maps"
	"strings"
)

// compact drops what only projection reads of an operation (its
// parameters' document nodes, its body's converted schema: the input
// schema holds both) and moves what it keeps for the server's life out of
// the memory projection allocated it in.
//
// Why moving matters: the Go heap does not compact. A string of the
// decoded document (a path, a parameter name, a summary) or a small
// structure built beside projection's garbage, still referenced once the
// document is released, keeps its whole span of the heap resident, and the
// runtime cannot return that span to the OS. GitHub's REST API left about
// 37 MiB of such mostly-empty spans around 24 MiB of live data. Copies made
// here, after every operation of the interface is built and before the
// document is released, land together in fresh spans; the old spans then
// hold only garbage and are given back (FreeOSMemory after start-up).
func (op *operation) compact() {
	op.base = strings.Clone(op.base)
	op.path = strings.Clone(op.path)
	op.operationID = strings.Clone(op.operationID)
	op.title = strings.Clone(op.title)
	op.description = strings.Clone(op.description)
	op.accept = strings.Clone(op.accept)
	op.outputDigest = strings.Clone(op.outputDigest)
	op.tags = cloneStrings(op.tags)
	if op.params != nil {
		params := make([]*param, len(op.params))
		for i, pr := range op.params {
			p := *pr
			p.node = nil // read by schemaFor during build only
			p.name, p.in, p.arg, p.style = strings.Clone(p.name), strings.Clone(p.in), strings.Clone(p.arg), strings.Clone(p.style)
			p.contentType, p.kind, p.file = strings.Clone(p.contentType), strings.Clone(p.kind), strings.Clone(p.file)
			params[i] = &p
		}
		op.params = params
	}
	if op.body != nil {
		b := *op.body
		b.schema = nil // in the input schema as "body"
		b.contentType, b.encoding = strings.Clone(b.contentType), strings.Clone(b.encoding)
		op.body = &b
	}
	if op.input != nil {
		op.input = bytes.Clone(op.input)
	}
	if op.validator != nil {
		op.validator = &argValidator{input: op.input, names: cloneStrings(op.validator.names)}
	}
	if op.security != nil {
		sec := make([]map[string][]string, len(op.security))
		for i, req := range op.security {
			sec[i] = make(map[string][]string, len(req))
			for name, scopes := range req {
				sec[i][strings.Clone(name)] = cloneStrings(scopes)
			}
		}
		op.security = sec
	}
	if op.schemes != nil {
		schemes := make(map[string]bool, len(op.schemes))
		for name := range maps.Keys(op.schemes) {
			schemes[strings.Clone(name)] = true
		}
		op.schemes = schemes
	}
}

// cloneStrings copies a list of strings and each string; nil stays nil.
func cloneStrings(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.Clone(s)
	}
	return out
}
