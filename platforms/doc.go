// Package platforms builds the Platform an engine drives, by type name.
//
// Each platform package registers a Factory under its name in an init
// function (platforms/fake registers "fake"); a host imports the platform
// packages it supports, usually for their side effect only:
//
//	import _ "github.com/edgekit/edgekit/platforms/fake"
//
//	p, err := platforms.New(cloudlet.PlatformType, platforms.Config{Logger: log})
//
// New answers an unknown name with an *UnknownPlatformError that lists the
// registered names (errors.Is ErrUnknownPlatform). The registry is safe for
// concurrent use; registering a name twice is a programming error and
// panics at init time.
//
// A platform keeps no state of its own beyond what the engine hands it (the
// objects of each call and a Reservations store), so that any engine
// instance can pick up any object. The conformance suite in
// platforms/platformtest states what every platform must do.
package platforms
