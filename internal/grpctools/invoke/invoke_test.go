package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/internal/grpctools"
	httpinvoke "github.com/kubepact/kubepact/internal/openapitools/invoke"
)

func call(t *testing.T, cl *Client, c *grpctools.Capability, tool, args string) *Result {
	t.Helper()
	res, err := cl.Call(t.Context(), c.Tool(tool), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

func TestUnaryCall(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr})
	res := call(t, cl, c, "Inventory_GetItem", `{"sku":"ab-1","readMask":"sku,quantity"}`)
	want := `{"sku":"ab-1","quantity":"9007199254740993","thumbnail":"/wA=","condition":"CONDITION_NEW","shelf":"A1"}`
	if res.Code != "OK" || res.Status != nil || string(res.Response) != want {
		t.Fatalf("got %s %+v %s\nwant OK %s", res.Code, res.Status, res.Response, want)
	}
	if srv.Calls("GetItem") != 1 {
		t.Errorf("GetItem calls: %d", srv.Calls("GetItem"))
	}
}

func TestServerStreamingBounds(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr, MaxStreamMessages: 10, MaxResponseBytes: 4096})
	for _, tc := range []struct {
		name      string
		args      string
		messages  int
		truncated bool
	}{
		{"whole stream", `{"shelf":"b","count":3}`, 3, false},
		{"exactly the bound", `{"shelf":"b","count":10}`, 10, false},
		{"past the message bound", `{"shelf":"b","count":500}`, 10, true},
		{"past the byte bound", `{"shelf":"b","count":5,"noteBytes":1500}`, 2, true},
		{"a stream that never ends", `{"shelf":"forever"}`, 10, true},
		{"empty stream", `{"shelf":"b"}`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cl, c, "Inventory_ListItems", tc.args)
			if res.Code != "OK" || len(res.Messages) != tc.messages || res.Truncated != tc.truncated {
				t.Fatalf("got %s, %d messages, truncated %v; want OK, %d, %v", res.Code, len(res.Messages), res.Truncated, tc.messages, tc.truncated)
			}
		})
	}
	// The endless stream's handler ended: the bound cancels the call
	// instead of leaving the server sending.
	waitFor(t, "the endless stream's handler to end", func() bool { return srv.StreamsEnded() == 6 })
	if srv.Cancelled() == 0 {
		t.Error("the server never saw the cancelled stream")
	}
}

func TestDeadline(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr, Timeout: 200 * time.Millisecond})
	res := call(t, cl, c, "Inventory_GetItem", `{"sku":"slow"}`)
	if res.Code != "DEADLINE_EXCEEDED" || res.Status == nil || !strings.Contains(res.Status.Message, "did not answer within 200ms (the call's deadline, Timeout)") {
		t.Fatalf("got %s %+v", res.Code, res.Status)
	}
	waitFor(t, "the server to see the deadline", func() bool { return srv.Cancelled() == 1 })
}

func TestErrorDetails(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr})
	res := call(t, cl, c, "Inventory_GetItem", `{"sku":"missing"}`)
	var details []any
	for _, d := range res.Status.Details {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatal(err)
		}
		details = append(details, v)
	}
	if res.Code != "NOT_FOUND" || res.Status.Message != "no item missing" || !res.IsError() {
		t.Errorf("got %s %q", res.Code, res.Status.Message)
	}
	if diff := cmp.Diff(details, []any{
		map[string]any{"@type": "type.googleapis.com/google.rpc.ResourceInfo", "resourceType": "inventory.v1.Item", "resourceName": "missing", "description": "never stocked"},
		map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []any{map[string]any{"field": "sku", "description": "unknown sku"}}},
	}); diff != "" {
		t.Errorf("details (-got +want):\n%s", diff)
	}
}

func TestMetadataFromConfiguration(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr, Metadata: []string{"authorization=Bearer t0ken", "x-tenant=blue"}})
	res := call(t, cl, c, "Inventory_GetItem", `{"sku":"echo-metadata"}`)
	if !strings.Contains(string(res.Response), `"note":"Bearer t0ken"`) {
		t.Fatalf("the service did not get the configured authorization: %s", res.Response)
	}
	if got := srv.LastMetadata().Get("x-tenant"); len(got) != 1 || got[0] != "blue" {
		t.Errorf("x-tenant: %v", got)
	}
}

