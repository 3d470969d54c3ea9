package main

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/kubepact/kubepact/internal/sidecar/podspec"
	"github.com/kubepact/kubepact/test/gobuild"
	"github.com/kubepact/kubepact/test/testregistry"
)

// testVersion is stamped into the binary the tests build, as `make image`
// stamps $(VERSION).
const testVersion = "v0.0.0-imagetest"

// staticBin is the kubepact binary built once for every test here, with the
// flags the Dockerfile and `make image` use; sidecarBin is the slim sidecar
// build of the same source (-tags sidecaronly), built the same way.
var staticBin, sidecarBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubepact-image-")
	if err != nil {
		panic(err)
	}
	staticBin = filepath.Join(dir, "kubepact")
	build := gobuild.Command(filepath.Join("..", ".."), staticBin, "./cmd/kubepact", "-X main.version="+testVersion)
	build.Env = append(build.Env, "GOOS=linux")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building the static kubepact binary: " + err.Error())
	}
	sidecarBin = filepath.Join(dir, "kubepact-sidecar")
	build = gobuild.Command(filepath.Join("..", ".."), sidecarBin, "./cmd/kubepact", "-X main.version="+testVersion)
	gobuild.Tags(build, "sidecaronly")
	build.Env = append(build.Env, "GOOS=linux")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building the slim sidecar binary: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestImage builds the image in process, writes it as an OCI layout, pushes
