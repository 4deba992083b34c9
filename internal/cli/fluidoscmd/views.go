package fluidoscmd

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

func phase(p fluidos.Phase) string { return strings.TrimPrefix(p.String(), "PHASE_") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "-"
	}
	return ts.AsTime().UTC().Format(time.RFC3339)
}

var solverView = view[*fluidos.Solver]{
	header: []string{"NAME", "PHASE", "DISCOVERY", "RESERVATION", "PURCHASE", "ALLOCATION", "CONTRACT", "MESSAGE"},
	row: func(s *fluidos.Solver) []string {
		st := s.GetStatus()
		return []string{s.GetId(), phase(st.GetSolverPhase()), phase(st.GetDiscoveryPhase()), phase(st.GetReservationPhase()),
			phase(st.GetPurchasePhase()), phase(st.GetAllocationPhase()), orDash(st.GetContractId()), st.GetMessage()}
	},
}

// offers summarizes what a flavor offers.
func offers(f *fluidos.Flavor) (string, string) {
	switch {
	case f.GetK8Slice() != nil:
		c := f.GetK8Slice().GetCharacteristics()
		s := fmt.Sprintf("%s cpu, %s memory, %d pods, %s storage, %s", rear.FormatCPU(c.GetCpu()), rear.FormatBytes(c.GetMemory()), c.GetPods(), rear.FormatBytes(c.GetStorage()), orDash(c.GetArchitecture()))
		if g := c.GetGpu(); g != nil {
			s += fmt.Sprintf(", %d GPU cores (%s)", g.GetCores(), g.GetModel())
		}
		return "k8slice", s
	case f.GetService() != nil:
		sv := f.GetService()
		s := fmt.Sprintf("%s (%s)", sv.GetName(), orDash(sv.GetCategory()))
		if sv.GetMaxInstances() > 0 {
			s += fmt.Sprintf(", %d of %d sold", sv.GetSoldInstances(), sv.GetMaxInstances())
		}
		return "service", s
	case f.GetVm() != nil:
		v := f.GetVm()
		return "vm", fmt.Sprintf("%s cpu, %s memory, %s disk, %s", rear.FormatCPU(v.GetCpu()), rear.FormatBytes(v.GetMemory()), rear.FormatBytes(v.GetStorage()), orDash(v.GetOsImage()))
	case f.GetSensor() != nil:
		sn := f.GetSensor()
		return "sensor", fmt.Sprintf("%s at %g Hz (%s)", sn.GetSensorType(), sn.GetSamplingRateHz(), orDash(sn.GetUnit()))
	}
	return "-", "-"
}

func price(p *fluidos.Price) string {
	if p == nil {
		return "-"
	}
	return strings.TrimSpace(strings.Join([]string{p.GetAmount(), p.GetCurrency(), p.GetPeriod()}, " "))
}

func flavorRow(f *fluidos.Flavor) []string {
	typ, what := offers(f)
	return []string{f.GetId(), f.GetOwner().GetNodeId(), typ, fmt.Sprint(f.GetAvailability()), orDash(price(f.GetPrice())), what}
}

var flavorView = view[*fluidos.Flavor]{
	header: []string{"ID", "OWNER", "TYPE", "AVAILABLE", "PRICE", "OFFERS"},
	row:    flavorRow,
}

var peerFlavorView = view[*fluidos.PeerFlavor]{
	header: []string{"ID", "OWNER", "TYPE", "AVAILABLE", "PRICE", "OFFERS", "AT"},
	row:    func(p *fluidos.PeerFlavor) []string { return append(flavorRow(p.GetFlavor()), p.GetAddress()) },
}

var peerResultView = view[*fluidos.PeerResult]{
	header: []string{"PEER", "NODE", "FLAVORS", "TOOK", "ERROR"},
	row: func(r *fluidos.PeerResult) []string {
		return []string{r.GetAddress(), orDash(r.GetNodeId()), fmt.Sprint(r.GetFlavorsFound()),
			r.GetDuration().AsDuration().Round(time.Millisecond).String(), orDash(r.GetError())}
	},
}

func role(r fluidos.ContractRole) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "CONTRACT_ROLE_"))
}

var contractView = view[*fluidos.ContractEntry]{
	header: []string{"ID", "ROLE", "STATE", "SELLER", "BUYER", "FLAVOR", "OFFERS", "CREATED"},
	row: func(e *fluidos.ContractEntry) []string {
		c := e.GetContract()
		_, what := offers(c.GetFlavor())
		st := strings.TrimPrefix(c.GetState().String(), "CONTRACT_STATE_")
		if c.GetState() == fluidos.ContractState_CONTRACT_STATE_UNSPECIFIED {
			st = "ACTIVE"
		}
		return []string{c.GetId(), role(e.GetRole()), st, c.GetSeller().GetNodeId(), c.GetBuyer().GetNodeId(), c.GetFlavor().GetId(), what, when(c.GetCreatedAt())}
	},
}

