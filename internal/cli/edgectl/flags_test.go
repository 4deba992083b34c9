package edgectl_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/apifields"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fakecontroller"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

func loadKinds(t *testing.T) []*edgectl.Kind {
	t.Helper()
	kinds, err := edgectl.LoadKinds()
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// TestEveryMethodHasACommand checks that every method of every service of
// package edgeproto.v1 belongs to a kind, so that a new method is not
// silently left without a command.
func TestEveryMethodHasACommand(t *testing.T) {
	t.Parallel()
	covered := map[protoreflect.FullName]bool{}
	for _, k := range loadKinds(t) {
		for _, md := range []protoreflect.MethodDescriptor{k.Create, k.Update, k.Delete, k.Show, k.Watch, k.Reset} {
			if md != nil {
				covered[md.FullName()] = true
			}
		}
		for _, md := range k.Actions {
			covered[md.FullName()] = true
		}
	}
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("edgeproto.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				n++
				if md := sd.Methods().Get(j); !covered[md.FullName()] {
					t.Errorf("method %s has no edgectl command", md.FullName())
				}
			}
		}
		return true
	})
	if n < 38 {
		t.Errorf("found %d methods, expected the whole API", n)
	}
}

// fieldFlags returns the names of the flags of a command that are field
// flags (not -f, --no-wait, --clear, --watch, help).
func fieldFlags(cmd *cobra.Command) []string {
	var names []string
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "file", "no-wait", "clear", "watch", "help":
			return
		}
		names = append(names, f.Name)
	})
	slices.Sort(names)
	return names
}

func find(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	root := edgectl.NewRootCommand(edgectl.Options{})
	cmd, rest, err := root.Find(args)
	if err != nil || len(rest) != 0 {
		t.Fatalf("find %v: %v (rest %v)", args, err, rest)
	}
	return cmd
}

type schemer interface {
	FieldSchema() *fieldmap.Schema
}

// TestEveryKindOffersExactlyItsFields checks, for every kind and verb, that
// the field flags are exactly the schema leaves the verb allows: create
// every leaf users may set, update the key and the settable leaves (with
// -add and -remove where list actions are on), show every leaf as a filter.
func TestEveryKindOffersExactlyItsFields(t *testing.T) {
	t.Parallel()
	for _, k := range loadKinds(t) {
		schema := k.Object.New().Interface().(schemer).FieldSchema()
		want := map[string][]string{}
		for _, flag := range schema.Leaves() {
			f, _ := schema.Lookup(flag)
			a := apifields.Of(k.Desc().FullName(), flag)
			name := protoflags.FlagName(f.Path)
			want["show"] = append(want["show"], name)
			if a.CanCreate() {
				want["create"] = append(want["create"], name)
			}
			if a == apifields.Key || a.CanUpdate() {
				want["update"] = append(want["update"], name)
				if f.ListActions && a.CanUpdate() {
					want["update"] = append(want["update"], name+"-add", name+"-remove")
				}
			}
		}
		verbs := map[string]protoreflect.MethodDescriptor{"create": k.Create, "update": k.Update, "show": k.Show}
		for verb, md := range verbs {
			if md == nil {
				continue
			}
			if k.Singleton && verb == "show" {
				want[verb] = nil // ShowSettings takes no filter
			}
			slices.Sort(want[verb])
			if got := fieldFlags(find(t, verb, k.Name)); !slices.Equal(got, want[verb]) {
				t.Errorf("%s %s: flags\n%v\nwant\n%v", verb, k.Name, got, want[verb])
			}
		}
		if k.Delete != nil {
			var wantDel []string
			for _, flag := range schema.Leaves() {
				if apifields.Of(k.Desc().FullName(), flag) == apifields.Key {
					f, _ := schema.Lookup(flag)
					wantDel = append(wantDel, protoflags.FlagName(f.Path))
				}
			}
			if k.Streams() {
				wantDel = append(wantDel, "crm-override")
			}
			slices.Sort(wantDel)
			if got := fieldFlags(find(t, "delete", k.Name)); !slices.Equal(got, wantDel) {
				t.Errorf("delete %s: flags %v, want %v", k.Name, got, wantDel)
			}
		}
	}
}

// sample returns a command-line value for a field of an edgeproto object.
func sample(fd protoreflect.FieldDescriptor) string {
	if fd.IsMap() {
		return sample(fd.MapKey()) + "=" + sample(fd.MapValue())
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "true"
	case protoreflect.StringKind:
		return "v"
	case protoreflect.EnumKind:
		return strings.ToLower(protoflags.EnumString(fd.Enum(), fd.Enum().Values().Get(1).Number()))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "1.5"
	case protoreflect.MessageKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Duration":
			return "90s"
		case "google.protobuf.Timestamp":
			return "2025-01-02T03:04:05Z"
		}
		return "{}"
	}
	return "3"
}

// has reports whether the field at descs is populated in m.
func has(m protoreflect.Message, descs []protoreflect.FieldDescriptor) bool {
	for _, fd := range descs[:len(descs)-1] {
		if !m.Has(fd) {
			return false
		}
		m = m.Get(fd).Message()
	}
	return m.Has(descs[len(descs)-1])
}

