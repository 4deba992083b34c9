package consumer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// ErrMismatch: what a seller answered is not what was asked (another
// flavor, another buyer, other amounts). Such a transaction is never
// bought and such a contract never kept as the solver's.
var ErrMismatch = errors.New("the seller answered for something else than was asked")

// ErrKeptReservation: the seller answered a reservation with an earlier
// one of the same flavor for this buyer, holding other amounts (a
// reference node returns the earlier transaction and ignores the new
// configuration).
var ErrKeptReservation = errors.New("the seller kept an earlier reservation of this flavor with other amounts")

// ErrSoldOnce: the seller refused a second purchase of a flavor it already
// sold (a reference node names contracts after the flavor, so it sells
// each flavor once and answers 500 AlreadyExists).
var ErrSoldOnce = errors.New("the seller refused a second purchase of this flavor")

// checkTransaction checks a transaction a seller answered against the
// reservation asked: flavor, buyer and configuration.
func checkTransaction(tx *fluidos.Transaction, req *fluidos.ReserveRequest) error {
	var diffs []string
	if tx.GetFlavorId() != req.GetFlavorId() {
		diffs = append(diffs, fmt.Sprintf("flavor %q, asked %q", tx.GetFlavorId(), req.GetFlavorId()))
	}
	if b := tx.GetBuyer().GetNodeId(); b != req.GetBuyer().GetNodeId() {
		diffs = append(diffs, fmt.Sprintf("buyer %q, asked for %q", b, req.GetBuyer().GetNodeId()))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: transaction %s has %s", ErrMismatch, tx.GetId(), strings.Join(diffs, "; "))
	}
	if d := configDiff(tx.GetConfiguration(), req.GetConfiguration()); d != "" {
		return fmt.Errorf("%w (transaction %s): %s", ErrKeptReservation, tx.GetId(), d)
	}
	return nil
}

// checkContract checks a contract a seller answered against the
// transaction bought.
func checkContract(ct *fluidos.Contract, tx *fluidos.Transaction, seller *fluidos.NodeIdentity) error {
	var diffs []string
	if ct.GetTransactionId() != tx.GetId() {
		diffs = append(diffs, fmt.Sprintf("transaction %q, bought %q", ct.GetTransactionId(), tx.GetId()))
	}
	if f := ct.GetFlavor().GetId(); f != tx.GetFlavorId() {
		diffs = append(diffs, fmt.Sprintf("flavor %q, reserved %q", f, tx.GetFlavorId()))
	}
	if b := ct.GetBuyer().GetNodeId(); b != tx.GetBuyer().GetNodeId() {
		diffs = append(diffs, fmt.Sprintf("buyer %q, bought by %q", b, tx.GetBuyer().GetNodeId()))
	}
	if s := ct.GetSeller().GetNodeId(); s != "" && s != seller.GetNodeId() {
		diffs = append(diffs, fmt.Sprintf("seller %q, bought from %q", s, seller.GetNodeId()))
	}
	if ct.GetConfiguration() != nil {
		if d := configDiff(ct.GetConfiguration(), tx.GetConfiguration()); d != "" {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: contract %s has %s", ErrMismatch, ct.GetId(), strings.Join(diffs, "; "))
	}
	return nil
}

// configDiff names how a configuration answered differs from the one
// asked ("" when it does not, or when none was asked). A service configuration is compared by its
// type and hosting policy: its parameters travel untyped on the wire.
func configDiff(got, want *fluidos.Configuration) string {
	gt, wt := configType(got), configType(want)
	switch {
	case want == nil: // none asked: the seller's choice (the whole flavor)
		return ""
	case got == nil:
		return "no configuration, asked " + wt
	case gt != wt:
		return fmt.Sprintf("a %s configuration, asked %s", gt, wt)
	}
	if g, w := got.GetK8Slice(), want.GetK8Slice(); g != nil || w != nil {
		var d []string
		if g.GetCpu() != w.GetCpu() {
			d = append(d, fmt.Sprintf("cpu %s, asked %s", rear.FormatCPU(g.GetCpu()), rear.FormatCPU(w.GetCpu())))
		}
		if g.GetMemory() != w.GetMemory() {
			d = append(d, fmt.Sprintf("memory %d bytes, asked %d", g.GetMemory(), w.GetMemory()))
		}
		if g.GetPods() != w.GetPods() {
			d = append(d, fmt.Sprintf("pods %d, asked %d", g.GetPods(), w.GetPods()))
		}
		if g.GetStorage() != w.GetStorage() {
			d = append(d, fmt.Sprintf("storage %d bytes, asked %d", g.GetStorage(), w.GetStorage()))
		}
		if !proto.Equal(g.GetGpu(), w.GetGpu()) {
			d = append(d, fmt.Sprintf("gpu %v, asked %v", g.GetGpu(), w.GetGpu()))
		}
		return strings.Join(d, ", ")
	}
	if g, w := got.GetService(), want.GetService(); g != nil && g.GetHostingPolicy() != fluidos.HostingPolicy_HOSTING_POLICY_UNSPECIFIED && g.GetHostingPolicy() != w.GetHostingPolicy() {
		return fmt.Sprintf("hosting policy %s, asked %s", g.GetHostingPolicy(), w.GetHostingPolicy())
	}
	return ""
}

// purchaseRefusal names a seller's refusal of a purchase for what it is.
func purchaseRefusal(err error, flavorID string) error {
	var se *rear.StatusError
	if errors.As(err, &se) && se.Code == http.StatusInternalServerError && strings.Contains(strings.ToLower(se.Message), "already exists") {
		return fmt.Errorf("%w %q (it names contracts after the flavor and sells each once): %w", ErrSoldOnce, flavorID, err)
	}
	return err
}

// configType names the type of a configuration.
func configType(c *fluidos.Configuration) string {
	switch {
	case c == nil:
		return "no"
	case c.GetK8Slice() != nil:
		return "k8slice"
	case c.GetService() != nil:
		return "service"
	case c.GetVm() != nil:
		return "vm"
	case c.GetSensor() != nil:
		return "sensor"
	}
	return "empty"
}
