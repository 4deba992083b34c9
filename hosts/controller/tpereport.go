package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// TPEClaimKey is the etcd key of a CCRM's claim on the entries of a
// TrustPolicyException on one cloudlet (the CCRM runs an exception per
// cloudlet, on that cloudlet's engine), given the store's prefix, the
// exception's key string and the cloudlet's key.
func TPEClaimKey(storePrefix, excKey string, cloudlet *edgeproto.CloudletKey) string {
	return ClaimKey(storePrefix, "TrustPolicyException", excKey+"@"+cloudletKeyString(cloudlet))
}

// applyTPEReport records the states a resource manager reports for the
// entries of a TrustPolicyException (info carries its key and instances):
// each reported entry that the reporter may report on (on its cloudlet for
// a CRM; on the cloudlet of its claim, without crm_on_edge, for a CCRM)
// and whose stored request accepts the reported state (the transition
// table of tracked objects) gets the state and errors; an entry whose
// removal is done leaves the list, and a deleted exception leaves the
// store with its last entry. Entries the report repeats unchanged are
// ignored; a reported state the entry does not accept is refused (a stale
// report) without refusing the other entries.
func (c *Controller) applyTPEReport(ctx context.Context, rep Reporter, info *edgeproto.TrustPolicyException, fm *fieldmap.FieldMap) error {
	if fm == nil || !fm.IsSet(keyFlag) || !fm.Has(edgeproto.TrustPolicyExceptionFieldInstances) {
		return fmt.Errorf("%w: TrustPolicyException report without its key and instances flags", ErrReportRefused)
	}
	key := info.GetKeyString()
	if key == "" {
		return fmt.Errorf("%w: TrustPolicyException report without a key", ErrReportRefused)
	}
	var ccrmCloudlet *edgeproto.CloudletKey
	if rep.CCRM {
		if rep.Fence == nil || len(info.GetInstances()) == 0 {
			return fmt.Errorf("%w: a CCRM reports on TrustPolicyException %s only under its claim (no fence)", ErrReportRefused, key)
		}
		ccrmCloudlet = info.GetInstances()[0].GetCloudletKey()
		if want := TPEClaimKey(c.store.Prefix(), key, ccrmCloudlet); rep.Fence.Key != want {
			return fmt.Errorf("%w: fence key %q is not the claim key %q of TrustPolicyException %s", ErrReportRefused, rep.Fence.Key, want, key)
		}
	}
	var (
		rejected error
		applied  bool
	)
	_, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		rejected, applied = nil, false
		exc, found, err := c.tpes.store.TxGet(tx, key)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: TrustPolicyException %s does not exist", ErrStaleReport, key)
		}
		if f := rep.Fence; f != nil {
			tx.Require(clientv3.Compare(clientv3.CreateRevision(f.Key), "=", f.Revision))
		}
		stored := map[string]int{}
		for i, in := range exc.Instances {
			stored[appInstKeyString(in.GetAppInstKey())] = i
		}
		changed, done := false, map[int]bool{}
		for _, got := range info.GetInstances() {
			i, ok := stored[appInstKeyString(got.GetAppInstKey())]
			if !ok {
				continue // an entry the exception no longer has
			}
			in := exc.Instances[i]
			if err := c.mayReportTPE(tx, rep, ccrmCloudlet, in.GetCloudletKey()); err != nil {
				return err
			}
			if got.State == in.State || got.State == edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED {
				continue
			}
			if err := edgeproto.CheckInfoState(in.State, got.State); err != nil {
				rejected = fmt.Errorf("TrustPolicyException %s on AppInst %s: %w", key, appInstKeyString(in.GetAppInstKey()), err)
				continue
			}
			in.State, in.Errors = got.State, append([]string(nil), got.GetErrors()...)
			if got.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
				done[i] = true
			}
			changed = true
		}
		if !changed {
			return nil
		}
		applied = true
		if len(done) > 0 {
			kept := exc.Instances[:0]
			for i, in := range exc.Instances {
				if !done[i] {
					kept = append(kept, in)
				}
			}
			exc.Instances = kept
		}
		if exc.Deleting && len(exc.Instances) == 0 {
			c.tpes.unlinkRefs(c, tx, exc)
			c.tpes.store.TxDelete(tx, key)
			return nil
		}
		stamp(exc, "updated_at")
		return c.tpes.store.TxPut(tx, exc)
	})
	if err != nil && errors.Is(err, store.ErrPrecondition) && rep.Fence != nil {
		return fmt.Errorf("%w: claim %s is no longer at revision %d", ErrStaleReport, rep.Fence.Key, rep.Fence.Revision)
	}
	if err == nil && rejected != nil && !applied {
		return rejected
	}
	return err
}

// mayReportTPE checks that rep may report on an entry on cloudlet: a CRM
// on its own cloudlet's, a CCRM on the cloudlet of its claim.
func (c *Controller) mayReportTPE(tx *store.Tx, rep Reporter, ccrmCloudlet, cloudlet *edgeproto.CloudletKey) error {
	if rep.CCRM && !proto.Equal(ccrmCloudlet, cloudlet) {
		return fmt.Errorf("%w: the claim of cloudlet %s does not cover an instance on cloudlet %s",
			ErrReportRefused, cloudletKeyString(ccrmCloudlet), cloudletKeyString(cloudlet))
	}
	return c.checkReporter(tx, rep, cloudlet)
}
