// Command sdkpatch carries kubepact's one patch to a dependency: the
// go-sdk's internal/json.Unmarshal, which allocates a 32 KiB decoder buffer
// for every message it decodes (several per call), replaced by one that
// parses in place with the same results and errors (replacement.go).
//
// go build -overlay cannot replace files in the module cache, so the patch
// is applied to a copy: this command reads the pinned module from the
// module cache, checks that the file it patches is the one the patch was
// written against (sha256), copies the module's Go sources into a
// directory with replacement.go's Unmarshal spliced over upstream's, and
// writes a go.work beside it that uses the kubepact module and replaces the
// go-sdk with that copy. A go command run with GOWORK naming it builds
// kubepact with the patch; go.mod is untouched:
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
// with upstream's Unmarshal: the same behaviour, more garbage per call.
//
// When the go-sdk is upgraded, or its file differs, this command and its
// test fail and say so: check whether upstream still decodes through a new
// Decoder, then re-pin (sdkVersion, upstreamSHA256) or drop the patch.
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

// The module, version and file the patch is written against, and that
// file's sha256.
const (
	sdkModule      = "github.com/modelcontextprotocol/go-sdk"
	sdkVersion     = "v1.8.0"
	upstreamFile   = "internal/json/json.go"
	upstreamSHA256 = "20af74fbf13163943c908b5082ed0e5f4a660452452d682ac5c77fa1a3b50daa"
	copyDir        = "go-sdk"
	workName       = "go.work"
)

//go:embed replacement.go
var replacement []byte

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
	_, root, _, err := locate()
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(root + "\x00" + upstreamSHA256 + "\x00" + string(replacement)))
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

// write writes the patched copy of the go-sdk and the go.work that uses it
// into dir, the go.work naming the copy as it will be under named (dir
// itself, or where dir is renamed to), and returns the go.work's absolute
// path under named. The copy holds the module's go.mod, licence and
// non-test Go files, each as upstream has it but the patched one.
func write(dir, named string) (string, error) {
	mod, root, goVersion, err := locate()
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(filepath.Join(mod, filepath.FromSlash(upstreamFile)))
	if err != nil {
		return "", err
	}
	patched, err := patch(src)
	if err != nil {
		return "", err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if named, err = filepath.Abs(named); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, copyDir)
	if err := os.RemoveAll(dst); err != nil {
		return "", err
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
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.ToSlash(rel) == upstreamFile {
			raw = patched
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("copying %s: %w", sdkModule, err)
	}
	work := fmt.Sprintf("// Written by hack/sdkpatch: kubepact with its patched %s.\ngo %s\n\nuse %s\n\nreplace %s %s => %s\n",
		sdkModule, goVersion, strconv.Quote(root), sdkModule, sdkVersion, strconv.Quote(filepath.Join(named, copyDir)))
	if err := os.WriteFile(filepath.Join(dir, workName), []byte(work), 0o644); err != nil {
		return "", err
	}
	return filepath.Join(named, workName), nil
}

// locate finds the pinned go-sdk in the module cache, as the build list of
// the module in the current directory has it, and that module's root and
// go version.
func locate() (mod, root, goVersion string, _ error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}\t{{.Dir}}", sdkModule)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	raw, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
		}
		return "", "", "", fmt.Errorf("finding %s in the module cache (go list -m; run from the kubepact module): %w", sdkModule, err)
	}
	version, mod, _ := strings.Cut(strings.TrimSpace(string(raw)), "\t")
	if version != sdkVersion {
		return "", "", "", fmt.Errorf("go.mod requires %s %s, and the patch (hack/sdkpatch) is written against %s: check whether %s still decodes through a new Decoder in Unmarshal, then re-pin sdkVersion and upstreamSHA256, or drop the patch", sdkModule, version, sdkVersion, upstreamFile)
	}
	if mod == "" {
		return "", "", "", fmt.Errorf("%s %s is not in the module cache: run go mod download", sdkModule, version)
	}
	cmd = exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{.GoVersion}}")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if raw, err = cmd.Output(); err != nil {
		return "", "", "", fmt.Errorf("finding the main module (go list -m): %w", err)
	}
	root, goVersion, _ = strings.Cut(strings.TrimSpace(string(raw)), "\t")
	return mod, root, goVersion, nil
}

// patch checks src against the pinned hash and returns it with its
// Unmarshal (doc comment included) replaced by replacement.go's.
func patch(src []byte) ([]byte, error) {
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != upstreamSHA256 {
		return nil, fmt.Errorf("%s@%s %s has sha256 %s, and the patch (hack/sdkpatch) is written against %s: upstream changed; check whether it still decodes through a new Decoder in Unmarshal, then re-pin upstreamSHA256 or drop the patch", sdkModule, sdkVersion, upstreamFile, got, upstreamSHA256)
	}
	from, to, err := funcSpan(src, "Unmarshal")
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", upstreamFile, err)
	}
	rfrom, rto, err := funcSpan(replacement, "Unmarshal")
	if err != nil {
		return nil, fmt.Errorf("replacement.go: %w", err)
	}
	var b bytes.Buffer
	b.Write(src[:from])
	b.WriteString("// Unmarshal is patched by kubepact (hack/sdkpatch), applied to a copy of the module that a go.work replaces it with.\n//\n")
	b.Write(replacement[rfrom:rto])
	b.Write(src[to:])
	return b.Bytes(), nil
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
