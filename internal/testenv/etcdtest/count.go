package etcdtest

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
)

// Counts are etcd requests by kind, and watch events: what a Counter saw
// one client send and receive, or what the etcd members of this process
// served (ServerCounts). The kinds are a KV method's name ("Range", "Put",
// "DeleteRange", "Compact"), "Txn" split into "Txn/write" (a transaction
// with a put or a delete among its operations) and "Txn/read" on the
// client side, and any other unary method by its name ("LeaseGrant");
// WatchEvents counts the events watch responses carried.
type Counts struct {
	Requests    map[string]int64
	WatchEvents int64
}

// Sub returns c minus o, kind by kind.
func (c Counts) Sub(o Counts) Counts {
	out := Counts{Requests: map[string]int64{}, WatchEvents: c.WatchEvents - o.WatchEvents}
	for k, n := range c.Requests {
		out.Requests[k] = n
	}
	for k, n := range o.Requests {
		out.Requests[k] -= n
	}
	return out
}

// Add returns c plus o, kind by kind.
func (c Counts) Add(o Counts) Counts {
	neg := Counts{Requests: map[string]int64{}, WatchEvents: -o.WatchEvents}
	for k, n := range o.Requests {
		neg.Requests[k] = -n
	}
	return c.Sub(neg)
}

// Writes is the number of requests that write: puts, deletes and write
// transactions (client side; a server's "Txn" is not split).
func (c Counts) Writes() int64 {
	return c.Requests["Put"] + c.Requests["DeleteRange"] + c.Requests["Txn/write"]
}

// Reads is the number of requests that only read: ranges and read-only
// transactions (client side).
func (c Counts) Reads() int64 { return c.Requests["Range"] + c.Requests["Txn/read"] }

// String lists the kinds in order, "Range=3 Txn/write=2 watch-events=5".
func (c Counts) String() string {
	var ks []string
	for k, n := range c.Requests {
		if n != 0 {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		b.WriteString(k + "=" + strconv.FormatInt(c.Requests[k], 10) + " ")
	}
	b.WriteString("watch-events=" + strconv.FormatInt(c.WatchEvents, 10))
	return b.String()
}

// Counter counts the etcd requests a client sends and the watch events it
// receives: dial the client with DialOptions.
type Counter struct {
	mu     sync.Mutex
	counts Counts
}

// NewCounter returns a Counter with nothing counted.
func NewCounter() *Counter { return &Counter{counts: Counts{Requests: map[string]int64{}}} }

// DialOptions are the gRPC dial options that make a client's requests
// counted.
func (c *Counter) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(c.unary), grpc.WithChainStreamInterceptor(c.stream)}
}

// Counts returns a copy of what was counted so far.
func (c *Counter) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts.Sub(Counts{})
}

func (c *Counter) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	kind := method[strings.LastIndexByte(method, '/')+1:]
	if t, ok := req.(*pb.TxnRequest); ok {
		kind = "Txn/read"
		if txnWrites(t) {
			kind = "Txn/write"
		}
	}
	c.mu.Lock()
	c.counts.Requests[kind]++
	c.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

func txnWrites(t *pb.TxnRequest) bool {
	for _, ops := range [][]*pb.RequestOp{t.Success, t.Failure} {
		for _, op := range ops {
			switch r := op.Request.(type) {
			case *pb.RequestOp_RequestPut, *pb.RequestOp_RequestDeleteRange:
				return true
			case *pb.RequestOp_RequestTxn:
				if txnWrites(r.RequestTxn) {
					return true
				}
			}
		}
	}
	return false
}

func (c *Counter) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return s, err
	}
	return &countedStream{ClientStream: s, c: c}, nil
}

type countedStream struct {
	grpc.ClientStream
	c *Counter
}

func (s *countedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if w, ok := m.(*pb.WatchResponse); ok && err == nil && len(w.Events) > 0 {
		s.c.mu.Lock()
		s.c.counts.WatchEvents += int64(len(w.Events))
		s.c.mu.Unlock()
	}
	return err
}

// ServerCounts returns what every etcd member of this process has served
// so far, read from the metrics they register with the default Prometheus
// registry (shared by all of them): finished unary requests by method
// ("Txn" not split), the puts and delete-ranges they applied, in
// transactions or not ("mvcc/put", "mvcc/delete"; "mvcc/put-bytes": the
// keys and values of every put), and the watch events sent to watchers.
func ServerCounts() (Counts, error) {
	out := Counts{Requests: map[string]int64{}}
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return out, err
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "grpc_server_handled_total":
			for _, m := range mf.GetMetric() {
				var method, typ string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "grpc_method":
						method = l.GetValue()
					case "grpc_type":
						typ = l.GetValue()
					}
				}
				if typ == "unary" {
					out.Requests[method] += int64(m.GetCounter().GetValue())
				}
			}
		case "etcd_mvcc_put_total":
			out.Requests["mvcc/put"] += sumOf(mf)
		case "etcd_mvcc_delete_total":
			out.Requests["mvcc/delete"] += sumOf(mf)
		case "etcd_debugging_mvcc_total_put_size_in_bytes":
			out.Requests["mvcc/put-bytes"] += sumOf(mf)
		case "etcd_debugging_mvcc_events_total":
			for _, m := range mf.GetMetric() {
				out.WatchEvents += int64(m.GetCounter().GetValue())
			}
		}
	}
	return out, nil
}

func sumOf(mf *dto.MetricFamily) int64 {
	var n float64
	for _, m := range mf.GetMetric() {
		n += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return int64(n)
}
