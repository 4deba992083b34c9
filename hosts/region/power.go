package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
)

// listAppInsts returns every application instance on the region's
// cloudlets.
func listAppInsts(ctx context.Context, a *api) ([]*edgeproto.AppInst, error) {
	s, err := a.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{})
	if err != nil {
		return nil, err
	}
	all, err := collect(s, (*edgeproto.ShowAppInstsResponse).GetAppInst)
	if err != nil {
		return nil, err
	}
	var out []*edgeproto.AppInst
	for _, ai := range all {
		for _, c := range cloudlets {
			if proto.Equal(ai.GetCloudletKey(), c.key()) {
				out = append(out, ai)
			}
		}
	}
	return out, nil
}

// poweredOn reports whether an instance's process should be running.
func poweredOn(ai *edgeproto.AppInst) bool {
	switch ai.GetPowerState() {
	case edgeproto.PowerState_POWER_STATE_POWER_OFF, edgeproto.PowerState_POWER_STATE_POWERING_OFF,
		edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED:
		return false
	}
	return true
}

// setPower asks for each instance's power state to become ps, in parallel,
// and waits for the changes. It returns the keys whose change succeeded.
func setPower(ctx context.Context, a *api, keys []*edgeproto.AppInstKey, ps edgeproto.PowerState) ([]*edgeproto.AppInstKey, error) {
	var (
		mu   sync.Mutex
		done []*edgeproto.AppInstKey
		errs []error
		wg   sync.WaitGroup
	)
	for _, k := range keys {
		wg.Go(func() {
			s, err := a.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{
				AppInst: &edgeproto.AppInst{Key: k, PowerState: ps}, Fields: []string{edgeproto.AppInstFieldPowerState}})
			if err == nil {
				_, err = follow[*edgeproto.UpdateAppInstResponse](s, nil)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("app instance %s: %w", (&edgeproto.AppInst{Key: k}).GetKeyString(), err))
				return
			}
			done = append(done, k)
		})
	}
	wg.Wait()
	return done, errors.Join(errs...)
}

// powerOff powers off the READY instances of the region's cloudlets whose
// process runs, recording their keys in path first (so that the next up
// powers them on again, even after an interrupted stop). It returns how
// many it powered off.
func powerOff(ctx context.Context, a *api, path string) (int, error) {
	insts, err := listAppInsts(ctx, a)
	if err != nil {
		return 0, err
	}
	keys := readKeys(path)
	var todo []*edgeproto.AppInstKey
	for _, ai := range insts {
		if ai.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY && poweredOn(ai) {
			todo = append(todo, ai.GetKey())
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	if err := writeKeys(path, append(keys, todo...)); err != nil {
		return 0, err
	}
	done, err := setPower(ctx, a, todo, edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED)
	return len(done), err
}

// powerOn powers on the instances a previous stop powered off (those
// still there and still off), then forgets them.
func powerOn(ctx context.Context, a *api, path string) (int, error) {
	keys := readKeys(path)
	if len(keys) == 0 {
		return 0, nil
	}
	insts, err := listAppInsts(ctx, a)
	if err != nil {
		return 0, err
	}
	var todo []*edgeproto.AppInstKey
	for _, ai := range insts {
		for _, k := range keys {
			if proto.Equal(ai.GetKey(), k) && !poweredOn(ai) && ai.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY {
				todo = append(todo, k)
			}
		}
	}
	done, err := setPower(ctx, a, todo, edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED)
	if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return len(done), err
}

// readKeys reads the keys writeKeys wrote; a missing or unreadable file
// holds none.
func readKeys(path string) []*edgeproto.AppInstKey {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var raw []struct{ Organization, Name string }
	if json.Unmarshal(data, &raw) != nil {
		return nil
	}
	out := make([]*edgeproto.AppInstKey, 0, len(raw))
	for _, r := range raw {
		out = append(out, &edgeproto.AppInstKey{Organization: r.Organization, Name: r.Name})
	}
	return out
}

func writeKeys(path string, keys []*edgeproto.AppInstKey) error {
	raw := make([]struct{ Organization, Name string }, 0, len(keys))
	for _, k := range keys {
		raw = append(raw, struct{ Organization, Name string }{k.GetOrganization(), k.GetName()})
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
