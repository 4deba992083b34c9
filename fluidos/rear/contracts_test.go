package rear_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// seller answers the edgekit routes as a test wants, recording what it got.
func seller(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		answer(w, r, string(b))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestContractRoutesRoundTrip(t *testing.T) {
	t.Parallel()
	var got []string
	addr := seller(t, func(w http.ResponseWriter, r *http.Request, body string) {
		got = append(got, r.Method+" "+r.URL.Path+" "+body)
		b, _ := rear.MarshalProto(&fluidos.Allocation{Id: "a-c-1", ContractId: "c-1",
			Status:      &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_ACTIVE},
			Credentials: &fluidos.PeeringTargetCredentials{Endpoint: "127.0.0.1:1", Username: "u", Password: "p"}})
		_, _ = w.Write(b)
	})
	c := rear.NewClient(nil, 0)
	ctx := context.Background()
	a, err := c.ContractAllocation(ctx, addr, "bob", "c-1")
	if err != nil || a.GetCredentials().GetPassword() != "p" || a.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
		t.Fatalf("allocation %v, %v", a, err)
	}
	if _, err := c.RenewContract(ctx, addr, "bob", "c-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReleaseContract(ctx, addr, "bob", "c-1", "done with it"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v2/contracts/c-1/allocation ",
		"POST /api/v2/contracts/c-1/renew {}",
		`POST /api/v2/contracts/c-1/release {"reason":"done with it"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestContractRoutesRefuseGarbageAndReportRefusals(t *testing.T) {
	t.Parallel()
	addr := seller(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		switch {
		case strings.Contains(r.URL.Path, "missing"):
			http.Error(w, "contract not found", http.StatusNotFound)
		case strings.Contains(r.URL.Path, "empty"):
			_, _ = w.Write([]byte(`{}`))
		default:
			_, _ = w.Write([]byte(`not json`))
		}
	})
	c := rear.NewClient(nil, 0)
	var se *rear.StatusError
	if _, err := c.ContractAllocation(context.Background(), addr, "", "missing"); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("404: %v", err)
	}
	for _, id := range []string{"empty", "garbage"} {
		if _, err := c.RenewContract(context.Background(), addr, "", id); !errors.Is(err, rear.ErrGarbage) {
			t.Errorf("%s: %v, want ErrGarbage", id, err)
		}
	}
}

func TestSliceRoutesCarryTheToken(t *testing.T) {
	t.Parallel()
	var got []string
	addr := seller(t, func(w http.ResponseWriter, r *http.Request, body string) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/instances") {
			b, _ := rear.MarshalProto(&fluidos.ListSliceInstancesResponse{Instances: []*fluidos.SliceInstance{{Name: "web"}}})
			_, _ = w.Write(b)
			return
		}
		inst := &fluidos.SliceInstance{}
		if body != "" {
			if err := rear.UnmarshalProto([]byte(body), inst); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		inst.Status = &fluidos.SliceInstanceStatus{State: "READY"}
		b, _ := rear.MarshalProto(inst)
		_, _ = w.Write(b)
	})
	c := rear.NewClient(nil, 0)
	ctx := context.Background()
	s := rear.Slice{Seller: "bob", Credentials: &fluidos.PeeringTargetCredentials{Endpoint: addr, ClusterId: "a-c-1", Token: "tok"}}
	inst, err := c.SliceDeploy(ctx, s, &fluidos.SliceInstance{Name: "web", Image: "kv", Cpu: 100, Memory: 1 << 20})
	if err != nil || inst.GetImage() != "kv" || inst.GetStatus().GetState() != "READY" {
		t.Fatalf("deploy: %v, %v", inst, err)
	}
	if _, err := c.SliceGet(ctx, s, "web"); err != nil {
		t.Fatal(err)
	}
	if l, err := c.SliceList(ctx, s); err != nil || len(l) != 1 {
		t.Fatalf("list: %v, %v", l, err)
	}
	if _, err := c.SliceDelete(ctx, s, "web"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"PUT /api/v2/slices/a-c-1/instances/web Bearer tok",
		"GET /api/v2/slices/a-c-1/instances/web Bearer tok",
		"GET /api/v2/slices/a-c-1/instances Bearer tok",
		"DELETE /api/v2/slices/a-c-1/instances/web Bearer tok",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := c.SliceGet(ctx, rear.Slice{Seller: "bob", Credentials: &fluidos.PeeringTargetCredentials{Endpoint: addr}}, "web"); !errors.Is(err, rear.ErrInvalid) {
		t.Errorf("credentials without a token: %v", err)
	}
}
