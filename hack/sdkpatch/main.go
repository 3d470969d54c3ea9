// Command sdkpatch carries kubepact's patches to two dependencies, all
// about garbage per message, none changing what is decoded or any error:
//
//   - the go-sdk's internal/json.Unmarshal, which allocates a 32 KiB
//     decoder buffer for every message it decodes (several per call), is
//     replaced by one that parses in place (replacement.go);
//   - the go-sdk's extractName, which decodes a whole tools/call's params
//     (its _meta and arguments into maps) to read the tool's name, on the
//     client and again on the server, decodes the name and only checks the
//     rest (extractname_test.go);
//   - the go-sdk's reading of _meta's protocolVersion, which decodes the
//     whole _meta (the client's capabilities and info) into a map for one
//     string, on the client and on the server, decodes only that string
//     (protoversion_test.go);
//   - the go-sdk's extractParamHeaderAnnotations, which re-encodes a tool's
//     input schema and decodes and walks all of it, on every tools/call,
//     to find the x-mcp-header annotations almost no schema has, answers
//     none without decoding when the encoded schema cannot hold one
//     (paramheaders_test.go);
//   - segmentio/encoding's json decoder, which makes every map it decodes
//     (map[string]any and the like: _meta, arguments, results) with room for
//     64 entries, makes them as small as Go does.
//
// A patch is one file of a module, pinned by the module's version and the
// file's sha256; a module may have several. A replacement compiles and is
// tested in this directory, against stand-ins for the upstream names it
// uses, and its test compares it with upstream's code on a corpus and
// under fuzzing.
//
// go build -overlay cannot replace files in the module cache, so the
// patches are applied to copies: this command reads each pinned module
// from the module cache, checks that each file it patches is the one the
// patch was written against (sha256), copies the module's Go sources into
// a directory with those files patched, and writes a go.work beside them that
// uses the kubepact module and replaces each module with its copy. A go
// command run with GOWORK naming it builds kubepact with the patches;
// go.mod replaces nothing:
//
//	go run ./hack/sdkpatch -out bin/sdkpatch        # prints bin/sdkpatch/go.work
//	GOWORK=$PWD/bin/sdkpatch/go.work go build ./cmd/kubepact
//
// or it runs a go command with GOWORK set, after any NAME=value settings
// for it (the Makefile, the Dockerfile and test/gobuild do this; settings
// such as GOOS belong after -exec, where they reach the go command and not
// go run):
//
//	go run ./hack/sdkpatch -exec CGO_ENABLED=0 go build -o bin/kubepact ./cmd/kubepact
//
// Without -out, -exec writes the workspace once per module root under the
// temporary directory and reuses it.
//
// make build, make test, make bench, make image and the Dockerfile build
// with it. A build without it (go build, go test, go install) is kubepact
// with the modules as upstream ships them: the same behaviour, more
// garbage per call.
//
// When a module is upgraded, or its file differs, this command and its
// test fail and say so: check whether upstream still does what the patch
// undoes, then re-pin (patches) or drop the patch.
package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A modulePatch is one pinned module and the files of it that are
// patched; its copy in the workspace is every other file as upstream has it.
type modulePatch struct {
	module, version string
	dir             string // the copy's directory in the workspace
	files           []filePatch
}

// A filePatch is one file of a pinned module, pinned by its sha256, and
// how it is patched.
type filePatch struct {
	file   string
	sha256 string // of upstream's file
	why    string // what to check on an upgrade
	apply  func(src []byte) ([]byte, error)
}

