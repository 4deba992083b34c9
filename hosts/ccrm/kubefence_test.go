package ccrm_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// holdProxy is a TLS reverse proxy in front of the API server that holds
// the first write whose body matches until the test releases it: a write
// that left its replica and has not reached the API server yet.
type holdProxy struct {
	srv     *httptest.Server
	caPEM   []byte
	match   func(r *http.Request, body []byte) bool
	once    sync.Once
	reached chan struct{}
	release chan struct{}
	freed   sync.Once
	// answered is closed when the held write has its response.
	answered chan struct{}
	status   int
}

func newHoldProxy(t *testing.T, env *k8senv.Env, match func(*http.Request, []byte) bool) *holdProxy {
	t.Helper()
	up, err := url.Parse(env.Server())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData())
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	h := &holdProxy{match: match, reached: make(chan struct{}), release: make(chan struct{}), answered: make(chan struct{})}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := false
		if r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if h.match(r, body) {
				h.once.Do(func() { held = true })
			}
		}
		if !held {
			rp.ServeHTTP(w, r)
			return
		}
		close(h.reached)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		rp.ServeHTTP(rec, r)
		h.status = rec.status
		close(h.answered)
	}))
	h.srv.EnableHTTP2 = true
	h.srv.StartTLS()
	h.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	t.Cleanup(func() {
		h.Release()
		h.srv.CloseClientConnections()
		h.srv.Close()
	})
	return h
}

// Release lets the held write go on to the API server.
func (h *holdProxy) Release() { h.freed.Do(func() { close(h.release) }) }

// kubeconfig is kc pointed at the proxy.
func (h *holdProxy) kubeconfig(t *testing.T) func([]byte) []byte {
	return func(kc []byte) []byte {
		cfg, err := clientcmd.Load(kc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cfg.Clusters {
			c.Server, c.CertificateAuthorityData = h.srv.URL, h.caPEM
		}
		out, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// A replica paused (SIGSTOP) with its write of an update on the way to the
// API server loses its claim; the other replica takes the update over and
// a newer one is rolled out; when the paused replica's write arrives, the
// platform's fence refuses it (the resourceVersion it checked the fence at
// is a precondition of the write): the Deployment keeps the newer image
// and fence, also once the replica resumes.
func TestKubernetesPausedReplicasWriteIsFenced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := k8senv.ForTest(t)
	proxy := newHoldProxy(t, env, func(r *http.Request, body []byte) bool {
		return strings.Contains(r.URL.Path, "/deployments") && bytes.Contains(body, []byte("registry.example/web:2"))
	})
	r := newK8sRegion(t, ctx, "fence", k8sOptions{via: proxy.kubeconfig(t)})
	ready := edgeproto.TrackedState_TRACKED_STATE_READY
	apps, app := r.apps, r.app
	ck := r.readyCluster(t, ctx, "fence", 2, 2048)
	ak, ns, name := r.readyInstance(t, ctx, "web", ck)

	rollout := func(image string, wait bool) {
		t.Helper()
		if _, err := apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app.Key, ImagePath: image},
			Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
			t.Fatal(err)
		}
		p, err := ccrmtest.Wait(r.AppInst.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{NoWait: !wait, AppInst: &edgeproto.AppInst{
			Key: ak, Annotations: map[string]string{"image": image}}, Fields: []string{edgeproto.AppInstFieldAnnotations}}))
		if wait {
			r.want(t, "rollout of "+image, p, err, ready)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	claimKey := controller.ClaimKey(r.Env.Store.Prefix(), "AppInst", executor.KeyString(ak))
	claim := func() (string, int64) {
		resp, err := r.Env.Store.Client().Get(ctx, claimKey)
		if err != nil || len(resp.Kvs) == 0 {
			return "", 0
		}
		return string(resp.Kvs[0].Value), resp.Kvs[0].CreateRevision
	}

	// The write of image 2 is held on its way; its replica is paused.
	rollout("registry.example/web:2", false)
	select {
	case <-proxy.reached:
	case <-ctx.Done():
		t.Fatal("no replica wrote the Deployment of image 2")
	}
	holder, rev := claim()
	var paused *ccrmtest.Process
	for i, rp := range r.replicas {
		if holder == []string{"k0", "k1"}[i] {
			paused = rp
		}
	}
	if paused == nil {
		t.Fatalf("the update is claimed by %q, not by a replica of the test", holder)
	}
	paused.Pause()
	defer paused.Resume()
	controllertest.WaitFor(t, 30*time.Second, "the other replica to take the update over", func() bool {
		h, rv := claim()
		return h != "" && h != holder && rv > rev
	})
	controllertest.WaitFor(t, 60*time.Second, "the update READY by the other replica", func() bool {
		st, _ := r.appInstState(t, ctx, ak)
		return st == ready
	})
	rollout("registry.example/web:3", true)
	dep, err := r.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newest := dep.Annotations[kubernetes.AnnFence]

	// The paused replica's write arrives at the API server: refused, its
	// resourceVersion precondition failing, and nothing changes.
	proxy.Release()
	select {
	case <-proxy.answered:
	case <-ctx.Done():
		t.Fatal("the held write never got its answer")
	}
	if proxy.status != http.StatusConflict {
		t.Errorf("the late write was answered %d, want %d (its resourceVersion precondition failed)", proxy.status, http.StatusConflict)
	}
	unchanged := func(when string) {
		t.Helper()
		dep, err := r.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:3" || dep.Annotations[kubernetes.AnnFence] != newest {
			t.Errorf("%s the Deployment has image %q and fence %s, want registry.example/web:3 and fence %s",
				when, img, dep.Annotations[kubernetes.AnnFence], newest)
		}
	}
	unchanged("after the late write")
	// The replica resumes and gives its update up (as fenced, or because
	// it finds its claim gone first): nothing changes either.
	paused.Resume()
	controllertest.WaitFor(t, 30*time.Second, "the resumed replica to give its update up", func() bool {
		for _, l := range strings.Split(paused.Log(), "\n") {
			if strings.Contains(l, `msg="operation failed"`) && strings.Contains(l, "op=update") {
				return true
			}
		}
		return false
	})
	unchanged("once the paused replica gave its update up")
	if st, errs := r.appInstState(t, ctx, ak); st != ready {
		t.Errorf("the instance is %v (%v) after the late write, want READY", st, errs)
	}
}
