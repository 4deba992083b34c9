package etcd

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// OpenConfig says where a host's etcd is: an external cluster (Client has
// endpoints) or a member embedded in the host (Embed).
type OpenConfig struct {
	// Client reaches an external cluster; used when it has endpoints.
	Client ClientConfig
	// Embed starts a member in the process otherwise.
	Embed EmbedConfig
	// EndpointFile, when set, receives the embedded member's client
	// endpoint (one line, mode 0600), for tools and other processes.
	EndpointFile string
	// Logger receives a warning when the embedded member stops badly.
	Logger *slog.Logger
}

// Etcd is the etcd of a host: a client, and the embedded member if any.
type Etcd struct {
	// Client is connected to the cluster; Close closes it.
	Client *clientv3.Client
	// Endpoints are the cluster's client endpoints.
	Endpoints []string
	embedded  *Embedded
	log       *slog.Logger
}

// Open connects to the external cluster of c, or starts the embedded
// member and connects to it. Close releases both.
func Open(ctx context.Context, c OpenConfig) (*Etcd, error) {
	if len(c.Client.Endpoints) > 0 {
		cli, err := NewClient(c.Client)
		if err != nil {
			return nil, fmt.Errorf("etcd: %w", err)
		}
		return &Etcd{Client: cli, Endpoints: c.Client.Endpoints, log: c.Logger}, nil
	}
	e, err := StartEmbedded(ctx, c.Embed)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	endpoints := e.Endpoints()
	if c.EndpointFile != "" {
		if err := os.WriteFile(c.EndpointFile, []byte(endpoints[0]+"\n"), 0o600); err != nil {
			e.Close()
			return nil, fmt.Errorf("embedded etcd: %w", err)
		}
	}
	cli, err := e.NewClient()
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("embedded etcd client: %w", err)
	}
	return &Etcd{Client: cli, Endpoints: endpoints, embedded: e, log: c.Logger}, nil
}

// Close closes the client, then stops the embedded member (bounded); a bad
// stop is logged.
func (e *Etcd) Close() {
	e.Client.Close()
	if e.embedded == nil {
		return
	}
	if err := e.embedded.Close(); err != nil && e.log != nil {
		e.log.Warn("embedded etcd stop", slog.Any("error", err))
	}
}
