// Command edgekit-kv is a small key-value service over HTTP, the service a
// FLUIDOS node sells in edgekit's demos and tests; see package
// internal/kvservice for its routes and environment.
package main

import (
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/kvservice"
)

func main() { cmdutil.Exit("edgekit-kv", kvservice.Main) }
