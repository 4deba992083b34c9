package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/region"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

// up --kubeconfig, against a real control plane with one simulated node:
// the region gets the cloudlet operator/k8s1 on the kubernetes platform,
// served by the CCRM, READY, and the FLUIDOS node provider-k8s on the
// cluster; the tour deploys its image App there too (READY when the pods
// are), buys from provider-k8s the reference-format database (ACTIVE, its
// endpoint db-service.<namespace>.svc.cluster.local:3306) and a K8Slice,
// releases them, and their namespaces leave the cluster; and neither the
// kubeconfig's credentials, nor the database's password, nor any
// ServiceAccount token appears in up's output, the tour's, the processes'
// logs, the state directory, nor edgectl's Show output.
func TestUpWithKubeconfigAddsAKubernetesCloudlet(t *testing.T) {
	env := k8senv.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	if err := env.AddNode(ctx, k8senv.Node{Name: "up-node", CPU: "4", Memory: "8Gi", Pods: 50}); err != nil {
		t.Fatalf("adding a node: %v", err)
	}
	kc := env.AdminKubeconfig()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, ai := range cfg.AuthInfos {
		if ai.Token != "" {
			token = ai.Token
		}
	}
	if len(token) < 16 {
		t.Fatalf("the admin kubeconfig carries no bearer token to look for (%d bytes)", len(token))
	}
	kcFile := filepath.Join(t.TempDir(), "cluster.kubeconfig")
	if err := os.WriteFile(kcFile, kc, 0o600); err != nil {
		t.Fatal(err)
	}

	s := newSandbox(t)
	up := s.startUp("--kubeconfig", kcFile)
	up.waitLine("cloudlet operator/k8s1", 90*time.Second)
	ready := up.waitLine("region ready in", 90*time.Second)
	t.Logf("ready: %s", ready)
	up.waitLine("Ctrl-C stops the region", 10*time.Second)
	if !strings.Contains(up.output(), "READY, served by the CCRM on the kubernetes platform") {
		t.Errorf("up did not report k8s1 READY on the kubernetes platform:\n%s", up.output())
	}
	info, err := region.ReadInfo(s.state)
	if err != nil {
		t.Fatal(err)
	}
	out := s.run(30*time.Second, ctlBin, "show", "cloudlets")
	if !strings.Contains(out, "k8s1") || strings.Count(out, "READY") != 3 {
		t.Fatalf("show cloudlets: want edge1, offsite1 and k8s1 READY:\n%s", out)
	}
	shown := s.run(30*time.Second, ctlBin, "show", "cloudlets", "-o", "json")

	if _, ok := info.Nodes[region.KubernetesProvider]; !ok || info.KubeconfigFile != kcFile {
		t.Fatalf("region.json: nodes %v, kubeconfig file %q: want the node %s and %s", info.Nodes, info.KubeconfigFile, region.KubernetesProvider, kcFile)
	}

	// The Service's password reaches the cluster only in the Secret of
	// the blueprint: watched from before the tour, to look for it after.
	admin, err := k8s.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	secrets := watchSecrets(t, admin, allocator.LabelContract, "password")

	tour := s.run(8*time.Minute, edgekitBin, "tour", "--state-dir", s.state)
	for _, want := range []string{
		"k8s1      CCRM  ClusterInst tour-k8s1         READY",
		"k8s1      CCRM  AppInst     tour-web-k8s1     READY",
		"runs in the cluster: [ek-tour-web-k8s1-",
		"tour-web-k8s1     DELETE_DONE", "tour-k8s1         DELETE_DONE",
		"App tour-image deleted",
		// The key-value Service of the provider node, as without a cluster.
		"solver tour-kv deleted",
		// The reference-format database and the slice of the node on the
		// cluster.
		`consumer bought "provider-k8s-service-mysql" from provider-k8s`,
		`consumer bought "provider-k8s-k8slice" from provider-k8s`,
		"password present (not shown)", "handed over (present, not shown",
		"solver tour-mysql deleted", "solver tour-slice deleted",
		"the tour is done",
	} {
		if !strings.Contains(tour, want) {
			t.Errorf("the tour's output lacks %q", want)
		}
	}
	if n := strings.Count(tour, " from provider-k8s\n"); n != 2 {
		t.Errorf("the tour reports %d contracts bought from provider-k8s, want 2 (the database and the slice)", n)
	}
	if t.Failed() {
		t.Fatalf("the tour:\n%s", tour)
	}
	// The database: ACTIVE, its endpoint the Service on 3306 by its
	// cluster DNS name, in a namespace that the release removed; the
	// slice: a namespace of its own, removed too.
	endpoint := regexp.MustCompile(`allocation (\S+): credentials handed over: endpoints db-service\.([a-z0-9-]+)\.svc\.cluster\.local:3306, user tour, database tour, password present`).FindStringSubmatch(tour)
	slice := regexp.MustCompile(`allocation (\S+): a kubeconfig of namespace ([a-z0-9-]+) handed over`).FindStringSubmatch(tour)
	if endpoint == nil || slice == nil || endpoint[2] == slice[2] {
		t.Fatalf("the tour names no endpoint db-service.<namespace>.svc.cluster.local:3306, or no slice's namespace, or the same one:\n%s", tour)
	}
	for _, b := range [][]string{endpoint, slice} {
		if !strings.Contains(tour, "allocation "+b[1]+" ACTIVE") || !strings.Contains(tour, "allocation "+b[1]+" RELEASED") {
			t.Errorf("the tour does not report allocation %s ACTIVE then RELEASED", b[1])
		}
		if !strings.Contains(tour, "namespace "+b[2]+": gone from the cluster") {
			t.Errorf("the tour does not report namespace %s gone", b[2])
		}
		if _, err := admin.CoreV1().Namespaces().Get(ctx, b[2], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s after the tour: %v, want not found", b[2], err)
		}
	}
	passwords := secrets()
	if len(passwords) == 0 {
		t.Fatal("no Secret of a contract carried a password during the tour: the database's Secret was not seen")
	}

	up.interrupt(60 * time.Second)
	s.checkStopped(info, nil, nil)
	// The secrets: the region's kubeconfig's token, the database's
	// password, and the slice's token (a JWT, as every ServiceAccount
	// token: no JWT at all in what the user reads or the logs).
	leaks := func(what, text string) {
		if strings.Contains(text, token) {
			t.Errorf("%s holds the kubeconfig's token", what)
		}
		for _, pw := range passwords {
			if strings.Contains(text, pw) {
				t.Errorf("%s holds the database's password", what)
			}
		}
	}
	for what, text := range map[string]string{"up's output": up.output(), "show cloudlets -o json": shown, "the tour's output": tour} {
		leaks(what, text)
		if strings.Contains(text, jwtHeader) {
			t.Errorf("%s holds a JWT", what)
		}
	}
	// Every file up and its processes wrote: logs, ready files, etcd's
	// data (the controller stores the cloudlet; etcd's files are binary,
	// but the token would be there in clear if stored unredacted: the
	// check is on logs and text the user reads, so etcd is left out).
	err = filepath.WalkDir(s.state, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "etcd" {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 || strings.HasPrefix(d.Name(), "edgekit") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.state, path)
		leaks(rel, string(data))
		if strings.HasSuffix(path, ".log") && strings.Contains(string(data), jwtHeader) {
			t.Errorf("%s holds a JWT", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A kubeconfig that cannot be used stops up before it starts anything,
// with one line naming the file and not quoting its content.
func TestUpWithABadKubeconfigSaysWhichInOneLine(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.yaml")
	if err := os.WriteFile(garbage, []byte("token: s3cr3t-not-a-kubeconfig\n\tclusters: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noServer := filepath.Join(dir, "noserver.yaml")
	if err := os.WriteFile(noServer, []byte("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: s3cr3t-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(dir, "missing.yaml"), garbage, noServer} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s := newSandbox(t)
			out, err := s.try(60*time.Second, edgekitBin, "up", "--state-dir", s.state, "--base-port", "0", "--kubeconfig", file)
			if err == nil {
				t.Fatalf("up with --kubeconfig %s succeeded:\n%s", file, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "kubeconfig "+file) {
				t.Fatalf("up printed %d lines, want one naming the kubeconfig %s:\n%s", len(lines), file, out)
			}
			if strings.Contains(out, "s3cr3t") {
				t.Errorf("up quoted the kubeconfig's content: %s", out)
			}
			if _, err := os.Stat(s.state); err == nil {
				t.Errorf("up created the state directory %s before failing", s.state)
			}
			if ps := s.processes(); len(ps) > 0 {
				t.Errorf("processes run under the sandbox: %v", ps)
			}
		})
	}
}

// jwtHeader starts every JSON Web Token: base64 of `{"alg":`.
const jwtHeader = "eyJhbGciOi"

// watchSecrets watches, from now, the Secrets of every namespace that
// carry label, and returns a function that stops the watch and returns
// the values of key they held, all distinct. The watch is stopped at the
// test's end if not before.
func watchSecrets(t *testing.T, cs k8s.Interface, label, key string) func() []string {
	t.Helper()
	w, err := cs.CoreV1().Secrets("").Watch(t.Context(), metav1.ListOptions{LabelSelector: label})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		values []string
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			sec, ok := ev.Object.(*corev1.Secret)
			if !ok {
				continue
			}
			v := string(sec.Data[key])
			mu.Lock()
			if v != "" && !slices.Contains(values, v) {
				values = append(values, v)
			}
			mu.Unlock()
		}
	}()
	stop := func() []string {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(values)
	}
	t.Cleanup(func() { stop() })
	return stop
}
