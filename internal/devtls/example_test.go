package devtls_test

import (
	"fmt"
	"log"
	"os"

	"github.com/edgekit/edgekit/internal/devtls"
)

// Two parties of one development authority: each gets a Bundle whose
// ServerConfig and ClientConfig verify the other.
func Example() {
	dir, err := os.MkdirTemp("", "devtls")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ca, err := devtls.OpenCA(dir) // creates ca.crt and ca.key once
	if err != nil {
		log.Fatal(err)
	}
	a, err := ca.Issue("node-a", devtls.LeafOptions{}) // node-a.crt, node-a.key
	if err != nil {
		log.Fatal(err)
	}
	serverTLS := a.ServerConfig() // for http.Server.TLSConfig or grpc credentials.NewTLS
	fmt.Println(a.Name(), serverTLS.ClientAuth)
	// Output: node-a RequireAndVerifyClientCert
}
