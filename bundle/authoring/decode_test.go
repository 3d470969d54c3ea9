package authoring

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeArgs(t *testing.T) {
	yes := true
	tests := []struct {
		name    string
		raw     string
		want    EditRequest
		wantErr *Error // compared on Code, Field and DidYouMean
	}{
		{name: "empty", raw: ``},
		{name: "null", raw: `null`},
		{name: "empty object", raw: `{}`},
		{name: "scalars", raw: `{"path":"a","version":"1.0.0","stores_data":true,"dry_run":true}`,
			want: EditRequest{Path: "a", Version: "1.0.0", StoresData: &yes, DryRun: true}},
		{name: "null value is absent", raw: `{"path":null,"stores_data":null}`},
		{name: "structured kept raw", raw: `{"add_interfaces":[{"name":"x","type":"openapi"}]}`,
			want: EditRequest{AddInterfaces: json.RawMessage(`[{"name":"x","type":"openapi"}]`)}},
		{name: "structured string kept raw", raw: `{"remove_interfaces":"[\"x\"]"}`,
			want: EditRequest{RemoveInterfaces: json.RawMessage(`"[\"x\"]"`)}},
		{name: "not an object", raw: `[1]`, wantErr: &Error{Code: CodeInvalidArgument}},
		{name: "string", raw: `"path"`, wantErr: &Error{Code: CodeInvalidArgument}},
		{name: "unknown key", raw: `{"pth":"a"}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "pth", DidYouMean: "path"}},
		{name: "unknown key far from all", raw: `{"zzzzzzzz":1}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "zzzzzzzz"}},
		{name: "fragment of a name", raw: `{"metadata":{}}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "metadata", DidYouMean: "set_metadata"}},
		{name: "case", raw: `{"DryRun":true}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "DryRun", DidYouMean: "dry_run"}},
		{name: "duplicate key", raw: `{"path":"a","path":"b"}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "path"}},
		{name: "wrong type bool", raw: `{"dry_run":"yes"}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "dry_run"}},
		{name: "wrong type string", raw: `{"version":1}`, wantErr: &Error{Code: CodeInvalidArgument, Field: "version"}},
		{name: "trailing data", raw: `{"path":"a"} {}`, wantErr: &Error{Code: CodeInvalidArgument}},
		{name: "malformed", raw: `{"path":`, wantErr: &Error{Code: CodeInvalidArgument, Field: "path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got EditRequest
			err := DecodeArgs(json.RawMessage(tt.raw), &got)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("DecodeArgs(%s) = %v, want no error", tt.raw, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("DecodeArgs(%s) mismatch (-want +got):\n%s", tt.raw, diff)
				}
				return
			}
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("DecodeArgs(%s) = %v, want an *Error", tt.raw, err)
			}
			gotErr := &Error{Code: ae.Code, Field: ae.Field, DidYouMean: ae.DidYouMean}
			if diff := cmp.Diff(tt.wantErr, gotErr, cmp.AllowUnexported(Error{})); diff != "" {
				t.Errorf("DecodeArgs(%s) error %q mismatch (-want +got):\n%s", tt.raw, ae.Message, diff)
			}
			if ae.Message == "" {
				t.Errorf("DecodeArgs(%s): empty message", tt.raw)
			}
		})
	}
}

func TestDecodeArgsRejectsNonStruct(t *testing.T) {
	var m map[string]any
	if err := DecodeArgs(json.RawMessage(`{}`), &m); err == nil {
		t.Error("DecodeArgs into a map: got no error")
	}
}

func TestStructured(t *testing.T) {
	list := shape{list: true, what: "strings"}
	tests := []struct {
		raw     string
		want    string
		ok      bool
		wantErr bool
	}{
		{raw: ``},
		{raw: `null`},
		{raw: `["a"]`, want: `["a"]`, ok: true},
		{raw: `"[\"a\"]"`, want: `["a"]`, ok: true},
		{raw: `" [ ] "`, want: `[ ]`, ok: true},
		{raw: `{}`, wantErr: true},
		{raw: `"{}"`, wantErr: true},
		{raw: `"a"`, wantErr: true},
		{raw: `""`, wantErr: true},
		{raw: `"[1,"`, wantErr: true},
		{raw: `3`, wantErr: true},
		{raw: `true`, wantErr: true},
	}
	for _, tt := range tests {
		got, ok, err := structured("f", json.RawMessage(tt.raw), list)
		if (err != nil) != tt.wantErr || ok != tt.ok || string(got) != tt.want {
			t.Errorf("structured(%s) = %s, %v, %v; want %s, %v, error %v", tt.raw, got, ok, err, tt.want, tt.ok, tt.wantErr)
		}
	}
}

