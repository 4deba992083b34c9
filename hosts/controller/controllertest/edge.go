package controllertest

import (
	"context"
	"io"

	"github.com/edgekit/edgekit/edgeproto"
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
