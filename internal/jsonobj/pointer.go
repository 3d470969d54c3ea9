package jsonobj

import (
	"strconv"
	"strings"
)

// Pointer resolves a JSON pointer (RFC 6901; each segment URL-unescaped
// first, as references are written in URI fragments) in a tree decoded
// into map[string]any and []any. "" is the tree itself.
func Pointer(tree any, ptr string) (any, bool) {
	if ptr == "" {
		return tree, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := tree
	for seg := range strings.SplitSeq(ptr[1:], "/") {
		seg = unescape(seg)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func unescape(seg string) string {
	if strings.Contains(seg, "%") {
		var b strings.Builder
		for i := 0; i < len(seg); i++ {
			if seg[i] == '%' && i+2 < len(seg) {
				if v, err := strconv.ParseUint(seg[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteByte(seg[i])
		}
		seg = b.String()
	}
	return strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
}