// FuzzDecodeArgs feeds arbitrary bytes through the argument decoder and the
// structured-argument decoding of pacto_edit and pacto_create. It must never
// panic, every failure must be an *Error with a message, and a decoded
// request must survive a re-encode/decode round trip unchanged.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`,
		`{"path":"a","version":"1.0.0","dry_run":true}`,
		`{"add_interfaces":[{"name":"api","type":"openapi","visibility":"public"}]}`,
		`{"add_interfaces":"[{\"name\":\"api\",\"type\":\"grpc\"}]"}`,
		`{"remove_interfaces":["a","b"],"remove_metadata":"[\"k\"]"}`,
		`{"set_metadata":{"a":{"b":[1,2.5,true,null]}}}`,
		`{"set_metadata":"{\"a\":1}"}`,
		`{"add_dependencies":[{"ref":"oci://r/x:1"}],"remove_dependencies":["oci://r/y"]}`,
		`{"add_config_properties":[{"name":"PORT","type":"integer","required":true}]}`,
		`{"stores_data":false,"data_loss_impact":"high","workload":"job"}`,
		`{"pth":"a"}`, `{"path":"a","path":"b"}`, `{"dry_run":"yes"}`,
		`{"add_interfaces":[{"name":"a","typ":"openapi"}]}`,
		`{"add_interfaces":[null]}`, `{"set_metadata":{"a":1,"a":2}}`,
		`{"name":"orders","interfaces":[{"name":"x","type":"asyncapi"}],"metadata":{"k":"v"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var edit EditRequest
		if err := DecodeArgs(raw, &edit); err != nil {
			checkArgError(t, err)
		} else {
			if _, err := decodeEdit(edit); err != nil {
				checkArgError(t, err)
			}
			again, err := json.Marshal(edit)
			if err != nil {
				t.Fatalf("re-encoding %+v: %v", edit, err)
			}
			var edit2 EditRequest
			if err := DecodeArgs(again, &edit2); err != nil {
				t.Fatalf("decoding re-encoded %s: %v", again, err)
			}
			if diff := cmp.Diff(normaliseRaw(edit), normaliseRaw(edit2)); diff != "" {
				t.Fatalf("round trip of %s changed the request (-first +second):\n%s", raw, diff)
			}
		}
		var create CreateRequest
		if err := DecodeArgs(raw, &create); err != nil {
			checkArgError(t, err)
		} else {
			a := &Authoring{ws: &Workspace{Root: t.TempDir()}}
			if _, err := a.planCreate(create); err != nil {
				var ae *Error
				if !errors.As(err, &ae) || ae.Message == "" {
					t.Fatalf("planCreate error %v is not a described *Error", err)
				}
			}
		}
	})
}

// normaliseRaw compacts the raw JSON fields, which re-encoding reformats.
func normaliseRaw(r EditRequest) EditRequest {
	for _, p := range []*json.RawMessage{&r.AddInterfaces, &r.RemoveInterfaces, &r.AddDependencies,
		&r.RemoveDependencies, &r.AddConfigProperties, &r.SetMetadata, &r.RemoveMetadata} {
		if len(*p) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(*p, &v) == nil {
			*p, _ = json.Marshal(v)
		}
	}
	return r
}

func checkArgError(t *testing.T, err error) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if ae.Code != CodeInvalidArgument && ae.Code != CodeNotFound {
		t.Fatalf("error code %s for %q, want INVALID_ARGUMENT", ae.Code, ae.Message)
	}
	if ae.Message == "" {
		t.Fatal("error without a message")
	}
}
