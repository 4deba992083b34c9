package provider_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// FuzzHandler sends arbitrary requests to the REAR routes: every answer
// is a success or a 4xx with a message, never a panic or a 5xx.
func FuzzHandler(f *testing.F) {
	etcd := etcdtest.New(f)
	st, err := store.New(etcd.Client(), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](st).Create(ctx, kvBlueprint()); err != nil {
		f.Fatal(err)
	}
	p, err := provider.New(provider.Config{
		Self:     &fluidos.NodeIdentity{NodeId: seller},
		Store:    st,
		Capacity: provider.CapacityFunc(func(context.Context) (provider.Capacity, error) { return testCapacity, nil }),
		Policy:   testPolicy,
	})
	if err != nil {
		f.Fatal(err)
	}
	if err := p.Sync(ctx); err != nil {
		f.Fatal(err)
	}
	h := p.Handler(false)

	for _, name := range []string{"reserve_request_k8slice.json", "reserve_request_service.json"} {
		b, err := os.ReadFile("../../../fluidos/rear/testdata/reference/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(http.MethodPost, "/api/v2/reservations", b)
	}
	f.Add(http.MethodPost, "/api/v2/reservations", []byte(`{"flavorID":"seller-k8slice","buyerID":{"ID":"b"},"configuration":{"type":"k8slice","data":{"cpu":"1","memory":"1Gi","pods":"10"}}}`))
	f.Add(http.MethodPost, "/api/v2/reservations", []byte(`{"flavorID":"seller-service-kv","buyerID":{"ID":"b"},"configuration":{"type":"service","data":{"configurationData":{"password":"abcdefgh1"}}}}`))
	f.Add(http.MethodPost, "/api/v2/reservations", []byte(`{"flavorID":"seller-service-kv","buyerID":{"ID":"b"}}`))
	f.Add(http.MethodPost, "/api/v2/transactions/t-1/purchase", []byte(`{"liqoCredentials":{"clusterID":"x"}}`))
	f.Add(http.MethodGet, "/api/v2/flavors/k8slice?filter[cpu][range][min]=1000m&filter[architecture][range][regex]=amd.*", []byte(nil))
	f.Add(http.MethodGet, "/api/v2/flavors/service?filter[tags][match]=kv", []byte(nil))
	f.Add(http.MethodGet, "/api/v2/flavors", []byte(nil))
	f.Add(http.MethodDelete, "/api/v2/flavors", []byte(nil))

	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		req, err := http.NewRequestWithContext(ctx, method, "http://provider"+target, bytes.NewReader(body))
		if err != nil || req.URL.Path == "" || req.URL.Path[0] != '/' {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code := rec.Code
		switch {
		case code >= 500:
			t.Fatalf("%s %s %q: %d %s", method, target, body, code, rec.Body)
		case code >= 400 && rec.Body.Len() == 0:
			t.Fatalf("%s %s %q: %d without a message", method, target, body, code)
		}
	})
}
