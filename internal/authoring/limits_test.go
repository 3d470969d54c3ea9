package authoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func wideObject(n int) *Metadata {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%07d":"v"`, i)
	}
	b.WriteString("}")
	var m Metadata
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil {
		panic(err)
	}
	return &m
}

func wideProperties(n int) []ConfigProperty {
	out := make([]ConfigProperty, n)
	for i := range out {
		out[i].Name = fmt.Sprintf("P%d", i)
	}
	return out
}

// TestArgumentSizeBound is issue 10, item 2 for tool arguments:
// pacto_create with 100k metadata keys took 65 s of CPU (dry_run too).
// Such an argument is now refused before anything is decoded, naming the
// limit; a wide but plausible one is still written.
func TestArgumentSizeBound(t *testing.T) {
	a, _ := newTestAuthoring(t, map[string]string{"tiny/pacto.yaml": minimalContract})
	wantLimit := func(t *testing.T, err error, field string) {
		t.Helper()
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != CodeInvalidArgument || ae.Field != field || !strings.Contains(ae.Message, fmt.Sprintf("the limit is %d per argument", MaxArgumentValues)) {
			t.Fatalf("got %v; want INVALID_ARGUMENT on %s naming the limit of %d", err, field, MaxArgumentValues)
		}
	}
	_, err := a.Create(t.Context(), CreateRequest{Name: "wide", DryRun: true, Metadata: wideObject(100_000)})
	wantLimit(t, err, "metadata")
	_, err = a.Create(t.Context(), CreateRequest{Name: "wide", DryRun: true, ConfigProperties: wideProperties(50_000)})
	wantLimit(t, err, "config_properties")
	_, err = a.Edit(t.Context(), EditRequest{Path: "tiny", DryRun: true, SetMetadata: wideObject(100_000)})
	wantLimit(t, err, "set_metadata")

	res, err := a.Create(t.Context(), CreateRequest{Name: "wide", DryRun: true, Metadata: wideObject(4_000)})
	if err != nil {
		t.Fatalf("%d metadata keys: %v", 4_000, err)
	}
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "k0003999") {
		t.Errorf("the dry run's result does not show the last key")
	}
}
