package consumer

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// ErrNoFit: the amounts a solver asks for, raised to a flavor's minimums
// and steps, are more than the flavor offers.
var ErrNoFit = errors.New("the partition asked for does not fit the flavor's partitioning rules")

// fitPartition is the configuration to reserve of flavor f for a solver
// asking cfg: a K8Slice partition's CPU, memory and pods are raised to the
// seller's minimum and then up to the next multiple of its step (the rules
// a seller checks, fluidos.PartitionK8Slice), so that asking 1Gi of a
// flavor whose memory step is 100Mi reserves 1100Mi. It returns the
// configuration and what was changed ("" when nothing); other
// configurations, and flavors without a partitioning policy, are returned
// as they are. Amounts that exceed the flavor once raised are ErrNoFit.
func fitPartition(f *fluidos.Flavor, cfg *fluidos.Configuration) (*fluidos.Configuration, string, error) {
	k := cfg.GetK8Slice()
	pol := f.GetK8Slice().GetPartitionability()
	if k == nil || pol == nil {
		return cfg, "", nil
	}
	have := f.GetK8Slice().GetCharacteristics()
	out := proto.Clone(cfg).(*fluidos.Configuration)
	fk := out.GetK8Slice()
	var changed, errs []string
	for _, r := range []struct {
		name            string
		v               *int64
		min, step, have int64
		format          func(int64) string
	}{
		{"cpu", &fk.Cpu, pol.GetCpuMin(), pol.GetCpuStep(), have.GetCpu(), rear.FormatCPU},
		{"memory", &fk.Memory, pol.GetMemoryMin(), pol.GetMemoryStep(), have.GetMemory(), rear.FormatBytes},
		{"pods", &fk.Pods, pol.GetPodsMin(), pol.GetPodsStep(), have.GetPods(), rear.FormatCount},
	} {
		asked := *r.v
		if asked <= 0 {
			continue // the seller names it; nothing to choose
		}
		v, why := asked, ""
		if r.min > v {
			v, why = r.min, "the seller's minimum "+r.format(r.min)
		}
		if r.step > 0 && v%r.step != 0 {
			v = (v/r.step + 1) * r.step
			if why != "" {
				why += " and "
			}
			why += "a multiple of the seller's step " + r.format(r.step)
		}
		if v == asked {
			continue
		}
		if v > r.have {
			errs = append(errs, fmt.Sprintf("%s %s raised to %s (%s) is more than the flavor's %s", r.name, r.format(asked), r.format(v), why, r.format(r.have)))
			continue
		}
		*r.v = v
		changed = append(changed, fmt.Sprintf("%s %s raised to %s (%s)", r.name, r.format(asked), r.format(v), why))
	}
	if len(errs) > 0 {
		return nil, "", fmt.Errorf("%w %s: %s", ErrNoFit, f.GetId(), strings.Join(errs, "; "))
	}
	return out, strings.Join(changed, "; "), nil
}
