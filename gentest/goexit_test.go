package gentest_test

import "runtime"

var runtimeGoexit = runtime.Goexit
