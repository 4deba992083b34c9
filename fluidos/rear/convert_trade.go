package rear

import (
	"github.com/edgekit/edgekit/fluidos"
)

// EncodeReserveRequest is the wire form of r; flavor (may be nil) types a
// service configuration's parameters.
func EncodeReserveRequest(r *fluidos.ReserveRequest, flavor *fluidos.Flavor) (*ReserveRequest, error) {
	cfg, err := EncodeConfiguration(r.GetConfiguration(), flavor)
	if err != nil {
		return nil, within("configuration", err)
	}
	return &ReserveRequest{FlavorID: r.GetFlavorId(), Buyer: EncodeNodeIdentity(r.GetBuyer()), Configuration: cfg}, nil
}

// DecodeReserveRequest is the typed form of w.
func DecodeReserveRequest(w *ReserveRequest) (*fluidos.ReserveRequest, error) {
	cfg, err := DecodeConfiguration(w.Configuration)
	if err != nil {
		return nil, within("configuration", err)
	}
	return &fluidos.ReserveRequest{FlavorId: w.FlavorID, Buyer: DecodeNodeIdentity(w.Buyer), Configuration: cfg}, nil
}

// EncodeTransaction is the wire form of t (its state and contract stay
// home); flavor (may be nil) types a service configuration's parameters.
func EncodeTransaction(t *fluidos.Transaction, flavor *fluidos.Flavor) (*Transaction, error) {
	cfg, err := EncodeConfiguration(t.GetConfiguration(), flavor)
	if err != nil {
		return nil, within("configuration", err)
	}
	return &Transaction{
		TransactionID:  t.GetId(),
		FlavorID:       t.GetFlavorId(),
		Configuration:  cfg,
		Buyer:          EncodeNodeIdentity(t.GetBuyer()),
		ClusterID:      t.GetBuyerClusterId(),
		ExpirationTime: formatTime(t.GetExpirationTime()),
	}, nil
}

// DecodeTransaction is the typed form of w.
func DecodeTransaction(w *Transaction) (*fluidos.Transaction, error) {
	cfg, err := DecodeConfiguration(w.Configuration)
	if err != nil {
		return nil, within("configuration", err)
	}
	exp, err := parseTime("expirationTime", w.ExpirationTime)
	if err != nil {
		return nil, err
	}
	return &fluidos.Transaction{
		Id:             w.TransactionID,
		FlavorId:       w.FlavorID,
		Configuration:  cfg,
		Buyer:          DecodeNodeIdentity(w.Buyer),
		BuyerClusterId: w.ClusterID,
		ExpirationTime: exp,
	}, nil
}

// EncodePurchaseRequest is the wire form of r.
func EncodePurchaseRequest(r *fluidos.PurchaseRequest) *PurchaseRequest {
	w := &PurchaseRequest{IngressTelemetryEndpoint: encodeTelemetry(r.GetIngressTelemetryEndpoint())}
	if c := r.GetBuyerCredentials(); c != nil {
		w.LiqoCredentials = &LiqoCredentials{ClusterID: c.GetClusterId(), Kubeconfig: c.GetKubeconfig()}
	}
	return w
}

// DecodePurchaseRequest is the typed form of w.
func DecodePurchaseRequest(w *PurchaseRequest) *fluidos.PurchaseRequest {
	r := &fluidos.PurchaseRequest{IngressTelemetryEndpoint: decodeTelemetry(w.IngressTelemetryEndpoint)}
	if c := w.LiqoCredentials; c != nil {
		r.BuyerCredentials = &fluidos.PeeringCredentials{ClusterId: c.ClusterID, Kubeconfig: c.Kubeconfig}
	}
	return r
}

func encodeTelemetry(t *fluidos.TelemetryEndpoint) *TelemetryServer {
	if t == nil {
		return nil
	}
	return &TelemetryServer{Endpoint: t.GetEndpoint(), Intents: t.GetIntents()}
}

func decodeTelemetry(w *TelemetryServer) *fluidos.TelemetryEndpoint {
	if w == nil {
		return nil
	}
	return &fluidos.TelemetryEndpoint{Endpoint: w.Endpoint, Intents: w.Intents}
}

// EncodeContract is the wire form of c. Its credentials go as they are:
// send a contract only to its buyer.
func EncodeContract(c *fluidos.Contract) (*Contract, error) {
	f, err := EncodeFlavor(c.GetFlavor())
	if err != nil {
		return nil, within("flavor", err)
	}
	cfg, err := EncodeConfiguration(c.GetConfiguration(), c.GetFlavor())
	if err != nil {
		return nil, within("configuration", err)
	}
	cr := c.GetPeeringTargetCredentials()
	return &Contract{
		ContractID:     c.GetId(),
		TransactionID:  c.GetTransactionId(),
		Flavor:         *f,
		Buyer:          EncodeNodeIdentity(c.GetBuyer()),
		BuyerClusterID: c.GetBuyerClusterId(),
		Seller:         EncodeNodeIdentity(c.GetSeller()),
		PeeringTargetCredentials: LiqoCredentials{
			ClusterID: cr.GetClusterId(), Kubeconfig: cr.GetKubeconfig(),
			ClusterName: cr.GetClusterName(), Endpoint: cr.GetEndpoint(), Token: cr.GetToken(),
		},
		ExpirationTime:           formatTime(c.GetExpirationTime()),
		ExtraInformation:         c.GetExtraInformation(),
		Configuration:            cfg,
		NetworkRequests:          c.GetNetworkRequestsText(),
		IngressTelemetryEndpoint: encodeTelemetry(c.GetIngressTelemetryEndpoint()),
	}, nil
}

// DecodeContract is the typed form of w.
func DecodeContract(w *Contract) (*fluidos.Contract, error) {
	f, err := DecodeFlavor(&w.Flavor)
	if err != nil {
		return nil, within("flavor", err)
	}
	cfg, err := DecodeConfiguration(w.Configuration)
	if err != nil {
		return nil, within("configuration", err)
	}
	exp, err := parseTime("expirationTime", w.ExpirationTime)
	if err != nil {
		return nil, err
	}
	c := &fluidos.Contract{
		Id:                       w.ContractID,
		TransactionId:            w.TransactionID,
		Flavor:                   f,
		Buyer:                    DecodeNodeIdentity(w.Buyer),
		BuyerClusterId:           w.BuyerClusterID,
		Seller:                   DecodeNodeIdentity(w.Seller),
		ExpirationTime:           exp,
		ExtraInformation:         w.ExtraInformation,
		Configuration:            cfg,
		NetworkRequestsText:      w.NetworkRequests,
		IngressTelemetryEndpoint: decodeTelemetry(w.IngressTelemetryEndpoint),
	}
	if cr := w.PeeringTargetCredentials; cr != (LiqoCredentials{}) {
		c.PeeringTargetCredentials = &fluidos.PeeringTargetCredentials{
			ClusterId: cr.ClusterID, Kubeconfig: cr.Kubeconfig,
			ClusterName: cr.ClusterName, Endpoint: cr.Endpoint, Token: cr.Token,
		}
	}
	return c, nil
}
