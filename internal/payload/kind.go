package payload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// maxNamedKeys bounds the value's keys an ambiguity message names.
const maxNamedKeys = 5

// inferKind settles an omitted kind for an operation that takes no
// request body, from the value itself. Such a value is either the
// operation's parameters or one of its responses, and a wrong guess
// answers a question nobody asked (a response checked as parameters is
// a page of UNKNOWN_FIELDs). So it is taken as parameters only when it
// can be nothing else: a non-empty object whose every key is one of the
// operation's parameter names. Anything else is a question to the
// caller, an *Error naming the two kinds and why the value is not
// plainly parameters. A subject that already says what it is (a kind, a
// status, a message or a configuration) is left alone, and so is an
// unknown operation, which resolve reports.
func (c *Contract) inferKind(sub Subject, v any) (Subject, error) {
	if sub.Kind != "" || sub.Operation == "" || sub.Status != "" || sub.Message != "" || sub.Configuration != "" {
		return sub, nil
	}
	op, err := c.operation(sub.Operation)
	if err != nil || op.Body != nil {
		return sub, nil
	}
	params := paramNames(c.trees[op].params)
	obj, isObject := v.(map[string]any)
	var foreign []string
	for k := range obj {
		if !slices.Contains(params, k) {
			foreign = append(foreign, k)
		}
	}
	if isObject && len(obj) > 0 && len(foreign) == 0 {
		sub.Kind = KindParameters
		return sub, nil
	}
	var why string
	switch {
	case !isObject:
		why = fmt.Sprintf("the value is %s, and parameters are an object of values by name", display(v))
	case len(obj) == 0:
		why = "an empty object could be either"
	case len(params) == 0:
		why = "the operation declares no parameters"
	default:
		slices.Sort(foreign)
		shown := foreign[:min(len(foreign), maxNamedKeys)]
		why = fmt.Sprintf("its field(s) %s are not parameters of it", strings.Join(shown, ", "))
		if len(foreign) > len(shown) {
			why = fmt.Sprintf("its field(s) %s and %d more are not parameters of it", strings.Join(shown, ", "), len(foreign)-len(shown))
		}
	}
	name := opName(op)
	paramsSay := "it declares none"
	if len(params) > 0 {
		paramsSay = "its parameters: " + orNone(params)
	}
	e := &Error{Code: CodeInvalidArgument, Field: "Kind", Accepted: []string{KindResponse, KindParameters},
		Message: fmt.Sprintf("operation %s (%s %s) takes no request body, so this value is one of its responses or its parameters, and %s: say which with kind — %s (with status, or the first 2XX response with a JSON body) or %s (%s)",
			name, op.Method, op.Path, why, KindResponse, KindParameters, paramsSay)}
	if hasJSONResponse(op.Responses) {
		e.DidYouMean = KindResponse
	}
	return sub, e
}

// paramNames are the names of an operation's parameters object schema,
// sorted.
func paramNames(tree any) []string {
	m, _ := tree.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	return sortedKeys(props)
}

// hasJSONResponse reports whether some 2XX response declares a JSON body.
func hasJSONResponse(rs []openapischema.ResponseShape) bool {
	return slices.ContainsFunc(rs, func(r openapischema.ResponseShape) bool { return strings.HasPrefix(r.Status, "2") && r.MediaType != "" })
}
