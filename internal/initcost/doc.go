// Package initcost holds a test of what the generated code of edgeproto and
// fluidos costs at program start: a program that imports them and only
// marshals messages must not build the field-flag schemas or any other table
// of the edgekit files at init. It has no non-test code.
package initcost
