// Package fluidoscmd is the "fluidos" command of edgectl: it drives a
// FLUIDOS node through the node's gRPC API, kubectl-style.
//
//	edgectl fluidos create solver [NAME] --type k8slice --filter 'cpu>=2' --cpu 2 --memory 4Gi --pods 10 [--allocate] --watch
//	edgectl fluidos create solver [NAME] --type service --filter tags=kv --param password=PASS --allocate --watch
//	edgectl fluidos show solvers | show solver NAME | watch solver NAME | delete solver NAME
//	edgectl fluidos show flavors [--peers] [--type T --filter ...]
//	edgectl fluidos show contracts [ID] [--role sold|bought] | release contract ID [--reason R]
//	edgectl fluidos show allocations [ID] [--role sold|bought] | watch allocation ID | show credentials ID
//	edgectl fluidos create instance NAME --contract ID --image I --cpu Q --memory Q [--port P/PROTO] [--env K=V]
//	edgectl fluidos show instances --contract ID | delete instance NAME --contract ID
//	edgectl fluidos create blueprint -f FILE | show blueprints [ID] | delete blueprint ID
//	edgectl fluidos show discovery NAME | show node | show peers | create peer HOST:PORT
//
// With --allocate a solver waits, after the purchase, for the seller to
// provision what was bought; "show credentials" prints what the seller
// handed over (an endpoint, a user name and a password for a service; an
// endpoint and a token for a slice, on which "create instance" runs the
// seller's images). It is the only command that prints secrets: every
// other output, in every format, comes without passwords, tokens,
// kubeconfigs or configuration parameters (the node's API drops them from
// its answers, and the command redacts what it prints too). Deleting a
// solver releases what it bought; once a contract ends its credentials
// are gone from both nodes.
//
// Filters are written KEY=VALUE (a match), KEY>=VALUE and KEY<=VALUE (a
// range), KEY~REGEX (a regular expression), for the fields of REAR's
// discovery filters (cpu, memory, pods, storage, architecture, gpu...,
// category, name, tags; see rear.ParseQuery), with Kubernetes quantities
// ("500m", "4Gi").
//
// The node is reached at --node over mutual TLS: with --dev-tls DIR the
// command gets a certificate named --as (default "admin") from the node's
// development authority; with --ca-file, --cert-file and --key-file it
// uses those; --insecure talks plaintext to a node run with
// --insecure-rear. Output is a table, JSON or YAML (-o). A command that
// fails, and a watched solver that ends FAILED, return an error (a
// non-zero exit in edgectl).
package fluidoscmd
