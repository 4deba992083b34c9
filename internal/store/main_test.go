package store_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every watch, cache and etcd member a test starts is stopped by its end.
// etcd's members talk to each other over HTTP connections that its own
// shutdown leaves to close in the background; those are not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	)
}
