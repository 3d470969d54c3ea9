package jsonobj

import (
	"strconv"
	"strings"
)

// InstancePath renders the tokens of a JSON pointer into inst as a path a
// person reads, such as lines[0].quantity: inst is walked alongside, so an
// array index is told from an object key that happens to be a number. A
// token past the end of inst is rendered as a key.
func InstancePath(inst any, tokens []string) string {
	var b strings.Builder
	cur := inst
	for _, tok := range tokens {
		if c, ok := cur.([]any); ok {
			b.WriteString("[" + tok + "]")
			cur = nil
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(Key(tok))
		m, _ := cur.(map[string]any)
		cur = m[tok]
	}
	return b.String()
}

// Key renders one object key as InstancePath does: as it is, or quoted
// when it is empty or holds a character of the path syntax (. [ ] ") or a
// space, so that the path reads back unambiguously.
func Key(name string) string {
	if name == "" || strings.ContainsAny(name, ".[]\" ") {
		return strconv.Quote(name)
	}
	return name
}
