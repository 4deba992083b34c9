package controller_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
)

// encryptionPair starts two controllers, on two embedded etcd members, in
// one process: one storing secrets in clear (as before encryption), one
// sealing them with a key file.
func encryptionPair(b *testing.B) (plain, sealed *controllertest.Env) {
	kr, _, err := atrest.EnsureKeyFile(filepath.Join(b.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		b.Fatal(err)
	}
	return controllertest.Start(b, controllertest.Options{}), controllertest.Start(b, controllertest.Options{KeyProvider: kr})
}

func appWithSecret(name string) *edgeproto.App {
	return &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: name, Version: "1"},
		Deployment: "docker", ImagePath: "registry.example/app:1", AccessPorts: "tcp:80",
		Annotations: map[string]string{"team": "blue"},
		EnvVars: []*edgeproto.EnvVar{{Name: "MODE", Value: "prod"},
			{Name: "DB_PASSWORD", Secret: true, SecretValue: "s3cr3t-" + name}, {Name: "API_TOKEN", Secret: true, SecretValue: "tok-" + name}}}
}

// BenchmarkEncryptionUpdate alternates an App update (with secret env
// vars) through the API of a controller without encryption and one with
// it, in one loop, so that both see the same machine load, and reports
// both rates and the cost of encryption (sealed time / plain time - 1).
func BenchmarkEncryptionUpdate(b *testing.B) {
	plain, sealed := encryptionPair(b)
	ctx := context.Background()
	key := appWithSecret("app").Key
	var clients [2]*clients
	for i, env := range []*controllertest.Env{plain, sealed} {
		clients[i] = clientsOf(env.Conn(env.OrgToken("dev")))
		if _, err := clients[i].apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: appWithSecret("app")}); err != nil {
			b.Fatal(err)
		}
	}
	var took [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			c := (i + j) % 2 // alternate which goes first
			t0 := time.Now()
			if _, err := clients[c].apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{
				App: &edgeproto.App{Key: key, ImagePath: fmt.Sprintf("image:%d", i)}, Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
				b.Fatal(err)
			}
			took[c] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(b.N)/took[0].Seconds(), "plain-updates/s")
	b.ReportMetric(float64(b.N)/took[1].Seconds(), "sealed-updates/s")
	b.ReportMetric(100*(took[1].Seconds()/took[0].Seconds()-1), "cost-%")
}

// BenchmarkEncryptionShow10k alternates, on 10,000 Apps with secrets in a
// controller without encryption and in one with it, a ShowApps through
// the API (served from the controller's watch-fed cache) and a
// Kind.List of the store (read from etcd, every value opened and decoded:
// what the cache does when it lists, and what a Show read from etcd
// would pay), and reports the cost of encryption on each.
func BenchmarkEncryptionShow10k(b *testing.B) {
	plain, sealed := encryptionPair(b)
	ctx := context.Background()
	const n = 10000
	envs := []*controllertest.Env{plain, sealed}
	for _, env := range envs {
		apps := store.NewKind[*edgeproto.App](env.Store)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 32)
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := apps.Create(ctx, appWithSecret(fmt.Sprintf("app%05d", i))); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	show := func(env *controllertest.Env) {
		s, err := clientsOf(env.Conn(env.AdminToken())).apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			a, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if a.GetApp().GetKey() != nil {
				got++
			}
		}
		if got != n {
			b.Fatalf("showed %d apps, want %d", got, n)
		}
	}
	list := func(env *controllertest.Env) {
		objs, _, err := store.NewKind[*edgeproto.App](env.Store).List(ctx)
		if err != nil || len(objs) != n {
			b.Fatalf("list: %d apps, %v", len(objs), err)
		}
	}
	var showT, listT [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			c := (i + j) % 2
			t0 := time.Now()
			show(envs[c])
			t1 := time.Now()
			list(envs[c])
			showT[c] += t1.Sub(t0)
			listT[c] += time.Since(t1)
		}
	}
	b.ReportMetric(showT[0].Seconds()/float64(b.N)*1000, "plain-show-ms")
	b.ReportMetric(showT[1].Seconds()/float64(b.N)*1000, "sealed-show-ms")
	b.ReportMetric(100*(showT[1].Seconds()/showT[0].Seconds()-1), "show-cost-%")
	b.ReportMetric(listT[0].Seconds()/float64(b.N)*1000, "plain-list-ms")
	b.ReportMetric(listT[1].Seconds()/float64(b.N)*1000, "sealed-list-ms")
	b.ReportMetric(100*(listT[1].Seconds()/listT[0].Seconds()-1), "list-cost-%")
}
