package region

import (
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/cli/clientconn"
	"github.com/edgekit/edgekit/internal/devtls"
)

// api holds the controller's clients, as admin.
type api struct {
	conn      *grpc.ClientConn
	flavors   edgeproto.FlavorServiceClient
	cloudlets edgeproto.CloudletServiceClient
	clusters  edgeproto.ClusterInstServiceClient
	apps      edgeproto.AppServiceClient
	appInsts  edgeproto.AppInstServiceClient
}

// dialController connects to the controller at addr with the admin token
// in tokenFile, verifying it with the development CA in caFile.
func dialController(addr, tokenFile, caFile string) (*api, error) {
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("admin token: %w", err)
	}
	o := clientconn.Options{Addr: addr, Token: strings.TrimSpace(string(tok)), CAFile: caFile}
	conn, err := o.Dial()
	if err != nil {
		return nil, err
	}
	return &api{conn: conn, flavors: edgeproto.NewFlavorServiceClient(conn), cloudlets: edgeproto.NewCloudletServiceClient(conn),
		clusters: edgeproto.NewClusterInstServiceClient(conn), apps: edgeproto.NewAppServiceClient(conn),
		appInsts: edgeproto.NewAppInstServiceClient(conn)}, nil
}

func (a *api) Close() error { return a.conn.Close() }

// nodeAPI holds a FLUIDOS node's clients.
type nodeAPI struct {
	conn        *grpc.ClientConn
	node        fluidos.NodeServiceClient
	solvers     fluidos.SolverServiceClient
	flavors     fluidos.FlavorServiceClient
	contracts   fluidos.ContractServiceClient
	allocations fluidos.AllocationServiceClient
}

// dialNode connects to a node's API at addr with an "admin" certificate
// of the development authority in tlsDir (the nodes accept it by default).
func dialNode(addr, tlsDir string) (*nodeAPI, error) {
	ca, err := devtls.OpenCA(tlsDir)
	if err != nil {
		return nil, err
	}
	b, err := ca.Issue("admin", devtls.LeafOptions{})
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(b.ClientConfig())))
	if err != nil {
		return nil, fmt.Errorf("FLUIDOS node %s: %w", addr, err)
	}
	return &nodeAPI{conn: conn, node: fluidos.NewNodeServiceClient(conn), solvers: fluidos.NewSolverServiceClient(conn),
		flavors: fluidos.NewFlavorServiceClient(conn), contracts: fluidos.NewContractServiceClient(conn),
		allocations: fluidos.NewAllocationServiceClient(conn)}, nil
}

func (n *nodeAPI) Close() error { return n.conn.Close() }
