package protofiles

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// compileIn compiles api/main.proto of a bundle holding files.
func compileIn(t *testing.T, files map[string]string, lim Limits) error {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, s := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(s)}
	}
	_, err := Compile(t.Context(), fsys, "api/main.proto", lim)
	return err
}

func TestCompileConfinedAndBounded(t *testing.T) {
	deep := map[string]string{}
	const chain = 10000
	for i := range chain {
		deep[fmt.Sprintf("api/f%d.proto", i)] = fmt.Sprintf("syntax = \"proto3\";\nimport \"f%d.proto\";\nmessage M%d {}\n", i+1, i)
	}
	deep["api/main.proto"] = "syntax = \"proto3\";\nimport \"f0.proto\";\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		lim   Limits
		want  string
	}{
		{"escapes the bundle", map[string]string{"api/main.proto": "syntax = \"proto3\";\nimport \"../../etc/x.proto\";\n"}, Limits{},
			`api/main.proto does not compile: import "../../etc/x.proto" leaves the bundle`},
		{"absolute import", map[string]string{"api/main.proto": "syntax = \"proto3\";\nimport \"/etc/passwd\";\n"}, Limits{},
			`leaves the bundle`},
		{"missing import", map[string]string{"api/main.proto": "syntax = \"proto3\";\nimport \"nope.proto\";\n"}, Limits{},
			`import "nope.proto": no such file in the bundle (looked in api/nope.proto, nope.proto)`},
		{"syntax error", map[string]string{"api/main.proto": "syntax = \"proto3\";\nmessage A {\n  string a = ;\n}\n"}, Limits{},
			`api/main.proto:3:14: syntax error`},
		{"unknown type", map[string]string{"api/main.proto": "syntax = \"proto3\";\nmessage A {\n  Nope a = 1;\n}\n"}, Limits{},
			`api/main.proto:3:3: field A.a: unknown type Nope`},
		{"import cycle", map[string]string{"api/main.proto": "syntax = \"proto3\";\nimport \"b.proto\";\n", "api/b.proto": "syntax = \"proto3\";\nimport \"main.proto\";\n"}, Limits{},
			`cycle found in imports`},
		{"deep import chain", deep, Limits{}, `more than 64 .proto files`},
		{"too many bytes", map[string]string{"api/main.proto": "syntax = \"proto3\";\n// " + strings.Repeat("x", 5000) + "\n"}, Limits{MaxBytes: 4096},
			`exceed 4096 bytes`},
		{"too many messages", map[string]string{"api/main.proto": "syntax = \"proto3\";\nmessage A { message B { message C {} } }\n"}, Limits{MaxMessages: 2},
			`declare 3 message types; at most 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := compileIn(t, tc.files, tc.lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
	var ce *CompileError
	if err := compileIn(t, map[string]string{"api/main.proto": "syntax = \"proto3\";\nmessage A {\n  string a = ;\n}\n"}, Limits{}); !errors.As(err, &ce) || ce.File != "api/main.proto" {
		t.Errorf("a syntax error is a *CompileError naming the file: %v", err)
	}
}
