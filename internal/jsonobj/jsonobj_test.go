package jsonobj

import "testing"

func TestDuplicateKey(t *testing.T) {
	tests := []struct {
		raw   string
		key   string
		found bool
	}{
		{`{"a":1,"b":2}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"a":{"x":1,"x":2},"b":2}`, "", false}, // nested objects are their decoder's business
		{`{"b":[1,2],"a":1,"b":3}`, "b", true},
		{`{"":1,"":2}`, "", true},
		{`[1,2]`, "", false},
		{`"a"`, "", false},
		{`{"a":1,`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		key, found := DuplicateKey([]byte(tt.raw))
		if key != tt.key || found != tt.found {
			t.Errorf("DuplicateKey(%s) = %q, %v; want %q, %v", tt.raw, key, found, tt.key, tt.found)
		}
	}
}