// it to a registry on loopback, pulls it back and checks what a cluster
// would run: the entrypoint, a numeric non-root user, the labels, the
// filesystem (exactly the expected files, no shell) and the binary itself
// running `kubepact version` from the extracted layer.
func TestImage(t *testing.T) {
	opts := &Options{
		Binary:         staticBin,
		SidecarBinary:  sidecarBin,
		Version:        testVersion,
		Revision:       "0123456789abcdef0123456789abcdef01234567",
		Created:        time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		CACertificates: writeCABundle(t),
	}
	img, err := Build(opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// The manifest and config agree. (The layer's bytes are checked once, by
	// oras-go's digest checks on push and pull and by comparing the extracted
	// binary with the built one: under -race each pass over ~60 MB costs tens
	// of seconds.)
	if err := validate.Image(img, validate.Fast); err != nil {
		t.Fatalf("the built image is inconsistent: %v", err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	// The OCI layout holds the one image under its reference name.
	dir := filepath.Join(t.TempDir(), "image")
	if err := WriteLayout(dir, img, testVersion); err != nil {
		t.Fatalf("WriteLayout: %v", err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("reading the layout back: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != want || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != testVersion {
		t.Fatalf("layout index = %+v; want one manifest %s named %s", im.Manifests, want, testVersion)
	}
	fromLayout, err := idx.Image(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(fromLayout, validate.Fast); err != nil {
		t.Fatalf("the image in the layout is inconsistent: %v", err)
	}

	// Pushed from the layout to a real registry and pulled back by tag into
	// a fresh layout, with oras-go (the OCI client kubepact itself uses), it
	// is the same image.
	reg := testregistry.New(t, nil)
	repo, err := remote.NewRepository(reg.Host + "/kubepact")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	src, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := oras.Copy(t.Context(), src, testVersion, repo, testVersion, oras.DefaultCopyOptions)
	if err != nil {
		t.Fatalf("pushing to %s: %v", repo.Reference, err)
	}
	if pushed.Digest.String() != want.String() {
		t.Fatalf("pushed digest = %s; want %s", pushed.Digest, want)
	}
	pullDir := t.TempDir()
	dst, err := oci.New(pullDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(t.Context(), repo, testVersion, dst, testVersion, oras.DefaultCopyOptions); err != nil {
		t.Fatalf("pulling %s:%s: %v", repo.Reference, testVersion, err)
	}
	pulledIdx, err := layout.ImageIndexFromPath(pullDir)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := pulledIdx.Image(want)
	if err != nil {
		t.Fatalf("the pulled layout lacks %s: %v", want, err)
	}
	if err := validate.Image(pulled, validate.Fast); err != nil {
		t.Fatalf("the pulled image is inconsistent: %v", err)
	}
	if mt, _ := pulled.MediaType(); mt != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type = %q; want an OCI image manifest", mt)
	}

	cf, err := pulled.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform = %s/%s; want linux/%s (from the binary's ELF header)", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if got := cf.Config.Entrypoint; !slices.Equal(got, []string{"/kubepact"}) || len(cf.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q, cmd %q; want [/kubepact] and no cmd: the shape is the first argument", got, cf.Config.Cmd)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user = %q; want the numeric non-root 65532:65532", cf.Config.User)
	}
	if cf.Config.WorkingDir != "/home/nonroot" {
		t.Errorf("working dir = %q; want /home/nonroot", cf.Config.WorkingDir)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.title":       "kubepact",
		"org.opencontainers.image.description": imageDescriptor,
		"org.opencontainers.image.source":      "https://github.com/kubepact/kubepact",
		"org.opencontainers.image.url":         "https://github.com/kubepact/kubepact",
		"org.opencontainers.image.version":     testVersion,
		"org.opencontainers.image.revision":    opts.Revision,
		"org.opencontainers.image.created":     "2026-11-30T12:00:00Z",
	}
	if diff := cmp.Diff(wantLabels, cf.Config.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !cf.Created.Equal(opts.Created) {
		t.Errorf("config created = %v; want %v", cf.Created, opts.Created)
	}

	files := extract(t, pulled)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	// (Paths as the flattened filesystem cleans them: no trailing slash.)
	wantNames := []string{"etc", "etc/group", "etc/passwd", "etc/ssl", "etc/ssl/certs", "etc/ssl/certs/ca-certificates.crt", "home", "home/nonroot", "kubepact", "kubepact-sidecar", "tmp"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("files in the image (-want +got):\n%s", diff)
	}
	for _, n := range names {
		switch filepath.Base(n) {
		case "sh", "bash", "dash", "ash", "zsh", "ksh", "csh", "tcsh", "busybox":
			t.Errorf("the image holds a shell: %s", n)
		}
	}
	if SidecarPath != podspec.Command {
		t.Errorf("the image carries the slim sidecar at %s, but the injection webhook runs %s", SidecarPath, podspec.Command)
	}
	for name, path := range map[string]string{"kubepact": staticBin, "kubepact-sidecar": sidecarBin} {
		f := files[name]
		if f.hdr.Mode != 0o555 || f.hdr.Uid != 0 {
			t.Errorf("/%s mode %o owner %d; want 0555 owned by root, so the nonroot user cannot replace it", name, f.hdr.Mode, f.hdr.Uid)
		}
		built, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(f.data) != sha256.Sum256(built) {
			t.Errorf("/%s in the image is not the binary that was built", name)
		}
	}
	bin := files["kubepact"]
	if home := files["home/nonroot"]; home.hdr.Uid != 65532 || home.hdr.Gid != 65532 {
		t.Errorf("/home/nonroot is owned by %d:%d; want 65532:65532", home.hdr.Uid, home.hdr.Gid)
	}
	if tmp := files["tmp"]; tmp.hdr.Mode != 0o1777 {
		t.Errorf("/tmp mode = %o; want 1777", tmp.hdr.Mode)
	}
	if passwd := string(files["etc/passwd"].data); !strings.Contains(passwd, "nonroot:x:65532:65532:nonroot:/home/nonroot:") || strings.Contains(passwd, ":0:0:") {
		t.Errorf("/etc/passwd = %q; want only the nonroot user 65532", passwd)
	}
	if ca := files["etc/ssl/certs/ca-certificates.crt"].data; !x509.NewCertPool().AppendCertsFromPEM(ca) {
		t.Errorf("the CA bundle in the image holds no certificate")
	}

	// The binary is static and runs from the extracted layer.
	f, err := elf.NewFile(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("/kubepact is not ELF: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("/kubepact names an ELF interpreter; the image has no libc")
		}
	}
	if runtime.GOOS != "linux" {
		t.Skip("running the Linux binary needs Linux")
	}
	exe := filepath.Join(t.TempDir(), "kubepact")
	if err := os.WriteFile(exe, bin.data, 0o555); err != nil {
		t.Fatal(err)
	}
	sidecarExe := filepath.Join(t.TempDir(), "kubepact-sidecar")
	if err := os.WriteFile(sidecarExe, files["kubepact-sidecar"].data, 0o555); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"/kubepact": exe, SidecarPath: sidecarExe} {
		out, err := exec.CommandContext(t.Context(), path, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", name, err, out)
		}
		if got := string(out); got != "kubepact "+testVersion+"\n" {
			t.Errorf("%s version printed %q; want %q, the version label", name, got, "kubepact "+testVersion+"\n")
		}
	}
	// The slim build runs the sidecar only, and says so of the others.
	if out, err := exec.CommandContext(t.Context(), sidecarExe, "operator").CombinedOutput(); err == nil || !strings.Contains(string(out), "slim sidecar build") {
		t.Errorf("%s operator: %v %q; want a refusal naming the slim sidecar build", SidecarPath, err, out)
	}
}

type file struct {
	hdr  *tar.Header
	data []byte
}

// extract reads the image's flattened filesystem.
func extract(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]file{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("reading the image's filesystem: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := files[hdr.Name]; dup {
			t.Errorf("%s is in the image twice", hdr.Name)
		}
		files[hdr.Name] = file{hdr: hdr, data: data}
	}
}

// writeCABundle writes a self-signed CA certificate as a PEM bundle.
func writeCABundle(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubepact image test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReproducible: the same binary and options give the same digest, and
// the layout written again over the first is byte for byte the same; the
// creation time is part of the identity.
func TestReproducible(t *testing.T) {
	opts := &Options{Binary: staticBin, Version: testVersion, Created: time.Unix(1764590400, 0)}
	digest := func(o *Options) v1.Hash {
		t.Helper()
		img, err := Build(o)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first, second := digest(opts), digest(opts)
	if first != second {
		t.Fatalf("two builds of one binary: %s and %s; want one digest", first, second)
	}
	later := *opts
	later.Created = opts.Created.Add(time.Second)
	if d := digest(&later); d == first {
		t.Errorf("a different creation time gave the same digest %s", d)
	}

	img, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	if err := WriteLayout(dir, img, "x"); err != nil {
		t.Fatal(err)
	}
	index1, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, img, "x"); err != nil {
		t.Fatalf("writing over an existing layout: %v", err)
	}
	index2, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(index1, index2) {
		t.Errorf("index.json changed when the layout was written again:\n%s\n%s", index1, index2)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".image.tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary layouts left behind: %v", leftovers)
	}
}

// TestBuildRefuses: every bad input is an error that says what was wrong
// and what is accepted, and no image.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "script")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts *Options
		want string
	}{
		{"nil options", nil, "Options.Binary is required"},
		{"no binary", &Options{Version: "v1"}, "Options.Binary is required"},
		{"missing binary", &Options{Binary: filepath.Join(dir, "absent"), Version: "v1"}, "no such file"},
		{"directory", &Options{Binary: dir, Version: "v1"}, "not a regular file"},
		{"not ELF", &Options{Binary: text, Version: "v1"}, "not an ELF executable"},
		{"no version", &Options{Binary: staticBin}, "Options.Version"},
		{"version with a space", &Options{Binary: staticBin, Version: "v1 beta"}, "no spaces"},
		{"sidecar binary not ELF", &Options{Binary: staticBin, SidecarBinary: text, Version: "v1"}, "Options.SidecarBinary " + text + ": not an ELF executable"},
		{"missing sidecar binary", &Options{Binary: staticBin, SidecarBinary: filepath.Join(dir, "absent"), Version: "v1"}, "Options.SidecarBinary: open"},
		{"CA bundle without a certificate", &Options{Binary: staticBin, Version: "v1", CACertificates: notPEM}, "holds no PEM certificate"},
	}
	if dyn := dynamicExecutable(); dyn != "" {
		tests = append(tests, struct {
			name string
			opts *Options
			want string
		}{"dynamically linked", &Options{Binary: dyn, Version: "v1"}, "CGO_ENABLED=0"})
	} else {
		t.Log("no dynamically linked executable on this machine: that case is not run")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Build(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Build = %v, %v; want an error containing %q", img, err, tt.want)
			}
		})
	}
}

// dynamicExecutable returns a dynamically linked executable of this
// machine, or "" when there is none.
func dynamicExecutable() string {
	for _, n := range []string{"ls", "cat", "true"} {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				f.Close()
				return p
			}
		}
		f.Close()
	}
	return ""
}

