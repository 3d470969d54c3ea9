package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is, shared by this builder and the Dockerfile (its test
// reads the Dockerfile and holds the two to the same values).
const (
	// Entrypoint is the binary's path in the image; the shape (mcp, sidecar,
	// operator) is the first argument.
	Entrypoint = "/kubepact"
	// SidecarPath is where the slim sidecar build (go build -tags
	// sidecaronly ./cmd/kubepact: `kubepact sidecar` and `version` only, no
	// Kubernetes libraries) is, beside the full binary: what the injection
	// webhook runs in a Pod's sidecar.
	SidecarPath = "/kubepact-sidecar"
	// User is distroless' nonroot user and group, numeric so that a
	// runAsNonRoot pod can be admitted without resolving a name.
	User = "65532:65532"
	// WorkingDir is the nonroot user's home, as in distroless.
	WorkingDir = "/home/nonroot"
	// DefaultSource is the org.opencontainers.image.source label.
	DefaultSource = "https://github.com/kubepact/kubepact"

	uid             = 65532
	maxBinaryBytes  = 512 << 20
	maxCABundle     = 4 << 20
	caBundlePath    = "etc/ssl/certs/ca-certificates.crt"
	imageTitle      = "kubepact"
	imageDescriptor = "Kubernetes-native MCP server for Pacto service contracts: kubepact mcp, sidecar and operator in one image"
)

// Options say what goes into the image.
type Options struct {
	// Binary is the path of a static Linux kubepact binary (built with
	// CGO_ENABLED=0). Its ELF header decides the image's architecture.
	Binary string
	// SidecarBinary is the path of the slim sidecar build of the same
	// source and version, for the same architecture, placed at
	// SidecarPath. Empty leaves it out (the image then serves every shape
	// from Entrypoint, and injected sidecars cannot run).
	SidecarBinary string
	// Version is the version the binary was built with (-X main.version);
	// it becomes the org.opencontainers.image.version label.
	Version string
	// Revision is the VCS revision label; empty leaves the label out.
	Revision string
	// Source is the org.opencontainers.image.source label; empty means
	// DefaultSource.
	Source string
	// Created is the image's creation time (config, history, the created
	// label and every file's mtime). The zero time means the Unix epoch, so
	// that two builds of one binary have one digest.
	Created time.Time
	// CACertificates is the path of a PEM bundle of CA certificates placed
	// at /etc/ssl/certs/ca-certificates.crt (where Go looks for them), so
	// the binary can verify registries' TLS certificates. Empty leaves it
	// out.
	CACertificates string
}

// Labels returns the org.opencontainers.image.* labels of an image built
// with opts.
func Labels(opts *Options) map[string]string {
	source := opts.Source
	if source == "" {
		source = DefaultSource
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       imageTitle,
		"org.opencontainers.image.description": imageDescriptor,
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.url":         source,
		"org.opencontainers.image.version":     opts.Version,
		"org.opencontainers.image.created":     created(opts).Format(time.RFC3339),
	}
	if opts.Revision != "" {
		labels["org.opencontainers.image.revision"] = opts.Revision
	}
	return labels
}

func created(opts *Options) time.Time {
	if opts.Created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return opts.Created.UTC().Truncate(time.Second)
}

// Build returns the image: one layer holding the binary at Entrypoint, a
// passwd and group entry for the nonroot user, its home, /tmp and, when
// asked, the CA bundle, on an empty base; the entrypoint, user, working
// directory and labels set. Nothing else is in it: no shell, no package
// manager, no libc.
func Build(opts *Options) (v1.Image, error) {
	if opts == nil || opts.Binary == "" {
		return nil, errors.New("Options.Binary is required: the path of a static Linux kubepact binary")
	}
	if opts.Version == "" || strings.ContainsFunc(opts.Version, isSpaceOrControl) {
		return nil, fmt.Errorf("Options.Version %q must be the version the binary was built with: non-empty, no spaces or control characters", opts.Version)
	}
	bin, err := readBounded(opts.Binary, maxBinaryBytes)
	if err != nil {
		return nil, fmt.Errorf("Options.Binary: %w", err)
	}
	arch, err := staticLinuxArch(bin)
	if err != nil {
		return nil, fmt.Errorf("Options.Binary %s: %w", opts.Binary, err)
	}
	var sidecar []byte
	if opts.SidecarBinary != "" {
		if sidecar, err = readBounded(opts.SidecarBinary, maxBinaryBytes); err != nil {
			return nil, fmt.Errorf("Options.SidecarBinary: %w", err)
		}
		sidecarArch, err := staticLinuxArch(sidecar)
		if err != nil {
			return nil, fmt.Errorf("Options.SidecarBinary %s: %w", opts.SidecarBinary, err)
		}
		if sidecarArch != arch {
			return nil, fmt.Errorf("Options.SidecarBinary %s is built for %s and Options.Binary for %s: build both for the image's architecture", opts.SidecarBinary, sidecarArch, arch)
		}
	}
	var ca []byte
	if opts.CACertificates != "" {
		if ca, err = readBounded(opts.CACertificates, maxCABundle); err != nil {
			return nil, fmt.Errorf("Options.CACertificates: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("Options.CACertificates %s holds no PEM certificate: give a CA bundle such as /etc/ssl/certs/ca-certificates.crt", opts.CACertificates)
		}
	}

	when := created(opts)
	layer, err := layerArchive(when, bin, sidecar, ca)
	if err != nil {
		return nil, err
	}

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: when},
			CreatedBy: "hack/image: static kubepact binary, nonroot passwd and group entries",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("appending the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: when}
	cf.Config.Entrypoint = []string{Entrypoint}
	cf.Config.Cmd = nil
	cf.Config.User = User
	cf.Config.WorkingDir = WorkingDir
	cf.Config.Labels = Labels(opts)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	return img, nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// elfArch maps an ELF machine to a Go/OCI architecture name.
var elfArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_ARM:     "arm",
	elf.EM_PPC64:   "ppc64le",
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// staticLinuxArch returns the architecture of a statically linked Linux
// executable, and an error saying what is wrong with anything else: the
// image has no dynamic loader and no libc.
func staticLinuxArch(bin []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return "", fmt.Errorf("not an ELF executable (%w): build it with GOOS=linux", err)
	}
	defer f.Close()
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("built for OS ABI %v, not Linux: build it with GOOS=linux", f.OSABI)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("ELF type %v is not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked (it names an ELF interpreter) and the image has no libc: build it with CGO_ENABLED=0")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return "", fmt.Errorf("needs shared libraries %v and the image has none: build it with CGO_ENABLED=0", libs)
	}
	arch, ok := elfArch[f.Machine]
	if !ok || (f.Machine == elf.EM_PPC64 && f.Data != elf.ELFDATA2LSB) {
		return "", fmt.Errorf("machine %v is not an architecture the image is built for (amd64, arm64, arm, ppc64le, s390x, riscv64)", f.Machine)
	}
	return arch, nil
}

type entry struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
	dir      bool
}

