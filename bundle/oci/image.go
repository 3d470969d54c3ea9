package oci

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/opencontainers/go-digest"
)

// Media types of Pacto's OCI format.
const (
	// LayerMediaType is the media type of a bundle's only layer.
	LayerMediaType = "application/vnd.pacto.bundle.layer.v1.tar+gzip"
	// ManifestMediaType is the OCI image manifest.
	ManifestMediaType = "application/vnd.oci.image.manifest.v1+json"
	// ConfigMediaType is the OCI image configuration NewImage writes.
	ConfigMediaType = "application/vnd.oci.image.config.v1+json"
	// dockerConfigMediaType is accepted on pull: Pacto builds its image with
	// go-containerregistry, whose default configuration type this is.
	dockerConfigMediaType = "application/vnd.docker.container.image.v1+json"
)

// Configuration label keys carrying a bundle's Labels.
const (
	LabelName         = "io.pacto.name"
	LabelVersion      = "io.pacto.version"
	LabelPactoVersion = "io.pacto.pactoVersion"
)

// Labels are the contract facts Pacto records in the image configuration.
type Labels struct {
	Name, Version, PactoVersion string
}

// Image is a bundle in its OCI form: the bytes of the manifest, the
// configuration and the single layer, and the manifest digest, which is the
// bundle's identity.
type Image struct {
	Manifest, Config, Layer []byte
	Digest                  digest.Digest
}

// imageConfig is the image configuration NewImage writes. Its fields are
// marshalled in this order and carry no timestamps, so equal inputs give
// equal bytes; architecture and os are empty as in Pacto's (an image that
// runs nowhere).
type imageConfig struct {
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	Labels map[string]string `json:"Labels,omitempty"` // encoding/json sorts map keys
}

type rootFS struct {
	Type    string          `json:"type"`
	DiffIDs []digest.Digest `json:"diff_ids"`
}

// manifest is the OCI image manifest NewImage writes, fields in this order.
type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type descriptor struct {
	MediaType string        `json:"mediaType"`
	Digest    digest.Digest `json:"digest"`
	Size      int64         `json:"size"`
}

// NewImage builds the OCI form of a bundle from its packed layer (as
// archive.Pack writes it) and its labels. It is pure: no network, no clock,
// and the same inputs always give the same bytes and digest. It streams the
// decompressed layer once to record its diff ID in the configuration, so its
// cost grows with the unpacked size, in constant memory.
func NewImage(layer []byte, labels Labels) (*Image, error) {
	diffID, err := uncompressedDigest(layer)
	if err != nil {
		return nil, err
	}
	return NewImageOf(layer, diffID, labels)
}

// NewImageOf is NewImage for a layer whose diff ID (the digest of the tar
// it compresses) the caller already has, having packed the tar itself:
// the layer is not decompressed again. A wrong diffID makes an image no
// registry client would accept, so only the packer's own digest is
// passed.
func NewImageOf(layer []byte, diffID digest.Digest, labels Labels) (*Image, error) {
	config, err := json.Marshal(imageConfig{
		Config: containerConfig{Labels: map[string]string{
			LabelName:         labels.Name,
			LabelVersion:      labels.Version,
			LabelPactoVersion: labels.PactoVersion,
		}},
		RootFS: rootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	})
	if err != nil {
		return nil, fmt.Errorf("oci: encoding image configuration: %w", err)
	}
	m, err := json.Marshal(manifest{
		SchemaVersion: 2,
		MediaType:     ManifestMediaType,
		Config:        descriptor{MediaType: ConfigMediaType, Digest: digest.FromBytes(config), Size: int64(len(config))},
		Layers:        []descriptor{{MediaType: LayerMediaType, Digest: digest.FromBytes(layer), Size: int64(len(layer))}},
	})
	if err != nil {
		return nil, fmt.Errorf("oci: encoding manifest: %w", err)
	}
	return &Image{Manifest: m, Config: config, Layer: layer, Digest: digest.FromBytes(m)}, nil
}

// uncompressedDigest is the layer's diff ID: the digest of the tar inside
// the gzip stream, which the image configuration records.
func uncompressedDigest(layer []byte) (digest.Digest, error) {
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return "", fmt.Errorf("oci: layer is not gzip: %w", err)
	}
	d := digest.Canonical.Digester()
	if _, err := io.Copy(d.Hash(), zr); err != nil {
		return "", fmt.Errorf("oci: reading layer: %w", err)
	}
	return d.Digest(), nil
}
