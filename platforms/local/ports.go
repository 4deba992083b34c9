package local

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// portRange is an inclusive range of ports.
type portRange struct{ first, last int }

func (r portRange) String() string { return fmt.Sprintf("%d-%d", r.first, r.last) }
func (r portRange) size() int      { return r.last - r.first + 1 }
func (r portRange) valid() bool    { return r.first > 0 && r.last >= r.first && r.last <= 65535 }

func parsePortRange(s string) (portRange, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return portRange{}, fmt.Errorf("malformed port range %q", s)
	}
	first, err1 := strconv.Atoi(a)
	last, err2 := strconv.Atoi(b)
	r := portRange{first, last}
	if err1 != nil || err2 != nil || !r.valid() {
		return portRange{}, fmt.Errorf("malformed port range %q", s)
	}
	return r, nil
}

// reserveRange reserves a port range for a cluster: the one owner already
// holds, else want when it is free, else the lowest free range of the grid
// that starts at PortMin with PortRangeSize ports per range.
func (p *Platform) reserveRange(ctx context.Context, res executor.Reservations, cloudlet, owner string, want portRange) (portRange, error) {
	var got portRange
	err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		got = portRange{}
		if held := set.Values(KindPortRange, owner); len(held) > 0 {
			r, err := parsePortRange(held[0])
			if err == nil {
				got = r
				return nil
			}
		}
		if want.valid() && set.Owner(KindPortRange, want.String()) == "" {
			if err := set.Reserve(KindPortRange, want.String(), owner); err == nil {
				got = want
				return nil
			}
		}
		size := p.cfg.PortRangeSize
		for first := p.cfg.PortMin; first+size-1 <= p.cfg.PortMax; first += size {
			r := portRange{first, first + size - 1}
			if set.Owner(KindPortRange, r.String()) != "" {
				continue
			}
			if err := set.Reserve(KindPortRange, r.String(), owner); err != nil {
				continue
			}
			got = r
			return nil
		}
		return fmt.Errorf("%w: every %d-port range in %d-%d is reserved", ErrNoFreePorts, size, p.cfg.PortMin, p.cfg.PortMax)
	})
	if err != nil {
		return portRange{}, fmt.Errorf("reserving port range: %w", err)
	}
	return got, nil
}

// portNeeds returns the number of consecutive ports each declared port of
// app needs; an app that declares none gets one port.
func portNeeds(app *edgeproto.App) ([]int, error) {
	ports := app.GetPorts()
	if len(ports) == 0 {
		return []int{1}, nil
	}
	// The engine checks the ports before it calls the platform; the same
	// check guards callers that do not go through it.
	if err := executor.ValidatePorts(ports); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	out := make([]int, len(ports))
	for i, pt := range ports {
		out[i] = 1
		if pt.GetEndPort() != 0 {
			out[i] = int(pt.GetEndPort()-pt.GetInternalPort()) + 1
		}
	}
	return out, nil
}

// reserveAppPorts reserves, inside the cluster's range, one block of
// consecutive ports per declared port of app, skipping ports another
// owner holds and ports in skip (found busy on this host). It returns the
// first port of each block. Ports owner held before are released first.
func reserveAppPorts(ctx context.Context, res executor.Reservations, cloudlet, owner string, rng portRange, needs []int, skip map[int]bool) ([]int, error) {
	var firsts []int
	err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		firsts = firsts[:0]
		set.Release(KindPort, owner)
		next := rng.first
		for _, n := range needs {
			found := false
			for first := next; first+n-1 <= rng.last; first++ {
				ok := true
				for q := first; q < first+n; q++ {
					if skip[q] || set.Owner(KindPort, strconv.Itoa(q)) != "" {
						ok = false
						break
					}
				}
				if !ok {
					continue
				}
				for q := first; q < first+n; q++ {
					if err := set.Reserve(KindPort, strconv.Itoa(q), owner); err != nil {
						return fmt.Errorf("reserving port %d: %w", q, err)
					}
				}
				firsts = append(firsts, first)
				next = first + n
				found = true
				break
			}
			if !found {
				return fmt.Errorf("%w: no %d free consecutive ports left in cluster range %s", ErrNoFreePorts, n, rng)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reserving application ports: %w", err)
	}
	return firsts, nil
}

// rereservePorts makes owner hold ports again (after a restart of an
// engine whose reservation store was in memory). It reports the ports
// that another owner holds.
func rereservePorts(ctx context.Context, res executor.Reservations, cloudlet, owner string, ports []int) ([]int, error) {
	var conflicts []int
	err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		conflicts = conflicts[:0]
		for _, q := range ports {
			if err := set.Reserve(KindPort, strconv.Itoa(q), owner); err != nil {
				conflicts = append(conflicts, q)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reserving application ports: %w", err)
	}
	return conflicts, nil
}

// releasePorts frees every port owner holds.
func releasePorts(ctx context.Context, res executor.Reservations, cloudlet, owner string) error {
	if res == nil {
		return nil
	}
	err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		set.Release(KindPort, owner)
		return nil
	})
	if err != nil {
		return fmt.Errorf("releasing application ports: %w", err)
	}
	return nil
}

// busyPorts returns the ports of the blocks that something on this host
// already listens on (TCP on 127.0.0.1), so that they can be skipped.
func busyPorts(firsts, needs []int) []int {
	var busy []int
	for i, first := range firsts {
		for q := first; q < first+needs[i]; q++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				busy = append(busy, q)
				continue
			}
			_ = l.Close()
		}
	}
	return busy
}
