// Package docs_test runs what the operator guide shows of calling the
// controller with grpcurl: each documented call, its header and its body,
// against a controller, the way grpcurl sends them (request from protojson,
// metadata from -H, server reflection for list).
package docs_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/edgekit/edgekit/edgeproto" // the controller's services, for the requests' types
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
)

// grpcurlCall is one grpcurl command of the guide.
type grpcurlCall struct {
	line    string
	headers []string // -H values
	body    string   // -d value
	addr    string
	method  string // "list" or "package.Service/Method"
}

// documentedCalls reads the grpcurl commands of the operator guide's
// shell blocks.
func documentedCalls(t *testing.T) []grpcurlCall {
	t.Helper()
	var calls []grpcurlCall
	for _, line := range documentedCommands(t, "grpcurl ") {
		calls = append(calls, parseGrpcurl(t, line))
	}
	return calls
}

// documentedCommands returns the commands of the operator guide's shell
// blocks that start with prefix (continuation lines joined).
func documentedCommands(t *testing.T, prefix string) []string {
	t.Helper()
	f, err := os.Open("operator.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	var cmd strings.Builder
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock && strings.TrimSpace(line) == "```sh"
			continue
		}
		if !inBlock {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cmd.WriteString(cont)
			continue
		}
		cmd.WriteString(line)
		full := strings.TrimSpace(cmd.String())
		cmd.Reset()
		if strings.HasPrefix(full, prefix) {
			cmds = append(cmds, full)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// parseGrpcurl splits a grpcurl command line as the shell would, and reads
// its flags and arguments.
func parseGrpcurl(t *testing.T, line string) grpcurlCall {
	t.Helper()
	words := shellWords(line)
	c := grpcurlCall{line: line}
	var args []string
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-plaintext":
		case "-H", "-d":
			if i+1 == len(words) {
				t.Fatalf("%s: %s without a value", line, words[i])
			}
			if words[i] == "-H" {
				c.headers = append(c.headers, words[i+1])
			} else {
				c.body = words[i+1]
			}
			i++
		default:
			if strings.HasPrefix(words[i], "-") {
				t.Fatalf("%s: flag %s not known to this test", line, words[i])
			}
			args = append(args, words[i])
		}
	}
	if len(args) != 2 {
		t.Fatalf("%s: want an address and a method, got %q", line, args)
	}
	c.addr, c.method = args[0], args[1]
	return c
}

// shellWords splits a command line as the shell would (quotes; $(...)
// kept as one word).
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	quote, depth, inWord := rune(0), 0, false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case depth > 0:
			w.WriteRune(r)
			if r == ')' {
				depth--
			}
		case r == '$':
			w.WriteRune(r)
			inWord = true
		case r == '(' && strings.HasSuffix(w.String(), "$"):
			w.WriteRune(r)
			depth++
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

func TestOperatorGuideGrpcurlCalls(t *testing.T) {
	t.Parallel()
	calls := documentedCalls(t)
	if len(calls) == 0 {
		t.Fatal("the operator guide shows no grpcurl call")
	}
	env := controllertest.Start(t, controllertest.Options{})
	conn, err := grpc.NewClient(env.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const tokenFile = "$(cat ./region/admin.token)"
	var shown []proto.Message
	for _, c := range calls {
		if c.addr != "127.0.0.1:55001" {
			t.Errorf("%s: address %s, want the controller's default 127.0.0.1:55001", c.line, c.addr)
		}
		md := metadata.MD{}
		for _, h := range c.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok {
				t.Fatalf("%s: header %q is not key: value", c.line, h)
			}
			md.Append(strings.TrimSpace(k), strings.ReplaceAll(strings.TrimSpace(v), tokenFile, env.AdminToken()))
		}
		cctx := metadata.NewOutgoingContext(ctx, md)
		if c.method == "list" {
			services := listServices(t, cctx, conn)
			if !slices.Contains(services, "edgeproto.v1.FlavorService") {
				t.Errorf("%s: services %v lack edgeproto.v1.FlavorService", c.line, services)
			}
			continue
		}
		out, err := invoke(cctx, conn, c.method, c.body)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if strings.HasSuffix(c.method, "/ShowFlavors") {
			shown = append(shown, out...)
		}
		// Without the header, the same call is refused.
		if _, err := invoke(ctx, conn, c.method, c.body); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without the header: %v, want Unauthenticated", c.line, err)
		}
	}
	found := false
	for _, m := range shown {
		found = found || strings.Contains(protojson.Format(m), `"fake.tiny"`)
	}
	if !found {
		t.Errorf("ShowFlavors answered %v, without the flavor the guide creates", shown)
	}
}

// listServices asks server reflection for the services, as grpcurl list.
func listServices(t *testing.T, ctx context.Context, conn *grpc.ClientConn) []string {
	t.Helper()
	s, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	_ = s.CloseSend()
	var out []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		out = append(out, svc.GetName())
	}
	return out
}

// invoke calls method ("package.Service/Method") with the request body
// parsed from JSON (empty: an empty request), and returns the answers.
func invoke(ctx context.Context, conn *grpc.ClientConn, method, body string) ([]proto.Message, error) {
	svcName, mName, ok := strings.Cut(method, "/")
	if !ok {
		return nil, errors.New("method not of the form package.Service/Method")
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
	if err != nil {
		return nil, err
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, errors.New(svcName + " is not a service")
	}
	md := sd.Methods().ByName(protoreflect.Name(mName))
	if md == nil {
		return nil, errors.New(svcName + " has no method " + mName)
	}
	newMsg := func(d protoreflect.MessageDescriptor) (proto.Message, error) {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
		if err != nil {
			return nil, err
		}
		return mt.New().Interface(), nil
	}
	req, err := newMsg(md.Input())
	if err != nil {
		return nil, err
	}
	if body != "" {
		if err := protojson.Unmarshal([]byte(body), req); err != nil {
			return nil, err
		}
	}
	full := "/" + svcName + "/" + mName
	if md.IsStreamingClient() {
		return nil, errors.New(full + " streams requests; not supported here")
	}
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: md.IsStreamingServer()}, full)
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(req); err != nil {
		return nil, err
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	var out []proto.Message
	for {
		resp, err := newMsg(md.Output())
		if err != nil {
			return nil, err
		}
		if err := st.RecvMsg(resp); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, resp)
		if !md.IsStreamingServer() {
			return out, nil
		}
	}
}
