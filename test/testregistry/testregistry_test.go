package testregistry_test

import (
	"net/http"
	"testing"

	"github.com/kubepact/kubepact/test/testregistry"
)

func TestRegistry(t *testing.T) {
	tests := []struct {
		name       string
		opts       *testregistry.Options
		user, pass string
		want       int
	}{
		{name: "no auth", opts: nil, want: http.StatusOK},
		{name: "auth, right password", opts: &testregistry.Options{Username: "u", Password: "p"}, user: "u", pass: "p", want: http.StatusOK},
		{name: "auth, wrong password", opts: &testregistry.Options{Username: "u", Password: "p"}, user: "u", pass: "x", want: http.StatusUnauthorized},
		{name: "auth, no credentials", opts: &testregistry.Options{Username: "u", Password: "p"}, want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := testregistry.New(t, tt.opts)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, reg.URL+"/v2/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.user != "" {
				req.SetBasicAuth(tt.user, tt.pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("GET /v2/ status = %d; want %d", resp.StatusCode, tt.want)
			}
			if got := reg.Requests(); len(got) != 1 || got[0].String() != "GET /v2/" {
				t.Errorf("Requests() = %v; want [GET /v2/]", got)
			}
		})
	}
}
