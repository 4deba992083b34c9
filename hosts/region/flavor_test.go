package region

import (
	"context"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/local"
)

// The region's cloudlets run on the local platform, which reports its
// flavors in CloudletInfo: the flavor up creates must be the same shape,
// or show flavors and show cloudletinfos disagree.
func TestRegionFlavorIsTheLocalPlatformsShape(t *testing.T) {
	t.Parallel()
	p, err := local.New(local.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	info := &edgeproto.CloudletInfo{}
	cl := &edgeproto.Cloudlet{Key: cloudlets[0].key(), PlatformType: local.PlatformType}
	if err := p.GatherCloudletInfo(ctx, cl, info); err != nil {
		t.Fatal(err)
	}
	want := regionFlavor()
	for _, f := range info.GetFlavors() {
		if f.GetName() != Flavor {
			continue
		}
		if f.GetVcpus() != want.GetVcpus() || f.GetRamMb() != want.GetRamMb() || f.GetDiskGb() != want.GetDiskGb() {
			t.Fatalf("the region's flavor %s is %d vCPU, %d MB, %d GB; the local platform's is %d vCPU, %d MB, %d GB",
				Flavor, want.GetVcpus(), want.GetRamMb(), want.GetDiskGb(), f.GetVcpus(), f.GetRamMb(), f.GetDiskGb())
		}
		return
	}
	t.Skipf("this host is too small for the local platform to offer %s (it offers %v)", Flavor, info.GetFlavors())
}

// ensureFlavor creates the flavor, and corrects the size of the one an
// earlier version of up created (1024 MB).
func TestEnsureFlavorCreatesOrCorrectsIt(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{})
	a := &api{flavors: edgeproto.NewFlavorServiceClient(env.Conn(env.AdminToken()))}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	show := func() *edgeproto.Flavor {
		t.Helper()
		s, err := a.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{Filter: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: Flavor}}})
		if err != nil {
			t.Fatal(err)
		}
		f, err := last(collect(s, (*edgeproto.ShowFlavorsResponse).GetFlavor))
		if err != nil || f == nil {
			t.Fatalf("show flavor %s: %v, %v", Flavor, f, err)
		}
		return f
	}
	want := regionFlavor()
	same := func(f *edgeproto.Flavor) bool {
		return f.GetVcpus() == want.GetVcpus() && f.GetRamMb() == want.GetRamMb() && f.GetDiskGb() == want.GetDiskGb()
	}
	if err := ensureFlavor(ctx, a); err != nil {
		t.Fatal(err)
	}
	if f := show(); !same(f) {
		t.Fatalf("created %v, want the size of %v", f, want)
	}
	if _, err := a.flavors.UpdateFlavor(ctx, &edgeproto.UpdateFlavorRequest{Flavor: &edgeproto.Flavor{Key: want.GetKey(), RamMb: 1024},
		Fields: []string{edgeproto.FlavorFieldRamMb}}); err != nil {
		t.Fatal(err)
	}
	if err := ensureFlavor(ctx, a); err != nil {
		t.Fatal(err)
	}
	if f := show(); !same(f) {
		t.Fatalf("after ensureFlavor on a 1024 MB flavor: %v, want the size of %v", f, want)
	}
	if err := ensureFlavor(ctx, a); err != nil {
		t.Fatalf("again: %v", err)
	}
}
