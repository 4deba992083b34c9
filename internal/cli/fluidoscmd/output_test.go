package fluidoscmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
)

// TestPrintDropsSecretsButTheCredentials holds the client to its own
// redaction, whatever a node answers: every view but the credentials'
// prints its objects without their debug_redact fields, in every format.
func TestPrintDropsSecretsButTheCredentials(t *testing.T) {
	creds := &fluidos.PeeringTargetCredentials{Endpoint: "http://127.0.0.1:1", Username: "u", Password: "print-pass-1", Token: "print-token-2", Kubeconfig: "print-kubeconfig-3"}
	secrets := []string{"print-pass-1", "print-token-2", "print-kubeconfig-3", "print-param-4"}
	cfg := &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": "print-param-4"}}}}
	solver := &fluidos.Solver{Id: "s", Configuration: cfg, Status: &fluidos.SolverStatus{ContractId: "c-1", Credentials: creds}}
	contract := &fluidos.ContractEntry{Contract: &fluidos.Contract{Id: "c-1", Configuration: cfg, PeeringTargetCredentials: creds}}
	alloc := &fluidos.AllocationEntry{Allocation: &fluidos.Allocation{Id: "a-c-1", Credentials: creds}}
	for _, f := range []string{"table", "json", "yaml"} {
		var out bytes.Buffer
		if err := print(&out, f, solverView, []*fluidos.Solver{solver}, true); err != nil {
			t.Fatal(err)
		}
		if err := print(&out, f, contractView, []*fluidos.ContractEntry{contract}, false); err != nil {
			t.Fatal(err)
		}
		if err := print(&out, f, allocationView, []*fluidos.AllocationEntry{alloc}, false); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(out.String(), s) {
				t.Errorf("-o %s prints %q:\n%s", f, s, out.String())
			}
		}
		if !strings.Contains(out.String(), "c-1") {
			t.Errorf("-o %s lost what is not secret:\n%s", f, out.String())
		}
		out.Reset()
		if err := print(&out, f, credentialsView, []*fluidos.PeeringTargetCredentials{creds}, true); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets[:3] {
			if !strings.Contains(out.String(), s) && !(f == "table" && s == "print-kubeconfig-3") {
				t.Errorf("credentials -o %s lack %q:\n%s", f, s, out.String())
			}
		}
	}
	if solver.GetStatus().GetCredentials().GetPassword() != "print-pass-1" {
		t.Error("print changed the object it was given")
	}
}

// TestCredentialsTableShowsAServicesEndpointsAndDatabase: credentials
// shaped like the FLUIDOS reference's Secret show every endpoint and the
// database in the table.
func TestCredentialsTableShowsAServicesEndpointsAndDatabase(t *testing.T) {
	creds := &fluidos.PeeringTargetCredentials{Endpoint: "db.ns.svc.cluster.local:3306", Username: "u", Password: "p",
		Endpoints: "db.ns.svc.cluster.local:3306,db.ns.svc.cluster.local:33060", Database: "shop"}
	var out bytes.Buffer
	if err := print(&out, "table", credentialsView, []*fluidos.PeeringTargetCredentials{creds}, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DATABASE", creds.GetEndpoints(), "shop"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
