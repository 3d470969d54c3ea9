package jsonobj

import "testing"

func TestInstancePath(t *testing.T) {
	inst := map[string]any{
		"lines": []any{map[string]any{"quantity": 1.0}},
		"0":     map[string]any{"a.b": true},
	}
	for _, tc := range []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"lines", "0", "quantity"}, "lines[0].quantity"},
		{[]string{"0", "a.b"}, `0."a.b"`}, // a numeric key of an object stays a key
		{[]string{"lines", "7", "x"}, "lines[7].x"},
		{[]string{"missing", "deeper"}, "missing.deeper"},
		{[]string{""}, `""`},
	} {
		if got := InstancePath(inst, tc.tokens); got != tc.want {
			t.Errorf("InstancePath(%q) = %s, want %s", tc.tokens, got, tc.want)
		}
	}
}
