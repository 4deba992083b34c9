package local

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
)

// launchSpec is the command line and environment of an application.
type launchSpec struct {
	path string
	args []string
	vars []*edgeproto.EnvVar
	// hash identifies the configuration (command, arguments, environment
	// including secret values, declared ports), so an update restarts the
	// process only when it changed. It is an HMAC-SHA256 under the state
	// directory's key: without the key, it does not let anyone test
	// guesses of a secret value.
	hash string
}

// newLaunchSpec reads the command of app. A command with no arguments that
// holds spaces is split on them (no shell is involved). key is the state
// directory's key, for the configuration hash.
func newLaunchSpec(app *edgeproto.App, key []byte) (launchSpec, error) {
	if app == nil {
		return launchSpec{}, fmt.Errorf("%w: nil application", ErrInvalidObject)
	}
	cmd := strings.TrimSpace(app.GetCommand())
	args := app.GetArgs()
	if cmd == "" {
		return launchSpec{}, fmt.Errorf("%w: application %s has no command", ErrInvalidObject, shortName(app.GetKey().GetOrganization(), app.GetKey().GetName()))
	}
	if len(args) == 0 && strings.ContainsAny(cmd, " \t") {
		f := strings.Fields(cmd)
		cmd, args = f[0], f[1:]
	}
	for _, v := range app.GetEnvVars() {
		if v.GetName() == "" || strings.ContainsAny(v.GetName(), "=\x00") {
			return launchSpec{}, fmt.Errorf("%w: environment variable name %.64q", ErrInvalidObject, v.GetName())
		}
		if v.GetName() == MarkerEnv {
			return launchSpec{}, fmt.Errorf("%w: environment variable %s is set by the platform", ErrInvalidObject, MarkerEnv)
		}
		if strings.ContainsRune(v.GetValue(), 0) || strings.ContainsRune(v.GetSecretValue(), 0) {
			return launchSpec{}, fmt.Errorf("%w: environment variable %.64s holds a NUL byte", ErrInvalidObject, v.GetName())
		}
	}
	s := launchSpec{path: cmd, args: args, vars: app.GetEnvVars()}

	h := hmac.New(sha256.New, key)
	writeConfig(h, cmd, args, s.vars, app.GetPorts())
	s.hash = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// writeConfig writes what identifies a configuration to w, every field
// length-prefixed so that no two configurations write the same bytes.
func writeConfig(w io.Writer, cmd string, args []string, vars []*edgeproto.EnvVar, ports []*edgeproto.Port) {
	field := func(s string) { fmt.Fprintf(w, "%d:%s;", len(s), s) }
	field(cmd)
	for _, a := range args {
		field(a)
	}
	for _, v := range vars {
		field(v.GetName())
		field(strconv.FormatBool(v.GetSecret()))
		field(v.GetValue())
		field(v.GetSecretValue())
	}
	for _, pt := range ports {
		field(fmt.Sprintf("%d/%d-%d", pt.GetProto(), pt.GetInternalPort(), pt.GetEndPort()))
	}
}

// environ builds the process environment, later entries winning:
//
//   - the variables of this process named in inherit (PATH by default);
//   - HOME set to the working directory;
//   - the application's variables (a secret one gets its secret_value);
//   - PORT, the first host port; PORT_<internal> for each declared port
//     with an internal port, the host port it is reached on; for a range,
//     PORT_<internal>_END too;
//   - MarkerEnv, the marker of this launch.
func (s launchSpec) environ(inherit []string, work string, mapped []mappedPort, firsts []int, marker string) []string {
	var env []string
	for _, name := range inherit {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env, "HOME="+work)
	for _, v := range s.vars {
		val := v.GetValue()
		if v.GetSecret() {
			val = v.GetSecretValue()
		}
		env = append(env, v.GetName()+"="+val)
	}
	if len(firsts) > 0 {
		env = append(env, "PORT="+strconv.Itoa(firsts[0]))
	}
	for _, m := range mapped {
		if m.Internal <= 0 {
			continue
		}
		n := strconv.Itoa(int(m.Internal))
		env = append(env, "PORT_"+n+"="+strconv.Itoa(int(m.Public)))
		if m.PublicEnd != 0 {
			env = append(env, "PORT_"+n+"_END="+strconv.Itoa(int(m.PublicEnd)))
		}
	}
	return append(env, MarkerEnv+"="+marker)
}