// patches are every patch, by module.
var patches = []modulePatch{
	{
		module: "github.com/modelcontextprotocol/go-sdk", version: "v1.8.0", dir: "go-sdk",
		files: []filePatch{
			{
				file: "internal/json/json.go", sha256: "20af74fbf13163943c908b5082ed0e5f4a660452452d682ac5c77fa1a3b50daa",
				why:   "whether Unmarshal still decodes through a new Decoder",
				apply: func(src []byte) ([]byte, error) { return splice(src, "Unmarshal", replacement) },
			},
			{
				file: "mcp/streamable_headers.go", sha256: "1f8d1304e7bf80f55f578879cb5d447edc9be08ee5c6db5e61a92e377abb0569",
				why:   "whether extractName still decodes a whole CallToolParams (_meta and arguments into maps) to read the name, and extractParamHeaderAnnotations still decodes and walks the whole input schema on every call",
				apply: nameAndParamHeaders,
			},
			{
				file: "mcp/streamable.go", sha256: "d5bc530e72bcde8a44d139105bb28d0a56c2534a8912b8fe8b37a3b0f2cdcb60",
				why:   "whether protocolVersionFromMessage and servePOST still decode the whole _meta to read its protocolVersion",
				apply: readVersionOnly,
			},
		},
	},
	{
		module: "github.com/segmentio/encoding", version: "v0.5.4", dir: "segmentio-encoding",
		files: []filePatch{
			{
				file: "json/decode.go", sha256: "4577a6ab47e3783bb9f2219817034734e7172de24284c16208c0c71966ec0d4c",
				why:   "whether the map decoders still make each map with room for 64 entries",
				apply: unhintMaps,
			},
		},
	},
	kinPatch(),
}

const workName = "go.work"

// The replacements spliced into upstream's files; each compiles and is
// tested here, against stand-ins for the upstream names it uses
// (upstream.go).
var (
	//go:embed replacement.go
	replacement []byte
	//go:embed extractname_test.go
	extractNameSrc []byte
	//go:embed protoversion_test.go
	protoVersionSrc []byte
	//go:embed paramheaders_test.go
	paramHeadersSrc []byte
)

func main() {
	out := flag.String("out", "", "directory to write the patched go-sdk and go.work into; prints the go.work's path")
	run := flag.Bool("exec", false, "run the go command given after the flags (after any NAME=value settings for it) with GOWORK naming the patched workspace")
	flag.Parse()
	if err := mainErr(*out, *run, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "sdkpatch:", err)
		os.Exit(1)
	}
}

func mainErr(out string, run bool, args []string) error {
	var env []string // -exec's leading NAME=value arguments
	for run && len(args) > 0 && strings.Contains(args[0], "=") && args[0] != "go" {
		env, args = append(env, args[0]), args[1:]
	}
	switch {
	case run && (len(args) < 2 || args[0] != "go"):
		return fmt.Errorf("-exec runs a go command, after any NAME=value settings for it: give it after the flags, such as -exec GOOS=linux go build ./cmd/kubepact (got %q)", args)
	case run:
		work, err := shared(out)
		if err != nil {
			return err
		}
		cmd := exec.Command("go", args[1:]...)
		// KUBEPACT_SDKPATCH tells tests the build is patched (mcp's
		// TestSDKPatchInEffect checks that it is).
		cmd.Env = append(append(os.Environ(), env...), "GOWORK="+work, "KUBEPACT_SDKPATCH=1")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				os.Exit(exit.ExitCode()) // the go command said why
			}
			return err
		}
		return nil
	case out == "" || len(args) > 0:
		return fmt.Errorf("give -out DIR (writes the patched workspace) or -exec go ... (runs a go command in it); got -out %q and arguments %q", out, args)
	}
	work, err := write(out, out)
	if err != nil {
		return err
	}
	fmt.Println(work)
	return nil
}

// shared is the patched workspace -exec runs in: out if given, else one
// directory under the temporary directory per module root and patch,
// written once (into a directory beside it, renamed into place, so that
// builds running at once never see it half written) and reused after.
func shared(out string) (string, error) {
	if out != "" {
		return write(out, out)
	}
	root, _, err := mainModule()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(root))
	for _, m := range patches {
		h.Write([]byte("\x00" + m.module + "@" + m.version))
		for _, f := range m.files {
			h.Write([]byte("\x00" + f.file + "\x00" + f.sha256))
		}
	}
	h.Write(replacement)
	h.Write(extractNameSrc)
	h.Write(protoVersionSrc)
	h.Write(paramHeadersSrc)
	h.Write(kinExtensionsSrc)
	self, _ := os.ReadFile(os.Args[0]) // the command itself: a changed patch is a new workspace
	h.Write(self)
	key := h.Sum(nil)
	final := filepath.Join(os.TempDir(), "kubepact-sdkpatch-"+hex.EncodeToString(key[:8]))
	work := filepath.Join(final, workName)
	if _, err := os.Stat(work); err == nil {
		return work, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "kubepact-sdkpatch-*.tmp")
	if err != nil {
		return "", err
	}
	if _, err := write(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp) // another build put it in place first
		if _, serr := os.Stat(work); serr != nil {
			return "", err
		}
	}
	return work, nil
}

