// Package optionsv1 holds the Go types of the options protoc-gen-go-edgekit
// reads (edgekit/options/v1/options.proto): skip_features on files and
// messages, list_actions on messages, object_key and atomic on fields. The
// plugin reads them; generated code never imports this package.
package optionsv1