// memLayer is the image's one layer, held gzip-compressed in memory with
// both digests computed while it was written: building it passes over the
// binary once (gzip of ~60 MB is what a build costs).
type memLayer struct {
	compressed     []byte
	digest, diffID v1.Hash
}

func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)     { return int64(len(l.compressed)), nil }

func (l *memLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}

func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.compressed))
}

func sha256Hash(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// layerArchive writes the layer's tar, gzip-compressed, byte for byte the
// same for the same inputs and Go toolchain: entries in name order, fixed
// owners and mtimes, USTAR headers, no gzip name or time, gzip.BestSpeed
// (as go-containerregistry and ko use: the build's cost is this compression).
func layerArchive(when time.Time, bin, sidecar, ca []byte) (*memLayer, error) {
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("nonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: uid, gid: uid, dir: true},
		{name: "kubepact", mode: 0o555, data: bin},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	if sidecar != nil {
		entries = append(entries, entry{name: strings.TrimPrefix(SidecarPath, "/"), mode: 0o555, data: sidecar})
	}
	if ca != nil {
		entries = append(entries,
			entry{name: "etc/ssl/", mode: 0o755, dir: true},
			entry{name: "etc/ssl/certs/", mode: 0o755, dir: true},
			entry{name: caBundlePath, mode: 0o644, data: ca})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })

	var buf bytes.Buffer
	digest, diffID := sha256.New(), sha256.New()
	zw, err := gzip.NewWriterLevel(io.MultiWriter(&buf, digest), gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(io.MultiWriter(zw, diffID))
	for _, e := range entries {
		hdr := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: when,
			Format:  tar.FormatUSTAR,
		}
		if e.dir {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("writing the layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("writing the layer entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &memLayer{compressed: buf.Bytes(), digest: sha256Hash(digest), diffID: sha256Hash(diffID)}, nil
}

// WriteLayout writes img as the only image of an OCI image layout at dir,
// annotated with refName (org.opencontainers.image.ref.name). It builds the
// layout beside dir and renames it into place, so dir never holds half a
// layout; an existing dir that is not an OCI layout is refused, not
// replaced.
func WriteLayout(dir string, img v1.Image, refName string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s exists and is not an OCI layout (no oci-layout file): refusing to replace it", dir)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("starting the OCI layout: %w", err)
	}
	var opts []layout.Option
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		return fmt.Errorf("writing the image into the OCI layout: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