func TestTransportFailuresInOwnWords(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens there now
	c, cl := project(t, grpctools.Options{Target: addr, Timeout: 5 * time.Second})
	res := call(t, cl, c, "Inventory_GetItem", `{"sku":"x"}`)
	if res.Code != "UNAVAILABLE" || !strings.Contains(res.Status.Message, "is not answering") || strings.Contains(res.Status.Message, "dial tcp") {
		t.Fatalf("got %s %q", res.Code, res.Status.Message)
	}

	srv := startInventory(t)
	c, cl = project(t, grpctools.Options{Target: srv.Addr, MaxMessageBytes: 1 << 20})
	res = call(t, cl, c, "Inventory_GetItem", `{"sku":"huge"}`)
	if res.Code != "RESOURCE_EXHAUSTED" || res.Status.Message != "the service's response is larger than 1048576 bytes (MaxMessageBytes); ask for less" {
		t.Fatalf("got %s %q", res.Code, res.Status.Message)
	}

	_, cl = project(t, grpctools.Options{})
	if _, err := cl.Call(t.Context(), c.Tool("Inventory_GetItem"), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "no gRPC target is configured") {
		t.Errorf("no target: %v", err)
	}
}

func TestBadArgumentsSendNothing(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr})
	for _, args := range []string{
		`{"sku":"a","bogus":1}`,
		`{"sku":5}`,
		`{"readMask":{"paths":["a"]}}`,
		`[1,2]`,
		strings.Repeat(`{"sku":`, 100) + `"x"` + strings.Repeat(`}`, 100),
	} {
		_, err := cl.Call(t.Context(), c.Tool("Inventory_GetItem"), json.RawMessage(args))
		var re *grpctools.RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "inventory.v1.GetItemRequest") {
			t.Errorf("%.40s: got %v, want a RequestError", args, err)
		}
	}
	if n := srv.Calls("GetItem"); n != 0 {
		t.Errorf("%d calls reached the service", n)
	}
}

func TestWritesNeedConfirmation(t *testing.T) {
	srv := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: srv.Addr, AllowWrites: true, Metadata: []string{"authorization=Bearer s3cret"}})
	del := c.Tool("Inventory_DeleteItem")
	_, err := cl.Call(t.Context(), del, json.RawMessage(`{"sku":"a"}`))
	var nc *httpinvoke.NotConfirmedError
	if !errors.As(err, &nc) {
		t.Fatalf("without a confirmer: %v", err)
	}
	var seen *httpinvoke.PendingCall
	decline := httpinvoke.WithConfirmer(t.Context(), func(_ context.Context, pc *httpinvoke.PendingCall) error {
		seen = pc
		return errors.New("declined")
	})
	if _, err := cl.Call(decline, del, json.RawMessage(`{"sku":"a"}`)); err == nil || err.Error() != "declined" {
		t.Fatalf("declined: %v", err)
	}
	if srv.Calls("DeleteItem") != 0 {
		t.Fatal("an unconfirmed call reached the service")
	}
	if seen.URL != "grpc://"+srv.Addr+"/inventory.v1.Inventory/DeleteItem" || string(seen.Body) != `{"sku":"a"}` || strings.Contains(seen.Header.Get("authorization"), "s3cret") {
		t.Errorf("the confirmation showed %+v", seen)
	}
	accept := httpinvoke.WithConfirmer(t.Context(), func(context.Context, *httpinvoke.PendingCall) error { return nil })
	if res, err := cl.Call(accept, del, json.RawMessage(`{"sku":"a"}`)); err != nil || res.Code != "OK" || string(res.Response) != "{}" {
		t.Fatalf("confirmed: %v %+v", err, res)
	}
	// An IDEMPOTENT write is not a delete: the default policy sends it.
	if res := call(t, cl, c, "Inventory_SetStock", `{"sku":"a","quantity":"18446744073709551615"}`); res.Code != "OK" {
		t.Fatalf("SetStock: %+v", res)
	}
}
