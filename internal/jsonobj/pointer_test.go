package jsonobj

import "testing"

func TestPointer(t *testing.T) {
	tree := map[string]any{
		"components": map[string]any{"schemas": map[string]any{
			"a/b": "slash", "m~n": "tilde", "sp ace": "space",
		}},
		"list": []any{"zero", "one"},
	}
	tests := []struct {
		ptr    string
		want   any
		wantOK bool
	}{
		{"/components/schemas/a~1b", "slash", true},
		{"/components/schemas/m~0n", "tilde", true},
		{"/components/schemas/sp%20ace", "space", true},
		{"/list/1", "one", true},
		{"/list/2", nil, false},
		{"/list/-1", nil, false},
		{"/list/x", nil, false},
		{"/missing", nil, false},
		{"no-slash", nil, false},
		{"/list/0/deeper", nil, false},
	}
	for _, tc := range tests {
		got, ok := Pointer(tree, tc.ptr)
		if ok != tc.wantOK || (ok && got != tc.want) {
			t.Errorf("Pointer(%q) = %v, %v; want %v, %v", tc.ptr, got, ok, tc.want, tc.wantOK)
		}
	}
	if got, ok := Pointer(tree, ""); !ok || got == nil {
		t.Errorf(`Pointer("") should be the tree itself`)
	}
}
