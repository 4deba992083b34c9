package controllertest

import (
	"context"
	"io"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/store"
)

// CreateEdgeCloudlet creates cl as a cloudlet whose resource manager runs
// on the edge site (crm_on_edge), as the cloudlet's organization and
// without waiting for its CRM, and returns the access key the CRM
// authenticates with. The cloudlet stays CREATE_REQUESTED until a CRM
// initialises it.
func (e *Env) CreateEdgeCloudlet(ctx context.Context, cl *edgeproto.Cloudlet) string {
	e.t.Helper()
	cl = cl.Clone()
	cl.CrmOnEdge = true
	s, err := edgeproto.NewCloudletServiceClient(e.Conn(e.OrgToken(cl.GetKey().GetOrganization()))).
		CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: cl, NoWait: true})
	if err != nil {
		e.t.Fatalf("create cloudlet %s: %v", cl.GetKeyString(), err)
	}
	key := ""
	for {
		r, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			e.t.Fatalf("create cloudlet %s: %v", cl.GetKeyString(), err)
		}
		if r.GetCrmAccessKey() != "" {
			key = r.GetCrmAccessKey()
		}
	}
	if key == "" {
		e.t.Fatalf("create cloudlet %s: no access key in the answer", cl.GetKeyString())
	}
	return key
}

// seedBatch is how many objects one transaction of the seeding helpers
// writes (the embedded etcd allows 1,024 operations a transaction).
const seedBatch = 250

// SeedEdgeCloudlets writes the cloudlets cls as crm_on_edge cloudlets, and
// an access key for each, straight into the store in large transactions,
// and returns the access keys in the order of cls. It is for loading a
// region fast (a benchmark's thousand sites), not a test of the API: no
// check, no progress, the objects are stored as given (their state
// included).
func (e *Env) SeedEdgeCloudlets(ctx context.Context, cls []*edgeproto.Cloudlet) []string {
	e.t.Helper()
	keys := make([]string, len(cls))
	for i := range keys {
		tok, err := controller.NewToken()
		if err != nil {
			e.t.Fatal(err)
		}
		keys[i] = tok
	}
	kind := store.NewKind[*edgeproto.Cloudlet](e.Store)
	for start := 0; start < len(cls); start += seedBatch / 2 {
		end := min(start+seedBatch/2, len(cls))
		if _, err := e.Store.Txn(ctx, func(tx *store.Tx) error {
			for i, cl := range cls[start:end] {
				cl = cl.Clone()
				cl.CrmOnEdge = true
				if err := kind.TxPut(tx, cl); err != nil {
					return err
				}
				controller.SeedAccessKey(e.Store, tx, cl.GetKey(), keys[start+i])
			}
			return nil
		}); err != nil {
			e.t.Fatalf("seeding cloudlets: %v", err)
		}
	}
	return keys
}

// Seed writes objs straight into the store in large transactions: for
// loading a region fast (a benchmark's hundred thousand instances), not a
// test of the API.
func Seed[T store.Object[T]](ctx context.Context, e *Env, objs []T) {
	e.t.Helper()
	kind := store.NewKind[T](e.Store)
	for start := 0; start < len(objs); start += seedBatch {
		end := min(start+seedBatch, len(objs))
		if _, err := e.Store.Txn(ctx, func(tx *store.Tx) error {
			for _, o := range objs[start:end] {
				if err := kind.TxPut(tx, o); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			e.t.Fatalf("seeding %s: %v", kind.Name(), err)
		}
	}
}
