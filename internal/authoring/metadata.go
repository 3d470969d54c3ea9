package authoring

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/didyoumean"
	"github.com/kubepact/kubepact/internal/schemamsg"
)

// Metadata is a JSON object of metadata keys and values that keeps the
// order its keys were given in, so the YAML written shows them in that
// order. Its zero value is an empty object.
type Metadata struct{ members []member }

// UnmarshalJSON reads one JSON object, refusing duplicate keys at any
// depth (a map would keep one of them silently).
func (m *Metadata) UnmarshalJSON(raw []byte) error {
	v, err := parseOrdered(raw)
	if err != nil {
		return err
	}
	o, ok := v.(*object)
	if !ok {
		return fmt.Errorf("metadata must be a JSON object, got %s", describeValue(v))
	}
	m.members = o.members
	return nil
}

// MarshalJSON writes the object with its keys in order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	return encodeOrdered(&object{members: m.members}), nil
}

// Len is the number of top-level keys.
func (m *Metadata) Len() int {
	if m == nil {
		return 0
	}
	return len(m.members)
}

// Set adds key with value v (nil, bool, string, a number, []any or
// map[string]any; a map's keys are written sorted), or replaces its value.
func (m *Metadata) Set(key string, v any) {
	o := object{members: m.members}
	o.set(key, fromNative(v))
	m.members = o.members
}

func fromNative(v any) any {
	switch t := v.(type) {
	case map[string]any:
		o := &object{}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			o.members = append(o.members, member{k, fromNative(t[k])})
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromNative(e)
		}
		return out
	}
	return v
}

// describeValue names the JSON type of an ordered value for messages.
func describeValue(v any) string {
	if _, ok := v.(*object); ok {
		return "an object"
	}
	if v == nil {
		return "null"
	}
	if t := schemamsg.JSONType(v); t != "" {
		return schemamsg.WithArticle(t)
	}
	return "a number"
}

// metadataMembers checks a metadata argument: no empty key, at most
// MaxArgumentValues keys, items and values in all.
func metadataMembers(field string, m *Metadata) ([]member, error) {
	if m == nil {
		return nil, nil
	}
	for _, mb := range m.members {
		if strings.TrimSpace(mb.key) == "" {
			return nil, argError(field, fmt.Sprintf("%q has an empty key", field))
		}
	}
	if err := checkArgumentSize(field, countOrdered(&object{members: m.members})); err != nil {
		return nil, err
	}
	return m.members, nil
}

// checkNames checks a list argument of names: each must be a non-empty string.
func checkNames(field string, list []string) ([]string, error) {
	if err := checkArgumentSize(field, len(list)); err != nil {
		return nil, err
	}
	for i, name := range list {
		if strings.TrimSpace(name) == "" {
			return nil, argError(fmt.Sprintf("%s[%d]", field, i),
				fmt.Sprintf("%s[%d] must be a non-empty string, got %q", field, i, name))
		}
	}
	return list, nil
}

// didYouMean returns the accepted name nearest to name, or "".
func didYouMean(name string, accepted []string) string { return didyoumean.Nearest(name, accepted) }