// write writes the patched copies and the go.work that uses them into
// dir, the go.work naming the copies as they will be under named (dir
// itself, or where dir is renamed to), and returns the go.work's absolute
// path under named. A copy holds its module's go.mod, licence and non-test
// Go files, each as upstream has it but the patched one.
func write(dir, named string) (string, error) {
	root, goVersion, err := mainModule()
	if err != nil {
		return "", err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if named, err = filepath.Abs(named); err != nil {
		return "", err
	}
	work := fmt.Sprintf("// Written by hack/sdkpatch: kubepact with its patched dependencies.\ngo %s\n\nuse %s\n", goVersion, strconv.Quote(root))
	for _, p := range patches {
		if err := p.copyPatched(filepath.Join(dir, p.dir)); err != nil {
			return "", err
		}
		// Relative to the go.work: the binary's build information records
		// the replacement as written, and a path there would make the
		// build depend on where the checkout and $TMPDIR are.
		work += fmt.Sprintf("\nreplace %s %s => ./%s\n", p.module, p.version, p.dir)
	}
	if err := os.WriteFile(filepath.Join(dir, workName), []byte(work), 0o644); err != nil {
		return "", err
	}
	return filepath.Join(named, workName), nil
}

// copyPatched writes the module's copy, its files patched, into dst.
func (m modulePatch) copyPatched(dst string) error {
	mod, err := m.locate()
	if err != nil {
		return err
	}
	patched := map[string][]byte{} // by slash path in the module
	for _, f := range m.files {
		src, err := os.ReadFile(filepath.Join(mod, filepath.FromSlash(f.file)))
		if err != nil {
			return err
		}
		if patched[f.file], err = m.patch(f, src); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	err = filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mod, path)
		switch {
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case rel != "go.mod" && rel != "LICENSE" && (!strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go")):
			return nil
		}
		raw, ok := patched[filepath.ToSlash(rel)]
		if !ok {
			if raw, err = os.ReadFile(path); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copying %s: %w", m.module, err)
	}
	return nil
}

// locate finds the pinned module in the module cache, as the build list
// of the module in the current directory has it.
func (m modulePatch) locate() (string, error) {
	raw, err := goList("-m", "-f", "{{.Version}}\t{{.Dir}}", m.module)
	if err != nil {
		return "", fmt.Errorf("finding %s in the module cache (run from the kubepact module): %w", m.module, err)
	}
	version, mod, _ := strings.Cut(raw, "\t")
	if version != m.version {
		var why []string
		for _, f := range m.files {
			why = append(why, f.file+": "+f.why)
		}
		return "", fmt.Errorf("go.mod requires %s %s, and its patches (hack/sdkpatch) are written against %s: check %s; then re-pin the version and each file's sha256, or drop the patch", m.module, version, m.version, strings.Join(why, "; "))
	}
	if mod == "" {
		return "", fmt.Errorf("%s %s is not in the module cache: run go mod download", m.module, version)
	}
	return mod, nil
}

// mainModule is the root directory and go version of the module in the
// current directory.
func mainModule() (root, goVersion string, _ error) {
	raw, err := goList("-m", "-f", "{{.Dir}}\t{{.GoVersion}}")
	if err != nil {
		return "", "", fmt.Errorf("finding the main module: %w", err)
	}
	root, goVersion, _ = strings.Cut(raw, "\t")
	return root, goVersion, nil
}

// goList runs go list outside any workspace and returns its output.
func goList(args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	raw, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(exit.Stderr))
		}
		return "", err
	}
	return strings.TrimSpace(string(raw)), nil
}

// patch checks src, upstream's f, against f's pinned hash and returns it
// patched.
func (m modulePatch) patch(f filePatch, src []byte) ([]byte, error) {
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != f.sha256 {
		return nil, fmt.Errorf("%s@%s %s has sha256 %s, and the patch (hack/sdkpatch) is written against %s: upstream changed; check %s, then re-pin its sha256 or drop the patch", m.module, m.version, f.file, got, f.sha256, f.why)
	}
	out, err := f.apply(src)
	if err != nil {
		return nil, fmt.Errorf("patching %s@%s %s: %w", m.module, m.version, f.file, err)
	}
	return out, nil
}