var blueprintView = view[*fluidos.ServiceBlueprint]{
	header: []string{"ID", "NAME", "CATEGORY", "TAGS", "MAX-INSTANCES", "PARAMETERS"},
	row: func(b *fluidos.ServiceBlueprint) []string {
		var params []string
		for _, p := range b.GetConfigurationSchema().GetParameters() {
			params = append(params, p.GetName())
		}
		max := "unlimited"
		if b.GetMaxInstances() > 0 {
			max = fmt.Sprint(b.GetMaxInstances())
		}
		return []string{b.GetId(), b.GetName(), orDash(b.GetCategory()), orDash(strings.Join(b.GetTags(), ",")), max, orDash(strings.Join(params, ","))}
	},
}

var peerView = view[*fluidos.Peer]{
	header: []string{"ADDRESS", "STATIC"},
	row:    func(p *fluidos.Peer) []string { return []string{p.GetAddress(), fmt.Sprint(p.GetStatic())} },
}

var nodeView = view[*fluidos.GetNodeResponse]{
	header: []string{"ID", "DOMAIN", "REAR", "TLS"},
	row: func(n *fluidos.GetNodeResponse) []string {
		return []string{n.GetNode().GetNodeId(), orDash(n.GetNode().GetDomain()), n.GetNode().GetIp(), fmt.Sprint(!n.GetInsecureRear())}
	},
}

func allocationState(s fluidos.AllocationState) string {
	return strings.TrimPrefix(s.String(), "ALLOCATION_STATE_")
}

var allocationView = view[*fluidos.AllocationEntry]{
	header: []string{"ID", "ROLE", "TYPE", "STATE", "PEER", "EXPIRES", "MESSAGE"},
	row: func(e *fluidos.AllocationEntry) []string {
		a := e.GetAllocation()
		peer := a.GetSeller().GetNodeId()
		if e.GetRole() == fluidos.ContractRole_CONTRACT_ROLE_SOLD {
			peer = a.GetBuyer().GetNodeId()
		}
		msg := a.GetStatus().GetMessage()
		if t := a.GetStatus().GetTask(); t != "" {
			msg += " (" + strings.TrimSuffix(t+", "+a.GetStatus().GetStep(), ", ") + ")"
		}
		return []string{a.GetId(), role(e.GetRole()), strings.ToLower(strings.TrimPrefix(a.GetFlavorType().String(), "FLAVOR_TYPE_")),
			allocationState(a.GetStatus().GetState()), orDash(peer), when(a.GetExpirationTime()), msg}
	},
}

// credentialsView is the one view that prints secrets.
var credentialsView = view[*fluidos.PeeringTargetCredentials]{
	secrets: true,
	header:  []string{"ENDPOINT", "USERNAME", "PASSWORD", "DATABASE", "CLUSTER", "TOKEN"},
	row: func(c *fluidos.PeeringTargetCredentials) []string {
		endpoint := c.GetEndpoint()
		if eps := c.GetEndpoints(); eps != "" {
			endpoint = eps // a service's every endpoint, comma-joined
		}
		return []string{orDash(endpoint), orDash(c.GetUsername()), orDash(c.GetPassword()), orDash(c.GetDatabase()), orDash(c.GetClusterId()), orDash(c.GetToken())}
	},
}

var instanceView = view[*fluidos.SliceInstance]{
	header: []string{"NAME", "IMAGE", "CPU", "MEMORY", "STATE", "PORTS", "ERRORS"},
	row: func(i *fluidos.SliceInstance) []string {
		var ports []string
		for _, p := range i.GetPorts() {
			s := fmt.Sprintf("%d/%s", p.GetPort(), orDash(p.GetProtocol()))
			if p.GetPublicPort() != 0 {
				s += fmt.Sprintf("->%s:%d", i.GetStatus().GetHost(), p.GetPublicPort())
			}
			ports = append(ports, s)
		}
		return []string{i.GetName(), i.GetImage(), rear.FormatCPU(i.GetCpu()), rear.FormatBytes(i.GetMemory()), orDash(i.GetStatus().GetState()),
			orDash(strings.Join(ports, ",")), orDash(strings.Join(i.GetStatus().GetErrors(), "; "))}
	},
}
