package controller

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/internal/devtls"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Principal is who makes an API call: an organization's user or an admin.
type Principal struct {
	// Admin sees and changes everything.
	Admin bool
	// CCRM is an off-site resource manager: it may report Info for the
	// cloudlets without crm_on_edge, and nothing else.
	CCRM bool
	// Organization is the organization the caller acts for; empty for an
	// admin.
	Organization string
}

// String names the principal for logs ("admin", "org:dev1").
func (p Principal) String() string {
	switch {
	case p.Admin:
		return "admin"
	case p.CCRM:
		return "ccrm"
	}
	return "org:" + p.Organization
}

// owns reports whether the principal may see and change what org owns.
func (p Principal) owns(org string) bool {
	return p.Admin || (!p.CCRM && org != "" && p.Organization == org)
}

type principalKey struct{}

// PrincipalFrom returns the principal the auth interceptor put in ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// WithPrincipal returns ctx carrying p, for in-process callers of the
// service implementations (tests, embedders) that bypass the interceptor.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Tokens maps bearer tokens to principals. Tokens are kept only as SHA-256
// hashes, so a dump of the map does not reveal them. It is safe for
// concurrent use: tokens may be added while the API serves.
type Tokens struct {
	mu     sync.RWMutex
	byHash map[[sha256.Size]byte]Principal
}

// NewTokens returns an empty token map.
func NewTokens() *Tokens { return &Tokens{byHash: map[[sha256.Size]byte]Principal{}} }

// Add maps token to p.
func (t *Tokens) Add(token string, p Principal) { t.addHash(sha256.Sum256([]byte(token)), p) }

func (t *Tokens) addHash(h [sha256.Size]byte, p Principal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byHash[h] = p
}

// Lookup returns the principal of token.
func (t *Tokens) Lookup(token string) (Principal, bool) {
	if t == nil || token == "" {
		return Principal{}, false
	}
	h := sha256.Sum256([]byte(token))
	t.mu.RLock()
	defer t.mu.RUnlock()
	p, ok := t.byHash[h]
	return p, ok
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.byHash)
}

// ParseTokens reads a tokens file: one token per line, "<token> <who>",
// where who is "admin" or "org:<organization>" and token is either the
// token itself or "sha256:<hex>" of it (so the file need not hold the
// secret); who may also be "ccrm" for an off-site resource manager. Blank lines and lines starting with # are skipped. Any other
// line is an error naming its number.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := NewTokens()
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("tokens line %d: want \"<token> admin|org:<organization>\", got %d fields", n, len(fields))
		}
		var p Principal
		switch who := fields[1]; {
		case who == "admin":
			p.Admin = true
		case who == "ccrm":
			p.CCRM = true
		case strings.HasPrefix(who, "org:") && len(who) > len("org:"):
			p.Organization = strings.TrimPrefix(who, "org:")
		default:
			return nil, fmt.Errorf("tokens line %d: principal %q is neither admin nor org:<organization>", n, who)
		}
		tok := fields[0]
		if hexHash, ok := strings.CutPrefix(tok, "sha256:"); ok {
			b, err := hex.DecodeString(hexHash)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("tokens line %d: sha256: wants %d hex-encoded bytes", n, sha256.Size)
			}
			t.addHash([sha256.Size]byte(b), p)
			continue
		}
		if len(tok) < 16 {
			return nil, fmt.Errorf("tokens line %d: token shorter than 16 characters", n)
		}
		t.Add(tok, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	return t, nil
}

// LoadTokens reads the tokens file at path (see ParseTokens). The file
// must not be readable by others than its owner.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("tokens file %s is readable by group or others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	return ParseTokens(f)
}

// NewToken returns a random token (32 bytes, URL-safe base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// EnsureAdminToken returns the admin token stored in path, creating the
// file (mode 0600) with a new token when it does not exist.
func EnsureAdminToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("admin token file %s is empty", path)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// errUnauthenticated is the answer to a call without a known token; it
// says nothing about which part was wrong.
var errUnauthenticated = status.Error(codes.Unauthenticated, "missing or unknown bearer token")

// CCRMCertName is the certificate name (Common Name) a CCRM presents: a
// call on a TLS connection whose client certificate the controller
// verified and which is issued to this name is a CCRM's, without a token.
const CCRMCertName = "ccrm"

// authenticate finds the principal of the call's bearer token, or of its
// verified client certificate (see CCRMCertName).
func authenticate(ctx context.Context, tokens *Tokens) (Principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, tok, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "bearer") {
			continue
		}
		if p, ok := tokens.Lookup(strings.TrimSpace(tok)); ok {
			return p, nil
		}
	}
	if id, err := devtls.PeerFromContext(ctx); err == nil && id.Name == CCRMCertName {
		return Principal{CCRM: true}, nil
	}
	return Principal{}, errUnauthenticated
}

// publicMethod reports whether a method needs no token: health checks and
// server reflection.
func publicMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// userMethod reports whether a method belongs to the user API (the
// edgeproto.v1 services), as opposed to the resource managers' API.
func userMethod(fullMethod string) bool { return strings.HasPrefix(fullMethod, "/edgeproto.v1.") }

// authorizeMethod finds the caller of a method that needs one and checks
// that its kind of principal may call it: users and admins the user API,
// CCRMs and admins the resource managers' API. A method that authenticates
// by other means (the CRMs' notify stream, by cloudlet access key) is
// listed in Config.SelfAuthenticated and passes through.
func (c *Controller) authorizeMethod(ctx context.Context, method string) (context.Context, error) {
	if publicMethod(method) || c.selfAuth[method] {
		return ctx, nil
	}
	p, err := authenticate(ctx, c.tokens)
	if err != nil {
		return nil, err
	}
	if userMethod(method) == p.CCRM && !p.Admin {
		return nil, status.Errorf(codes.PermissionDenied, "%s may not call %s", p, method)
	}
	return WithPrincipal(ctx, p), nil
}

func (c *Controller) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := c.authorizeMethod(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (c *Controller) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := c.authorizeMethod(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	if ctx == ss.Context() {
		return handler(srv, ss)
	}
	return handler(srv, &principalStream{ServerStream: ss, ctx: ctx})
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *principalStream) Context() context.Context { return s.ctx }

// principal returns the caller of a user API call; the interceptor
// guarantees one, so its absence is an internal error.
func principal(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return Principal{}, status.Error(codes.Unauthenticated, "no principal in the call")
	}
	return p, nil
}