// splice replaces src's function name (doc comment included) by the
// declarations of the replacement file repl: its function name and what it
// brings along (every declaration after its imports).
func splice(src []byte, name string, repl []byte) ([]byte, error) {
	from, to, err := funcSpan(src, name)
	if err != nil {
		return nil, err
	}
	if _, _, err := funcSpan(repl, name); err != nil {
		return nil, fmt.Errorf("the replacement: %w", err)
	}
	rfrom, rto, err := declsSpan(repl)
	if err != nil {
		return nil, fmt.Errorf("the replacement of %s: %w", name, err)
	}
	var b bytes.Buffer
	b.Write(src[:from])
	b.WriteString("// " + name + " is patched by kubepact (hack/sdkpatch), applied to a copy of the module that a go.work replaces it with.\n//\n")
	b.Write(repl[rfrom:rto])
	b.Write(src[to:])
	return b.Bytes(), nil
}

// nameAndParamHeaders splices streamable_headers.go's two replacements:
// extractName and extractParamHeaderAnnotations.
func nameAndParamHeaders(src []byte) ([]byte, error) {
	src, err := splice(src, "extractName", extractNameSrc)
	if err != nil {
		return nil, err
	}
	return splice(src, "extractParamHeaderAnnotations", paramHeadersSrc)
}

// servePOSTMetaVersion is servePOST's reading of _meta's protocolVersion
// upstream, and metaVersionRead what readVersionOnly makes of it.
const (
	servePOSTMetaVersion = "\t\t\tif meta := extractRequestMeta(jreq.Params); meta != nil {\n\t\t\t\tmetaVersion, _ = meta[MetaKeyProtocolVersion].(string)\n\t\t\t}\n"
	metaVersionRead      = "\t\t\tmetaVersion = metaProtocolVersion(jreq.Params) // patched by kubepact (hack/sdkpatch): reads only the protocolVersion\n"
)

// readVersionOnly makes streamable.go read _meta's protocolVersion without
// decoding the rest of _meta: in protocolVersionFromMessage (spliced) and
// in servePOST.
func readVersionOnly(src []byte) ([]byte, error) {
	src, err := splice(src, "protocolVersionFromMessage", protoVersionSrc)
	if err != nil {
		return nil, err
	}
	if n := bytes.Count(src, []byte(servePOSTMetaVersion)); n != 1 {
		return nil, fmt.Errorf("servePOST's reading of the protocol version occurs %d times, want once", n)
	}
	return bytes.Replace(src, []byte(servePOSTMetaVersion), []byte(metaVersionRead), 1), nil
}

// mapHints are the map decoders' allocations in segmentio's decode.go,
// each with room for 64 entries (a few KiB each, where a message's maps
// mostly hold one to five), and what they become: maps that grow as Go's
// own decoder's do.
var mapHints = []string{"map[string]any", "map[string]RawMessage", "map[string]string", "map[string][]string", "map[string]bool"}

// unhintMaps drops the 64-entry size hint of each map decoder.
func unhintMaps(src []byte) ([]byte, error) {
	for _, t := range mapHints {
		old := []byte("m = make(" + t + ", 64)\n")
		if n := bytes.Count(src, old); n != 1 {
			return nil, fmt.Errorf("%q occurs %d times, want once", old, n)
		}
		src = bytes.Replace(src, old, []byte("m = make("+t+") // patched by kubepact (hack/sdkpatch): was room for 64 entries\n"), 1)
	}
	return src, nil
}

// funcSpan is the byte span of the top-level function name in src, from
// its doc comment to its closing brace.
func funcSpan(src []byte, name string) (from, to int, _ error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return 0, 0, err
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != name {
			continue
		}
		start := fn.Pos()
		if fn.Doc != nil {
			start = fn.Doc.Pos()
		}
		return fset.Position(start).Offset, fset.Position(fn.End()).Offset, nil
	}
	return 0, 0, fmt.Errorf("no func %s", name)
}

// declsSpan is the byte span of src's top-level declarations after its
// imports, from the first one's doc comment to the last one's end.
func declsSpan(src []byte) (from, to int, _ error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return 0, 0, err
	}
	var decls []ast.Decl
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		decls = append(decls, d)
	}
	if len(decls) == 0 {
		return 0, 0, errors.New("no declarations")
	}
	start := decls[0].Pos()
	switch d := decls[0].(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	}
	return fset.Position(start).Offset, fset.Position(decls[len(decls)-1].End()).Offset, nil
}
