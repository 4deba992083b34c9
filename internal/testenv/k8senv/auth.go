package k8senv

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// adminUser is the system:masters user of AdminKubeconfig and of the
// control plane's own components.
const adminUser = "k8senv-admin"

// newToken returns a random bearer token.
func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}

// writeTokenFile writes the API server's --token-auth-file: one line,
// token,user,uid,"group", for the admin.
func writeTokenFile(path, token string) error {
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, adminUser, adminUser)
	return os.WriteFile(path, []byte(line), 0o600)
}

// tokenUser is who a token of Kubeconfig authenticates as.
type tokenUser struct {
	name   string
	groups []string
}

// tokenWebhook authenticates the tokens Kubeconfig hands out: the API
// server sends it a TokenReview for every token its token file does not
// know (--authentication-token-webhook-config-file). It listens on a
// loopback port of the test process.
type tokenWebhook struct {
	mu     sync.Mutex
	tokens map[string]tokenUser
	srv    *http.Server
	url    string
}

func startTokenWebhook() (*tokenWebhook, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("k8senv: token webhook: %w", err)
	}
	w := &tokenWebhook{tokens: map[string]tokenUser{}, url: "http://" + l.Addr().String() + "/authenticate"}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.srv.Serve(l) }()
	return w, nil
}

// add returns a new token for user in groups.
func (w *tokenWebhook) add(user string, groups []string) string {
	tok := newToken()
	w.mu.Lock()
	w.tokens[tok] = tokenUser{name: user, groups: append([]string(nil), groups...)}
	w.mu.Unlock()
	return tok
}

func (w *tokenWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var review authv1.TokenReview
	if err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 1<<20)).Decode(&review); err != nil {
		http.Error(rw, "bad TokenReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	u, ok := w.tokens[review.Spec.Token]
	w.mu.Unlock()
	resp := authv1.TokenReview{}
	resp.APIVersion, resp.Kind = "authentication.k8s.io/v1", "TokenReview"
	if ok {
		resp.Status.Authenticated = true
		resp.Status.User = authv1.UserInfo{Username: u.name, UID: u.name, Groups: u.groups}
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&resp)
}

func (w *tokenWebhook) close() error { return w.srv.Close() }

// writeWebhookConfig writes the kubeconfig through which the API server
// reaches the token webhook.
func (w *tokenWebhook) writeConfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["webhook"] = &clientcmdapi.Cluster{Server: w.url}
	cfg.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "webhook", AuthInfo: "apiserver"}
	cfg.CurrentContext = "webhook"
	return clientcmd.WriteToFile(*cfg, path)
}

// kubeconfig returns a kubeconfig (YAML) for server, trusting caPEM, that
// authenticates with a bearer token.
func kubeconfig(server string, caPEM []byte, user, token string) []byte {
	name := "k8senv"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	ctx := strings.ReplaceAll(user, ":", "-") + "@" + name
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = ctx
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		// Write only marshals the structure built above.
		panic(fmt.Sprintf("k8senv: kubeconfig: %v", err))
	}
	return b
}