// TestEveryCreateAndUpdateFlagReachesTheRequest sets each field flag of
// create and update of every kind, one at a time, against the fake
// controller, and checks the request carries the field (and, for update,
// its flag in fields).
func TestEveryCreateAndUpdateFlagReachesTheRequest(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	for _, k := range loadKinds(t) {
		if k.Create == nil && k.Update == nil {
			continue
		}
		md := k.Desc()
		schema := k.Object.New().Interface().(schemer).FieldSchema()
		for i, flag := range schema.Leaves() {
			sf, _ := schema.Lookup(flag)
			a := apifields.Of(md.FullName(), flag)
			set, err := protoflags.New(md, schema, protoflags.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, _ := set.Lookup(sf.Path)
			name := fmt.Sprintf("n%d", i)
			key := []string{}
			if !k.Singleton {
				key = []string{name, "--key.organization", "o"}
				if md.FullName() == "edgeproto.v1.TrustPolicyException" || md.FullName() == "edgeproto.v1.Flavor" {
					key = []string{name}
				}
			}
			if k.Create != nil && a.CanCreate() {
				args := append(append([]string{"create", k.Name}, key...), "--"+f.Name+"="+sample(f.Desc()), "--no-wait")
				if !k.Streams() {
					args = args[:len(args)-1]
				}
				if f.Name == "key.name" || f.Name == "key.organization" {
					args = []string{"create", k.Name, "--" + f.Name, sample(f.Desc()) + name}
				}
				if r := run(t, srv, args...); r.code != 0 {
					t.Errorf("%v: exit %d: %s", args, r.code, r.err)
					continue
				}
				c, _ := srv.LastCall(string(k.Create.Name()))
				obj := c.Request.ProtoReflect().Get(c.Request.ProtoReflect().Descriptor().Fields().Get(0)).Message()
				if !has(obj, f.Descs) {
					t.Errorf("%v: the request lacks %s: %v", args, f.Path, c.Request)
				}
			}
			if k.Update != nil && a.CanUpdate() {
				if !k.Singleton {
					// The object to update.
					create := append([]string{"create", k.Name}, key...)
					create[len(create)-len(key)] = name + "u"
					if k.Streams() {
						create = append(create, "--no-wait")
					}
					run(t, srv, create...).ok(t)
					key[0] = name + "u"
				}
				args := append(append([]string{"update", k.Name}, key...), "--"+f.Name+"="+sample(f.Desc()))
				if r := run(t, srv, args...); r.code != 0 {
					t.Errorf("%v: exit %d: %s", args, r.code, r.err)
					continue
				}
				c, _ := srv.LastCall(string(k.Update.Name()))
				req := c.Request.ProtoReflect()
				obj := req.Get(req.Descriptor().Fields().Get(0)).Message()
				fields := req.Get(req.Descriptor().Fields().ByName("fields")).List()
				if !has(obj, f.Descs) || fields.Len() != 1 || fields.Get(0).String() != flag {
					t.Errorf("%v: request %v, want %s set and fields [%s]", args, c.Request, f.Path, flag)
				}
			}
		}
	}
}

func TestBadInputIsNamed(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	n := len(srv.Calls())
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"create", "clowdlet"}, `unknown kind "clowdlet" for edgectl create; kinds: flavor, cloudlet, clusterinst, app, appinst, trustpolicy, cloudletpool, trustpolicyexception; did you mean "cloudlet"?`},
		{[]string{"create"}, "edgectl create needs a kind: flavor, cloudlet"},
		{[]string{"create", "cloudletinfo"}, "edgectl cannot create a cloudletinfo"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "edgectl"`},
		{[]string{"create", "cloudlet", "x", "--platfrom-type", "fake"}, "unknown flag: --platfrom-type"},
		{[]string{"create", "cloudlet", "x", "--maintenance-state", "sleepy"}, `invalid argument "sleepy" for "--maintenance-state" flag: unknown value; want one of UNSPECIFIED, NORMAL_OPERATION`},
		{[]string{"create", "cloudlet", "x", "--num-dynamic-ips", "many"}, `invalid argument "many" for "--num-dynamic-ips" flag`},
		{[]string{"create", "cloudlet", "x", "--env-vars", "novalue"}, `"--env-vars" flag: want key=value`},
		{[]string{"create", "cloudlet", "x", "--resource-quotas", "{bad"}, `"--resource-quotas" flag: want a JSON ResourceQuota`},
		{[]string{"create", "cloudlet", "x", "--key.name", "y"}, "the key field name is given twice"},
		{[]string{"create", "cloudlet", "nme=x"}, `bad key "nme=x"`},
		{[]string{"create", "cloudlet", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"create", "cloudlet"}, "which cloudlet? give a NAME or the --key.* flags"},
		{[]string{"create", "trustpolicyexception", "x"}, ""},
		{[]string{"update", "settings", "x"}, "unknown command"},
		{[]string{"show", "cloudlet", "-o", "toml"}, `unknown output format "toml"`},
		{[]string{"create", "cloudlet", "x", "-f", "/no/such/file"}, "/no/such/file"},
	}
	for _, c := range cases {
		r := run(t, srv, c.args...)
		if c.want == "" {
			continue
		}
		r.fails(t, edgectl.ExitUsage, c.want)
		if !strings.Contains(r.err, "Run 'edgectl") {
			t.Errorf("%v: no pointer to help in %q", c.args, r.err)
		}
	}
	calls := srv.Calls()[n:]
	for _, c := range calls {
		if !strings.HasSuffix(c.Method, "CreateTrustPolicyException") {
			t.Errorf("a refused command line was sent: %s %v", c.Method, c.Request)
		}
	}
	_ = proto.Clone
}
