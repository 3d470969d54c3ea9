package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestRunPush: `make image-push` — the layout written, then the image
// pushed to a real registry on loopback and installed by the digest it
// printed: the registry serves that digest under the tag. Pushing a
// registry as a client that mistook it (TLS to a plain one, no
// credentials, nothing listening) is refused with what to do.
func TestRunPush(t *testing.T) {
	reg := testregistry.New(t, nil)
	out := filepath.Join(t.TempDir(), "image")
	var stdout bytes.Buffer
	args := []string{"-binary", staticBin, "-version", testVersion, "-source-date-epoch", "1764590400", "-out", out}
	if err := run(append(args, "-push", reg.Host+"/team/kubepact", "-plain-http"), &stdout); err != nil {
		t.Fatalf("run -push: %v", err)
	}
	m := regexp.MustCompile(`(?m)^pushed (\S+):(\S+)@(sha256:[0-9a-f]{64})\ninstall it with: --set image.repository=(\S+) --set image.digest=(sha256:[0-9a-f]{64})\n\z`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("run -push printed %q; want the pushed reference and the helm flags", stdout.String())
	}
	built := strings.Fields(strings.SplitN(stdout.String(), "\n", 2)[0])[1]
	if m[1] != reg.Host+"/team/kubepact" || m[2] != testVersion || m[3] != built || m[4] != m[1] || m[5] != built {
		t.Errorf("printed %q; want %s/team/kubepact:%s@%s", stdout.String(), reg.Host, testVersion, built)
	}
	repo, err := remote.NewRepository(reg.Host + "/team/kubepact")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	desc, err := repo.Resolve(t.Context(), testVersion)
	if err != nil || desc.Digest.String() != built {
		t.Fatalf("the registry resolves %s to %v, %v; want %s", testVersion, desc.Digest, err, built)
	}
	if _, err := repo.Resolve(t.Context(), built); err != nil {
		t.Errorf("the registry does not serve the printed digest %s: %v", built, err)
	}

	// An explicit tag wins over the version.
	stdout.Reset()
	if err := run(append(args, "-push", reg.Host+"/team/kubepact:rc1", "-plain-http"), &stdout); err != nil || !strings.Contains(stdout.String(), ":rc1@"+built) {
		t.Errorf("run -push …:rc1 = %v, printed %q", err, stdout.String())
	}

	// The registry as a mistaken client meets it.
	locked := testregistry.New(t, &testregistry.Options{Username: "u", Password: "p"})
	noCreds := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(noCreds, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	withCreds := filepath.Join(t.TempDir(), "config.json")
	auth, _ := json.Marshal(map[string]any{"auths": map[string]any{locked.Host: map[string]string{"username": "u", "password": "p"}}})
	if err := os.WriteFile(withCreds, auth, 0o600); err != nil {
		t.Fatal(err)
	}
	wrongCreds := filepath.Join(t.TempDir(), "config.json")
	wrong, _ := json.Marshal(map[string]any{"auths": map[string]any{locked.Host: map[string]string{"username": "u", "password": "not-p"}}})
	if err := os.WriteFile(wrongCreds, wrong, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		want  string // "" means it succeeds
	}{
		{"TLS to a plain-HTTP registry", []string{"-push", reg.Host + "/team/kubepact"}, "IMAGE_PLAIN_HTTP=true"},
		{"no credentials", []string{"-push", locked.Host + "/team/kubepact", "-plain-http", "-docker-config", noCreds}, "refused the push"},
		{"wrong credentials", []string{"-push", locked.Host + "/team/kubepact", "-plain-http", "-docker-config", wrongCreds}, "refused the push"},
		{"credentials", []string{"-push", locked.Host + "/team/kubepact", "-plain-http", "-docker-config", withCreds}, ""},
		{"nothing listening", []string{"-push", "127.0.0.1:1/team/kubepact", "-plain-http"}, "could not be reached"},
		{"a digest", []string{"-push", reg.Host + "/team/kubepact@" + built}, "names a digest"},
		{"not a reference", []string{"-push", "Not A Ref"}, "is not host[:port]/repository"},
		{"plain HTTP without a push", []string{"-plain-http"}, "give -push"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(append(args, tc.extra...), &bytes.Buffer{})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("run %q: %v", tc.extra, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("run %q = %v; want an error saying %q", tc.extra, err, tc.want)
			}
		})
	}
}
