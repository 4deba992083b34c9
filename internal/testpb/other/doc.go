// Package otherpb holds messages of a second Go package, so that the
// behaviour tests cover generated code reaching messages across packages.
package otherpb
