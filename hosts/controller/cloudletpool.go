package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc"
)

// CloudletPools group cloudlets of one operator. The operator's
// organization owns and changes a pool; the developer organizations it is
// offered to see it (and may request TrustPolicyExceptions on it). A pool
// names only existing cloudlets of its organization; a cloudlet in a pool
// and a pool that an exception names cannot be deleted.

func poolOwner(p *edgeproto.CloudletPool) string { return p.GetKey().GetOrganization() }

// poolReaders are the organizations that see a pool besides its owner.
func poolReaders(p *edgeproto.CloudletPool) []string { return p.GetDeveloperOrganizations() }

func checkPool(p *edgeproto.CloudletPool) error {
	if err := checkPoolLists(p); err != nil {
		return err
	}
	return nil
}

// checkPoolLists checks the member and developer lists of a pool: names
// only, each at most once.
func checkPoolLists(p *edgeproto.CloudletPool) error {
	for what, list := range map[string][]string{"cloudlets": p.GetCloudlets(), "developer_organizations": p.GetDeveloperOrganizations()} {
		seen := map[string]bool{}
		for i, s := range list {
			if s == "" {
				return fmt.Errorf("%s[%d] is empty", what, i)
			}
			if err := checkKeyString(s); err != nil {
				return fmt.Errorf("%s[%d]: %w", what, i, err)
			}
			if seen[s] {
				return fmt.Errorf("%s names %q twice", what, s)
			}
			seen[s] = true
		}
	}
	return nil
}

// poolCloudletKey is the key of a member cloudlet of pool.
func poolCloudletKey(pool *edgeproto.CloudletPoolKey, name string) *edgeproto.CloudletKey {
	return &edgeproto.CloudletKey{Organization: pool.GetOrganization(), Name: name}
}

// poolHas reports whether cloudlet is a member of pool.
func poolHas(pool *edgeproto.CloudletPool, cloudlet *edgeproto.CloudletKey) bool {
	return cloudlet.GetOrganization() == pool.GetKey().GetOrganization() && slices.Contains(pool.GetCloudlets(), cloudlet.GetName())
}

func (c *Controller) checkPoolMembers(tx *store.Tx, p *edgeproto.CloudletPool) error {
	for _, name := range p.GetCloudlets() {
		ks := cloudletKeyString(poolCloudletKey(p.GetKey(), name))
		if _, found, err := c.cloudlets.store.TxGet(tx, ks); err != nil {
			return err
		} else if !found {
			return preconditionf("Cloudlet %s of CloudletPool %s does not exist", ks, p.GetKeyString())
		}
	}
	return nil
}

func (c *Controller) poolRules() rules[*edgeproto.CloudletPool] {
	return rules[*edgeproto.CloudletPool]{
		create: c.checkPoolMembers,
		update: func(tx *store.Tx, cur, next *edgeproto.CloudletPool, fm *fieldmap.FieldMap) error {
			if err := checkPoolLists(next); err != nil {
				return invalidf("CloudletPool %s: %v", cur.GetKeyString(), err)
			}
			if err := c.checkPoolMembers(tx, next); err != nil {
				return err
			}
			if slices.Equal(cur.Cloudlets, next.Cloudlets) {
				return nil
			}
			// The exceptions on the pool now cover other instances.
			return c.resyncTPEs(tx, c.cloudletPools.refOf(next), tpeChange{pool: next})
		},
		delete: func(tx *store.Tx, p *edgeproto.CloudletPool) error {
			return c.noDependents(tx, c.cloudletPools.refOf(p), "delete the trust policy exceptions on it first")
		},
	}
}

type cloudletPoolService struct {
	edgeproto.UnimplementedCloudletPoolServiceServer
	c *Controller
}

func (s *cloudletPoolService) CreateCloudletPool(ctx context.Context, req *edgeproto.CreateCloudletPoolRequest) (*edgeproto.CreateCloudletPoolResponse, error) {
	obj, _, err := createObject(ctx, s.c, s.c.cloudletPools, s.c.poolRules(), req.GetCloudletPool(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.CreateCloudletPoolResponse{CloudletPool: redacted(obj)}, nil
}

func (s *cloudletPoolService) UpdateCloudletPool(ctx context.Context, req *edgeproto.UpdateCloudletPoolRequest) (*edgeproto.UpdateCloudletPoolResponse, error) {
	obj, _, _, err := updateObject(ctx, s.c, s.c.cloudletPools, s.c.poolRules(), req.GetCloudletPool(), req.GetFields(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.UpdateCloudletPoolResponse{CloudletPool: redacted(obj)}, nil
}

func (s *cloudletPoolService) DeleteCloudletPool(ctx context.Context, req *edgeproto.DeleteCloudletPoolRequest) (*edgeproto.DeleteCloudletPoolResponse, error) {
	if _, _, err := deleteObject(ctx, s.c, s.c.cloudletPools, s.c.poolRules(), req.GetKey(), nil); err != nil {
		return nil, err
	}
	return &edgeproto.DeleteCloudletPoolResponse{}, nil
}

func (s *cloudletPoolService) ShowCloudletPools(req *edgeproto.ShowCloudletPoolsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowCloudletPoolsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.cloudletPools, req.GetFilter(), func(o *edgeproto.CloudletPool) error {
		return stream.Send(&edgeproto.ShowCloudletPoolsResponse{CloudletPool: o})
	})
}
