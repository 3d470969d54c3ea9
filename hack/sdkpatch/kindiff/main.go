// Command kindiff prints, for every OpenAPI document and every bundle
// under the paths it is given, what kubepact makes of it through
// kin-openapi: the document's openapi3.T as kubepact decodes it (every
// field, unexported ones too), the errors of resolving and validating it,
// and each bundle's validation findings. hack/sdkpatch's differential test
// runs it built with upstream kin-openapi and with the patched copy, and
// compares the two outputs byte for byte.
//
//	go run ./hack/sdkpatch/kindiff [-fleet N] PATH...
//
// -fleet N also writes internal/fleetgen's fleet of N bundles (the start
// benchmarks' fleet) to a temporary directory and prints it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/internal/fleetgen"
)

func main() {
	fleet := flag.Int("fleet", 0, "also print internal/fleetgen's fleet of this many bundles")
	flag.Parse()
	if err := run(os.Stdout, *fleet, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "kindiff:", err)
		os.Exit(1)
	}
}

func run(w *os.File, fleet int, paths []string) error {
	if fleet > 0 {
		dir, err := os.MkdirTemp("", "kindiff-fleet-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := fleetgen.Write(dir, fleet); err != nil {
			return err
		}
		paths = append(paths, dir)
	}
	var specs, bundles int
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case d.IsDir() && p != root && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case d.IsDir():
				if _, err := os.Stat(filepath.Join(p, contract.FileName)); err == nil {
					bundles++
					res := validate.Validate(context.Background(), os.DirFS(p), nil)
					raw, _ := json.Marshal(res)
					fmt.Fprintf(w, "bundle %s\n%s\n", rel, raw)
				}
			case strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json"):
				if out, ok := spec(p); ok {
					specs++
					fmt.Fprintf(w, "spec %s\n%s", rel, out)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d specs, %d bundles\n", specs, bundles)
	return nil
}

// spec is what kubepact's validation makes of the OpenAPI 3 document at
// p through kin-openapi, decoded as bundle/validate decodes it; not ok when
// p is not one.
func spec(p string) (string, bool) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	tree, err := contract.DecodeDocument("", raw, len(raw))
	doc, _ := tree.(map[string]any)
	if err != nil || doc == nil {
		return "", false
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		return "", false
	}
	js, err := contract.AppendJSON(nil, doc)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	t := &openapi3.T{}
	err = t.UnmarshalJSON(js)
	fmt.Fprintf(&b, "decode: %v\n", err)
	dump(&b, reflect.ValueOf(t), map[uintptr]int{}, 1)
	b.WriteString("\n")
	if err == nil {
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = false
		fmt.Fprintf(&b, "resolve: %v\n", loader.ResolveRefsIn(t, nil))
		dump(&b, reflect.ValueOf(t), map[uintptr]int{}, 1)
		b.WriteString("\n")
		fmt.Fprintf(&b, "validate: %v\n", t.Validate(context.Background(),
			openapi3.DisableExamplesValidation(),
			openapi3.DisableSchemaDefaultsValidation(),
			openapi3.DisableSchemaPatternValidation()))
		fmt.Fprintf(&b, "validate (all): %v\n", t.Validate(context.Background()))
	}
	return b.String(), true
}

// dump writes v, unexported fields and all, maps in key order; a pointer
// seen before is written as its number.
func dump(b *strings.Builder, v reflect.Value, seen map[uintptr]int, depth int) {
	indent := strings.Repeat(" ", depth)
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("<invalid>")
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if n, ok := seen[v.Pointer()]; ok {
			fmt.Fprintf(b, "@%d", n)
			return
		}
		seen[v.Pointer()] = len(seen) + 1
		fmt.Fprintf(b, "&%d ", len(seen))
		dump(b, v.Elem(), seen, depth)
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		fmt.Fprintf(b, "(%s) ", v.Elem().Type())
		dump(b, v.Elem(), seen, depth)
	case reflect.Struct:
		fmt.Fprintf(b, "%s{\n", v.Type())
		for i := range v.NumField() {
			fmt.Fprintf(b, "%s%s: ", indent, v.Type().Field(i).Name)
			dump(b, v.Field(i), seen, depth+1)
			b.WriteString("\n")
		}
		b.WriteString(indent[1:] + "}")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nilmap")
			return
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, c reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(c)) })
		fmt.Fprintf(b, "map[%d]{\n", len(keys))
		for _, k := range keys {
			fmt.Fprintf(b, "%s%q: ", indent, fmt.Sprint(k))
			dump(b, v.MapIndex(k), seen, depth+1)
			b.WriteString("\n")
		}
		b.WriteString(indent[1:] + "}")
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nilslice")
			return
		}
		fmt.Fprintf(b, "[%d]{\n", v.Len())
		for i := range v.Len() {
			b.WriteString(indent)
			dump(b, v.Index(i), seen, depth+1)
			b.WriteString("\n")
		}
		b.WriteString(indent[1:] + "}")
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	case reflect.Bool:
		fmt.Fprint(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fmt.Fprint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		fmt.Fprint(b, v.Float())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		fmt.Fprintf(b, "<%s nil=%v>", v.Kind(), v.IsNil())
	default:
		fmt.Fprintf(b, "<%s>", v.Kind())
	}
}
