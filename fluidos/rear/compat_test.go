package rear_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// roundTrip reads a wire object strictly (a JSON field the wire struct
// does not know fails), converts it to the typed model and back, and
// returns the JSON of the result.
func roundTrip[W, T any](decode func(*W) (T, error), encode func(T) (any, error)) func([]byte) ([]byte, error) {
	return func(in []byte) ([]byte, error) {
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.DisallowUnknownFields()
		var w W
		if err := dec.Decode(&w); err != nil {
			return nil, err
		}
		typed, err := decode(&w)
		if err != nil {
			return nil, err
		}
		out, err := encode(typed)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// TestReferencePayloadsRoundTrip holds every recorded reference-shaped
// payload to a lossless trip through the typed model: decoding it into the
// typed objects and encoding them again gives the same JSON, every field
// name (charateristics, altitude, buyerID, additionalInformation...) and
// every value included.
func TestReferencePayloadsRoundTrip(t *testing.T) {
	t.Parallel()
	flavor := roundTrip(rear.DecodeFlavor, func(f *fluidos.Flavor) (any, error) { return rear.EncodeFlavor(f) })
	cases := map[string]func([]byte) ([]byte, error){
		"flavor_k8slice.json":          flavor,
		"flavor_service.json":          flavor,
		"reserve_request_k8slice.json": roundTrip(rear.DecodeReserveRequest, func(r *fluidos.ReserveRequest) (any, error) { return rear.EncodeReserveRequest(r, nil) }),
		"reserve_request_service.json": roundTrip(rear.DecodeReserveRequest, func(r *fluidos.ReserveRequest) (any, error) { return rear.EncodeReserveRequest(r, nil) }),
		"transaction.json":             roundTrip(rear.DecodeTransaction, func(tx *fluidos.Transaction) (any, error) { return rear.EncodeTransaction(tx, nil) }),
		"purchase_request.json": roundTrip(func(w *rear.PurchaseRequest) (*fluidos.PurchaseRequest, error) {
			return rear.DecodePurchaseRequest(w), nil
		},
			func(r *fluidos.PurchaseRequest) (any, error) { return rear.EncodePurchaseRequest(r), nil }),
		"contract.json": roundTrip(rear.DecodeContract, func(c *fluidos.Contract) (any, error) { return rear.EncodeContract(c) }),
	}
	files, err := filepath.Glob("testdata/reference/*.json")
	if err != nil || len(files) != len(cases) {
		t.Fatalf("testdata/reference holds %d payloads (%v), the test knows %d", len(files), err, len(cases))
	}
	for name, trip := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile(filepath.Join("testdata/reference", name))
			if err != nil {
				t.Fatal(err)
			}
			out, err := trip(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonValue(t, in), jsonValue(t, out)); diff != "" {
				t.Errorf("round trip changed the payload (-recorded +round trip):\n%s", diff)
			}
		})
	}
}

// TestReferenceSpellings pins the reference's quirks in the typed model:
// the country travels as "altitude", the characteristics as
// "charateristics".
func TestReferenceSpellings(t *testing.T) {
	t.Parallel()
	f := readFlavor(t, "flavor_k8slice.json")
	if got := f.GetLocation().GetCountry(); got != "Italy" {
		t.Errorf("country from altitude = %q, want Italy", got)
	}
	if got := f.GetLocation().GetLatitude(); got != 45.0703 {
		t.Errorf("latitude = %v, want 45.0703", got)
	}
	c := f.GetK8Slice().GetCharacteristics()
	if c.GetCpu() != 7985 || c.GetMemory() != 15740<<20 || c.GetPods() != 110 || c.GetStorage() != 100<<30 {
		t.Errorf("characteristics = %v", c)
	}
	if g := c.GetGpu(); g.GetCores() != 2 || g.GetMemory() != 16<<30 || g.GetModel() != "nvidia-t4" {
		t.Errorf("gpu = %v", g)
	}
	p := f.GetK8Slice().GetPartitionability()
	if p.GetCpuMin() != 1000 || p.GetCpuStep() != 500 || p.GetMemoryStep() != 512<<20 || p.GetPodsStep() != 5 {
		t.Errorf("partitionability = %v", p)
	}
	w, err := rear.EncodeFlavor(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(w)
	for _, name := range []string{`"charateristics"`, `"altitude":"Italy"`, `"ID":"provider-9f2c"`, `"liqoID"`} {
		if !bytes.Contains(b, []byte(name)) {
			t.Errorf("encoded flavor lacks %s: %s", name, b)
		}
	}
	if bytes.Contains(b, []byte(`"characteristics"`)) || bytes.Contains(b, []byte(`"country"`)) {
		t.Errorf("encoded flavor uses the typed spellings: %s", b)
	}
}

// TestServiceTemplateKeptVerbatim: a template the typed schema cannot
// express (arrays, minLength) is kept whole and is the one enforced.
func TestServiceTemplateKeptVerbatim(t *testing.T) {
	t.Parallel()
	s := readFlavor(t, "flavor_service.json").GetService()
	if s.GetConfigurationTemplate() == "" {
		t.Fatal("template not kept")
	}
	if s.GetConfigurationSchema() != nil {
		t.Errorf("a template with an array property gave a typed schema: %v", s.GetConfigurationSchema())
	}
	tmpl, err := rear.CompileTemplate([]byte(s.GetConfigurationTemplate()))
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Validate([]byte(`{"username":"app","password":"s3cret-pass","extensions":["postgis"]}`)); err != nil {
		t.Errorf("a valid configuration was refused: %v", err)
	}
	if err := tmpl.Validate([]byte(`{"username":"app","password":"short"}`)); err == nil {
		t.Error("a password below minLength was accepted")
	}
}

func readFlavor(t *testing.T, name string) *fluidos.Flavor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/reference", name))
	if err != nil {
		t.Fatal(err)
	}
	var w rear.Flavor
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	f, err := rear.DecodeFlavor(&w)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