// TestWriteLayoutRefusesForeignDirectory: a directory that is not an OCI
// layout is never replaced.
func TestWriteLayoutRefusesForeignDirectory(t *testing.T) {
	img, err := Build(&Options{Binary: staticBin, Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, img, ""); err == nil || !strings.Contains(err.Error(), "not an OCI layout") {
		t.Fatalf("WriteLayout over a foreign directory = %v; want a refusal", err)
	}
	if got, err := os.ReadFile(keep); err != nil || string(got) != "mine" {
		t.Errorf("the foreign directory's file is now %q, %v", got, err)
	}
}

// TestRun: the command's flags, as `make image` passes them.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "image")
	var stdout bytes.Buffer
	if err := run([]string{"-binary", staticBin, "-version", testVersion, "-source-date-epoch", "1764590400", "-out", out}, &stdout); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !regexp.MustCompile(`^.+ sha256:[0-9a-f]{64}\n$`).MatchString(stdout.String()) {
		t.Errorf("run printed %q; want the layout and the image digest", stdout.String())
	}
	if _, err := layout.ImageIndexFromPath(out); err != nil {
		t.Errorf("no OCI layout at %s: %v", out, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-binary", staticBin, "-version", testVersion}, "-out is required"},
		{[]string{"-binary", staticBin, "-version", testVersion, "-out", out, "extra"}, "unexpected arguments"},
		{[]string{"-binary", staticBin, "-version", testVersion, "-out", out, "-source-date-epoch", "-1"}, "-source-date-epoch"},
	} {
		if err := run(tt.args, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) = %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
}

// TestDockerfileAgrees holds the Dockerfile to what this builder makes: the
// same entrypoint, user, working directory and labels, the same build flags
// as `make build`, and a base pinned by digest. The base is the one
// difference (distroless static there, an empty base here).
func TestDockerfileAgrees(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, drop comments.
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(raw), "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	var froms []string
	last := map[string]string{}
	labels := map[string]string{}
	var runs []string
	var copies []string
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		instr = strings.ToUpper(instr)
		last[instr] = strings.TrimSpace(rest)
		switch instr {
		case "FROM":
			froms = append(froms, rest)
		case "LABEL":
			for _, m := range regexp.MustCompile(`([a-z0-9.]+)="([^"]*)"`).FindAllStringSubmatch(rest, -1) {
				labels[m[1]] = m[2]
			}
		case "RUN":
			if strings.Contains(rest, "go build") {
				runs = append(runs, rest)
			}
		case "COPY":
			copies = append(copies, rest)
		}
	}
	if len(froms) < 2 || !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(froms[len(froms)-1]) {
		t.Errorf("FROM lines %q: want a build stage and a final base pinned by digest", froms)
	}
	var entry []string
	if err := json.Unmarshal([]byte(last["ENTRYPOINT"]), &entry); err != nil || !slices.Equal(entry, []string{Entrypoint}) {
		t.Errorf("ENTRYPOINT %s; want [%q] in exec form (no shell)", last["ENTRYPOINT"], Entrypoint)
	}
	if last["USER"] != User {
		t.Errorf("USER %q; want %q", last["USER"], User)
	}
	if last["WORKDIR"] != WorkingDir {
		t.Errorf("final WORKDIR %q; want %q", last["WORKDIR"], WorkingDir)
	}
	if _, ok := last["CMD"]; ok {
		t.Errorf("CMD %q: the image has no default command, the shape is the first argument", last["CMD"])
	}
	opts := &Options{Version: "v9.9.9", Revision: "abc", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	subst := strings.NewReplacer("${VERSION}", opts.Version, "${REVISION}", opts.Revision, "${CREATED}", "2026-01-02T03:04:05Z")
	for k, v := range labels {
		labels[k] = subst.Replace(v)
	}
	if diff := cmp.Diff(Labels(opts), labels); diff != "" {
		t.Errorf("Dockerfile labels differ from the built image's (-built +Dockerfile):\n%s", diff)
	}
	// Two builds of one source: the full binary and the slim sidecar
	// (-tags sidecaronly), each copied to its path in the image.
	if len(runs) != 2 || strings.Contains(runs[0], "-tags") || !strings.Contains(runs[1], "-tags sidecaronly") {
		t.Errorf("the Dockerfile's go build lines %q: want the full build, then the slim sidecar build with -tags sidecaronly", runs)
	}
	for _, run := range runs {
		for _, flag := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w -X main.version=${VERSION}"`, "./cmd/kubepact"} {
			if !strings.Contains(run, flag) {
				t.Errorf("the Dockerfile's go build %q lacks %s", run, flag)
			}
		}
	}
	for _, want := range []string{"/out/kubepact " + Entrypoint, "/out/kubepact-sidecar " + SidecarPath} {
		if !slices.ContainsFunc(copies, func(c string) bool { return strings.HasSuffix(c, want) && strings.Contains(c, "--chmod=0555") }) {
			t.Errorf("the Dockerfile's COPY lines %q: none copies %s with --chmod=0555", copies, want)
		}
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "LDFLAGS := -X main.version=$(VERSION)") {
		t.Errorf("the Makefile's LDFLAGS are no longer -X main.version=$(VERSION): update the Dockerfile, hack/image and this test together")
	}
}
